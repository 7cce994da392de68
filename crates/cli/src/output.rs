//! Writing outputs: stdout for `-`, otherwise with [`irkit_io::write_file`] (atomically for
//! a regular file, never leaving it half-written; directly for a device or a FIFO, never
//! replacing it).

use std::io::Write;
use std::path::Path;

use crate::report::Problems;

/// Prints `text` to stdout. A closed pipe (`| head`) ends the tool quietly with exit code 1;
/// any other failure (a full disk, `>/dev/full`) is a problem with a message. Never a panic.
pub fn print_stdout(text: &str, problems: &mut Problems) {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => problems.fail_quietly(),
        Err(e) => problems.push(format!("error: cannot write to stdout: {e}")),
    }
}

/// Writes `bytes` to `path` (`-` is stdout).
pub fn write_output(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if path.as_os_str() == "-" {
        let mut out = std::io::stdout().lock();
        out.write_all(bytes)?;
        return out.flush();
    }
    irkit_io::write_file(path, bytes)
}

/// [`write_output`], a failure recorded as a problem naming `path`.
pub fn write_or_report(path: &Path, bytes: &[u8], problems: &mut Problems) {
    if let Err(e) = write_output(path, bytes) {
        problems.push(format!("{}: cannot write: {e}", path.display()));
    }
}
