//! Writing outputs: stdout for `-`, otherwise with [`irkit_format::write_file`] (atomically for
//! a regular file, never leaving it half-written; directly for a device or a FIFO, never
//! replacing it).

use std::io::Write;
use std::path::Path;

/// Writes `bytes` to `path` (`-` is stdout).
pub fn write_output(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if path.as_os_str() == "-" {
        let mut out = std::io::stdout().lock();
        out.write_all(bytes)?;
        return out.flush();
    }
    irkit_format::write_file(path, bytes)
}
