//! Writing a file safely, for every tool that writes one.
//!
//! * A regular file (or a path that does not exist yet) is replaced atomically: the bytes go
//!   to a temporary file created in the destination's directory under a random name,
//!   exclusively and without following symlinks (the `tempfile` crate), which is synced and
//!   then renamed over the path. An existing file keeps its permission bits. On any error the
//!   temporary file is removed and the destination is untouched.
//! * Anything else that already exists at the path (`/dev/null`, `/dev/full`, a FIFO, a
//!   terminal, another device) is opened and written directly, never replaced: renaming over
//!   `/dev/null` would destroy it.

use std::io::Write as _;
use std::path::Path;

/// Writes `bytes` to `path`: atomically for a regular file, directly for a device or FIFO.
pub fn write_file(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    match std::fs::metadata(path) {
        Ok(meta) if !meta.is_file() && !meta.is_dir() => {
            let mut f = std::fs::OpenOptions::new().write(true).open(path)?;
            f.write_all(bytes)?;
            f.flush()
        }
        Ok(meta) => replace(path, bytes, Some(meta.permissions())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => replace(path, bytes, None),
        Err(e) => Err(e),
    }
}

fn replace(
    path: &Path,
    bytes: &[u8],
    permissions: Option<std::fs::Permissions>,
) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
    // Removed when dropped, so on every error path below.
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    if let Some(p) = permissions {
        tmp.as_file().set_permissions(p)?;
    }
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir() -> tempfile::TempDir {
        tempfile::tempdir().unwrap()
    }

    fn entries(d: &Path) -> usize {
        std::fs::read_dir(d).unwrap().count()
    }

    #[test]
    fn replaces_a_regular_file_and_leaves_no_temporary() {
        let d = dir();
        let p = d.path().join("x.irm");
        write_file(&p, b"one").unwrap();
        write_file(&p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        assert_eq!(entries(d.path()), 1);
    }

    #[test]
    fn a_failed_write_leaves_the_destination_and_no_temporary() {
        let d = dir();
        let p = d.path().join("sub");
        std::fs::create_dir_all(p.join("inner")).unwrap();
        assert!(write_file(&p, b"new").is_err());
        assert!(p.join("inner").is_dir());
        assert_eq!(entries(d.path()), 1);
    }

    #[cfg(unix)]
    #[test]
    fn an_existing_file_keeps_its_mode() {
        use std::os::unix::fs::PermissionsExt;
        let d = dir();
        let p = d.path().join("tool");
        write_file(&p, b"a").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o751)).unwrap();
        write_file(&p, b"b").unwrap();
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o751);
    }

    #[cfg(unix)]
    #[test]
    fn a_device_is_written_not_replaced() {
        let null = Path::new("/dev/null");
        let before = std::fs::metadata(null).unwrap();
        write_file(null, b"discarded").unwrap();
        let after = std::fs::metadata(null).unwrap();
        assert!(!after.is_file(), "/dev/null was replaced by a regular file");
        assert_eq!(before.file_type(), after.file_type());
    }

    #[cfg(unix)]
    #[test]
    fn a_full_device_reports_the_error() {
        let full = Path::new("/dev/full");
        if full.exists() {
            assert!(write_file(full, &[0u8; 1 << 16]).is_err());
            assert!(!std::fs::metadata(full).unwrap().is_file());
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_planted_symlink_is_replaced_not_followed() {
        let d = dir();
        let victim = d.path().join("victim");
        std::fs::write(&victim, b"precious").unwrap();
        let out = d.path().join("out.irm");
        std::os::unix::fs::symlink(&victim, &out).unwrap();
        // The output path itself is a symlink to a regular file: the link is replaced by the
        // new file (rename), the file it pointed to is untouched.
        write_file(&out, b"new").unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        assert_eq!(std::fs::read(&out).unwrap(), b"new");
    }
}
