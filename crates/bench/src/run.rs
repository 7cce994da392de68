//! Running one measured command: its wall time and, where the system reports it, its own peak
//! resident set size, read from the kernel's accounting of that one child (`wait4`).
//!
//! Nothing stands between the bench and the command: a wrapper such as `/usr/bin/time -v`
//! adds its own start and exit (about 0.7 ms here) to every wall time, which a 10 ms link
//! notices and a 2 s one does not, so ratios between short and long runs would be skewed.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What one run of a command took.
pub(crate) struct Run {
    pub(crate) wall: Duration,
    /// Peak resident set size in KiB, if the system reports it.
    pub(crate) rss_kb: Option<u64>,
    pub(crate) success: bool,
    pub(crate) stderr: String,
}

/// Runs `cmd args` (environment `env` added) once, to completion: stdout discarded, stderr
/// kept for the caller's error message.
pub(crate) fn run(cmd: &Path, args: &[String], env: &[(&str, &str)]) -> Result<Run, String> {
    let mut c = Command::new(cmd);
    c.args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let t = Instant::now();
    let mut child = c
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", cmd.display()))?;
    // Read on another thread, so a chatty command never blocks on a full pipe.
    let mut pipe = child.stderr.take();
    let reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        if let Some(p) = pipe.as_mut() {
            let _ = p.read_to_end(&mut s);
        }
        String::from_utf8_lossy(&s).into_owned()
    });
    let (success, rss_kb) = reap(child)?;
    let wall = t.elapsed();
    let stderr = reader.join().unwrap_or_default();
    Ok(Run {
        wall,
        rss_kb,
        success,
        stderr,
    })
}

/// Waits for `child`, with its peak RSS from `wait4`'s resource usage (Linux counts
/// `ru_maxrss` in KiB).
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn reap(child: std::process::Child) -> Result<(bool, Option<u64>), String> {
    let pid = child.id() as libc::pid_t;
    let mut status: libc::c_int = 0;
    // SAFETY: an all-zero `rusage` is a valid value of that plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: `pid` is our own unreaped child (std never waits for it: `child` is only
        // dropped, which does not wait), and both pointers are to live locals.
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if r == pid {
            break;
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(format!("cannot wait for process {pid}: {e}"));
        }
    }
    drop(child);
    let success = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
    Ok((success, u64::try_from(usage.ru_maxrss).ok()))
}

/// Waits for `child` (no resource usage on this system).
#[cfg(not(target_os = "linux"))]
fn reap(mut child: std::process::Child) -> Result<(bool, Option<u64>), String> {
    let status = child.wait().map_err(|e| format!("cannot wait: {e}"))?;
    Ok((status.success(), None))
}
