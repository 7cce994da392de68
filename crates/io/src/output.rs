//! Writing an output safely, for every tool ([`write_file`], [`Staged`]):
//!
//! * A regular file (or a path that does not exist yet) is replaced atomically: the bytes go
//!   to a temporary file created in the destination's directory under a random name,
//!   exclusively and without following symlinks (the `tempfile` crate), then renamed over the
//!   path: a reader sees the old file or the whole new one, never a part. An existing file
//!   keeps its permission bits. On any error the temporary file is removed and the
//!   destination is untouched. The file is not synced to disk before the rename (as ld, lld
//!   and rustc do not): that wait was about a twentieth of a large link, and what a system
//!   crash could leave, a module cut short, every reader refuses by its hashes.
//! * Anything else that already exists at the path (`/dev/null`, `/dev/full`, a FIFO, a
//!   terminal, another device) is opened and written directly, never replaced: renaming over
//!   `/dev/null` would destroy it.
//!
//! Every temporary file is registered while it exists ([`crate::Temporary`]).

use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::temporary::Temporary;

/// Writes `bytes` to `path`: atomically for a regular file, directly for a device or FIFO.
pub fn write_file(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if is_device(path) {
        let mut f = std::fs::OpenOptions::new().write(true).open(path)?;
        f.write_all(bytes)?;
        return f.flush();
    }
    replace_with(path, |f| f.write_all(bytes))
}

/// Whether `path` is something [`write_file`] writes directly (a device or a FIFO), not a
/// regular file it replaces.
pub fn is_device(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|meta| !meta.is_file() && !meta.is_dir())
}

/// Replaces the regular file `path` (or creates it) atomically with what `fill` writes into
/// a fresh temporary file beside it: [`write_file`]'s rules for a regular file, for an output
/// produced as it is written.
fn replace_with(
    path: &Path,
    fill: impl FnOnce(&mut std::fs::File) -> std::io::Result<()>,
) -> std::io::Result<()> {
    stage_with(path, fill)?.commit()
}

/// An output written in full but not yet in its place: a temporary file beside the
/// destination (a regular file, or a path that does not exist yet), or the bytes in memory (a
/// device or a FIFO, which is written directly, so nothing reaches it before
/// [`Staged::commit`]). `commit` puts it in place with [`write_file`]'s rules; dropped
/// uncommitted, the temporary file is removed and the destination stays as it was. A caller
/// can write its output while it still checks what it wrote, and publish it only if the check
/// passes.
#[derive(Debug)]
#[must_use = "a staged output is removed when dropped; `commit` puts it in place"]
pub struct Staged {
    path: PathBuf,
    held: Held,
}

#[derive(Debug)]
enum Held {
    /// Fields drop in order: the file is removed before its registration for a signal ends.
    File {
        tmp: tempfile::NamedTempFile,
        permissions: Option<std::fs::Permissions>,
        _registered: Temporary,
    },
    Device(Vec<u8>),
}

impl Staged {
    /// Puts the output in place: renames the temporary file over the destination (which keeps
    /// its permission bits), or writes the bytes to the device or FIFO.
    pub fn commit(self) -> std::io::Result<()> {
        match self.held {
            Held::File {
                tmp, permissions, ..
            } => {
                if let Some(p) = permissions {
                    tmp.as_file().set_permissions(p)?;
                }
                tmp.persist(&self.path).map_err(|e| e.error)?;
                Ok(())
            }
            Held::Device(bytes) => {
                let mut f = std::fs::OpenOptions::new().write(true).open(&self.path)?;
                // Staged as a device; if a regular file took its place meanwhile, it is
                // replaced whole, as any regular output (writing into it would leave its old
                // tail after the new bytes).
                if f.metadata()?.is_file() {
                    drop(f);
                    return replace_with(&self.path, |f| f.write_all(&bytes));
                }
                f.write_all(&bytes)?;
                f.flush()
            }
        }
    }
}

