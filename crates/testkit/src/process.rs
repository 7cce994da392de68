//! Running one measured command: its wall time, its CPU time and, where the system reports
//! them, its own peak resident set size, read from the kernel's accounting of that one child
//! (`wait4`).
//!
//! Nothing stands between the caller and the command: a wrapper such as `/usr/bin/time -v`
//! adds its own start and exit (about 0.7 ms here) to every wall time, which a 10 ms run
//! notices and a 2 s one does not, so ratios between short and long runs would be skewed.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What one run of a command took.
#[derive(Clone, Debug)]
pub struct Run {
    /// From start to exit.
    pub wall: Duration,
    /// User and system CPU time of the child, if the system reports it.
    pub cpu: Option<Duration>,
    /// Peak resident set size in KiB, if the system reports it.
    pub rss_kb: Option<u64>,
    /// It exited with status 0.
    pub success: bool,
    /// Its exit status (`None` when a signal ended it).
    pub code: Option<i32>,
    /// What it wrote to stderr.
    pub stderr: String,
}

/// Runs `cmd` once, to completion: stdin empty, stdout discarded, stderr kept for the caller's
/// error message.
pub fn run(cmd: &mut Command) -> Result<Run, String> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let t = Instant::now();
    let name = cmd.get_program().to_string_lossy().into_owned();
    let mut child = cmd.spawn().map_err(|e| format!("cannot run {name}: {e}"))?;
    // Read on another thread, so a chatty command never blocks on a full pipe.
    let mut pipe = child.stderr.take();
    let reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        if let Some(p) = pipe.as_mut() {
            let _ = p.read_to_end(&mut s);
        }
        String::from_utf8_lossy(&s).into_owned()
    });
    let (code, cpu, rss_kb) = reap(child)?;
    let wall = t.elapsed();
    let stderr = reader.join().unwrap_or_default();
    Ok(Run {
        wall,
        cpu,
        rss_kb,
        success: code == Some(0),
        code,
        stderr,
    })
}

/// How a reaped child ended: its exit code, CPU time and peak RSS.
type Reaped = (Option<i32>, Option<Duration>, Option<u64>);

/// Waits for `child`, with its CPU time and peak RSS from `wait4`'s resource usage (Linux
/// counts `ru_maxrss` in KiB).
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn reap(child: std::process::Child) -> Result<Reaped, String> {
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
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    let tv = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec.max(0) as u64) + Duration::from_micros(t.tv_usec.max(0) as u64)
    };
    let cpu = tv(usage.ru_utime) + tv(usage.ru_stime);
    Ok((code, Some(cpu), u64::try_from(usage.ru_maxrss).ok()))
}

/// Waits for `child` (no resource usage on this system).
#[cfg(not(target_os = "linux"))]
fn reap(mut child: std::process::Child) -> Result<Reaped, String> {
    let status = child.wait().map_err(|e| format!("cannot wait: {e}"))?;
    Ok((status.code(), None, None))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_is_measured_and_its_stderr_kept() {
        let r = run(Command::new("sh").args(["-c", "echo oops >&2; exit 3"])).unwrap();
        assert!(!r.success);
        assert_eq!(r.code, Some(3));
        assert_eq!(r.stderr, "oops\n");
        if cfg!(target_os = "linux") {
            assert!(r.rss_kb.is_some_and(|k| k > 0));
            assert!(r.cpu.is_some());
        }
    }
}
