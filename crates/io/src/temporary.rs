//! The temporary-file registry: every temporary path an application creates is registered
//! while it exists ([`Temporary`]); an application that ends on a signal calls
//! [`remove_temporaries`] from its handling thread first (every `ir-*` tool does, on SIGINT,
//! SIGTERM and SIGHUP), so no temporary is left behind. The outputs being written
//! ([`crate::Staged`]) register here, and so do other temporary paths (the directory an
//! executable is built in).

use std::path::PathBuf;
use std::sync::Mutex;

/// Paths of the temporary files and directories that exist right now.
static TEMPORARIES: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn temporaries() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    // A panic elsewhere cannot leave the list inconsistent: recover it.
    TEMPORARIES.lock().unwrap_or_else(|p| p.into_inner())
}

/// A registered temporary path: listed for [`remove_temporaries`] until dropped. Dropping it
/// only unregisters the path; removing it is its owner's business.
#[derive(Debug)]
pub struct Temporary {
    path: PathBuf,
}

impl Temporary {
    /// Registers `path` (a file or a directory).
    pub fn register(path: impl Into<PathBuf>) -> Temporary {
        let path = path.into();
        temporaries().push(path.clone());
        Temporary { path }
    }
}

impl Drop for Temporary {
    fn drop(&mut self) {
        let mut list = temporaries();
        if let Some(i) = list.iter().rposition(|p| *p == self.path) {
            list.swap_remove(i);
        }
    }
}

/// Removes every registered temporary file and directory (with its contents), for a process
/// about to end on a signal. Errors are ignored: a path may already be gone.
pub fn remove_temporaries() {
    for p in temporaries().drain(..) {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.is_dir() => drop(std::fs::remove_dir_all(&p)),
            Ok(_) => drop(std::fs::remove_file(&p)),
            Err(_) => {}
        }
    }
}