/// Stages what `fill` writes for `path` ([`Staged`]): into a temporary file beside a regular
/// file, into memory for a device or FIFO.
pub fn stage_with(
    path: &Path,
    fill: impl FnOnce(&mut std::fs::File) -> std::io::Result<()>,
) -> std::io::Result<Staged> {
    match std::fs::metadata(path) {
        Ok(meta) => stage_file(path, fill, Some(meta.permissions())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => stage_file(path, fill, None),
        Err(e) => Err(e),
    }
}

/// [`Staged`] bytes for `path`, which [`is_device`]: held in memory until committed.
pub fn stage_bytes(path: &Path, bytes: Vec<u8>) -> Staged {
    Staged {
        path: path.to_path_buf(),
        held: Held::Device(bytes),
    }
}

fn stage_file(
    path: &Path,
    fill: impl FnOnce(&mut std::fs::File) -> std::io::Result<()>,
    permissions: Option<std::fs::Permissions>,
) -> std::io::Result<Staged> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
    // Removed when dropped, so on every error path below and when the stage is dropped;
    // registered for a signal meanwhile (held after its registration, so it is dropped, and
    // removed, before it).
    let prefix = format!(".{name}.");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    // Created with the mode the output will have (a new file: 0666 less the umask, as any
    // program's output; tempfile's own default, 0600, is for secrets).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = permissions.as_ref().map_or(0o666, |p| p.mode() & 0o7777);
        builder.permissions(std::fs::Permissions::from_mode(mode));
    }
    // tempfile's error names the random temporary path; the message names the output only
    // (the caller does), so it is the same on every run.
    let tmp = builder.tempfile_in(dir).map_err(|e| {
        let text = e.to_string();
        let text = text.split(" at path ").next().unwrap_or(&text).to_string();
        std::io::Error::new(e.kind(), text)
    })?;
    let registered = Temporary::register(tmp.path());
    let mut tmp = tmp;
    fill(tmp.as_file_mut())?;
    Ok(Staged {
        path: path.to_path_buf(),
        held: Held::File {
            tmp,
            permissions,
            _registered: registered,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::temporary::remove_temporaries;

    /// `remove_temporaries` removes every registered temporary of the process: the tests that
    /// write files run one at a time, so one cannot remove another's.
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

    fn serial() -> std::sync::MutexGuard<'static, ()> {
        SERIAL.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn dir() -> tempfile::TempDir {
        tempfile::tempdir().unwrap()
    }

    fn entries(d: &Path) -> usize {
        std::fs::read_dir(d).unwrap().count()
    }

    #[test]
    fn replaces_a_regular_file_and_leaves_no_temporary() {
        let _serial = serial();
        let d = dir();
        let p = d.path().join("x.irm");
        write_file(&p, b"one").unwrap();
        write_file(&p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        assert_eq!(entries(d.path()), 1);
    }

    #[test]
    fn a_failed_write_leaves_the_destination_and_no_temporary() {
        let _serial = serial();
        let d = dir();
        let p = d.path().join("sub");
        std::fs::create_dir_all(p.join("inner")).unwrap();
        assert!(write_file(&p, b"new").is_err());
        assert!(p.join("inner").is_dir());
        assert_eq!(entries(d.path()), 1);
    }

    #[test]
    fn a_staged_output_is_in_place_only_once_committed() {
        let _serial = serial();
        let d = dir();
        let p = d.path().join("out.irm");
        std::fs::write(&p, b"old").unwrap();
        // Dropped uncommitted: the destination is as it was, the temporary file gone.
        let staged = stage_with(&p, |f| f.write_all(b"new")).unwrap();
        assert_eq!(entries(d.path()), 2);
        drop(staged);
        assert_eq!(std::fs::read(&p).unwrap(), b"old");
        assert_eq!(entries(d.path()), 1);
        // Committed: replaced, nothing else left.
        let staged = stage_with(&p, |f| f.write_all(b"new")).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"old");
        staged.commit().unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new");
        assert_eq!(entries(d.path()), 1);
    }

    #[cfg(unix)]
    #[test]
    fn a_new_file_gets_the_usual_mode_not_a_private_one() {
        let _serial = serial();
        use std::os::unix::fs::PermissionsExt;
        let d = dir();
        let p = d.path().join("new.irm");
        write_file(&p, b"a").unwrap();
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        // 0666 less whatever umask the test runs under: at least the owner can read and
        // write, and it is not narrowed to 0600 unless the umask says so.
        let d2 = dir();
        let probe = d2.path().join("probe");
        std::fs::write(&probe, b"").unwrap();
        let usual = std::fs::metadata(&probe).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, usual);
    }

    #[cfg(unix)]
    #[test]
    fn registered_temporaries_are_removed_on_request() {
        let _serial = serial();
        let d = dir();
        let f = d.path().join("t.tmp");
        let sub = d.path().join("work");
        std::fs::write(&f, b"x").unwrap();
        std::fs::create_dir_all(sub.join("inner")).unwrap();
        let _a = Temporary::register(&f);
        let _b = Temporary::register(&sub);
        remove_temporaries();
        assert_eq!(entries(d.path()), 0);
    }

    #[test]
    fn a_missing_directory_is_reported_without_the_temporary_name() {
        let _serial = serial();
        let d = dir();
        let p = d.path().join("no/such/dir/x.irm");
        let e = write_file(&p, b"x").unwrap_err().to_string();
        assert!(!e.contains(".tmp"), "{e}");
        assert_eq!(e, write_file(&p, b"x").unwrap_err().to_string());
    }

    #[cfg(unix)]
    #[test]
    fn an_existing_file_keeps_its_mode() {
        let _serial = serial();
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
        let _serial = serial();
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
        let _serial = serial();
        let full = Path::new("/dev/full");
        if full.exists() {
            assert!(write_file(full, &[0u8; 1 << 16]).is_err());
            assert!(!std::fs::metadata(full).unwrap().is_file());
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_planted_symlink_is_replaced_not_followed() {
        let _serial = serial();
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
