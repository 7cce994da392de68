//! Executables: the object file linked by the system C compiler (`cc`, or `$CC`), which also
//! brings the C runtime (`putchar`, `malloc`, …) and `libm` (`fmod`).

use std::path::Path;
use std::process::Command;

use irkit_backend::BackendError;

/// The C compiler used as linker: `$CC` if set and non-empty, else `cc`.
pub fn linker() -> String {
    std::env::var("CC")
        .ok()
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| "cc".to_string())
}

/// Links object file `obj` into executable `out` with [`linker`]. A linker that cannot be run
/// is [`BackendError::NoLinker`]; one that fails is [`BackendError::Link`] with its message.
///
/// The C compiler is first asked to use the fastest linker on the `PATH`: mold, then LLVM's
/// `ld.lld` (on the bench's 12 MB object mold takes 28 ms, lld 51 ms, GNU `ld` 80 ms). If
/// such a link fails (a compiler that does not know the option, for one), the next is tried,
/// and last the object is linked without an option: that outcome counts.
pub fn link_executable(obj: &Path, out: &Path) -> Result<(), BackendError> {
    link_executable_with(obj, out, &[])
}

/// Like [`link_executable`], also linking `libraries` (`-lNAME` each, after `-lm`).
pub fn link_executable_with(
    obj: &Path,
    out: &Path,
    libraries: &[String],
) -> Result<(), BackendError> {
    for &(program, option) in FAST_LINKERS {
        if on_path(program) && run_linker(obj, out, Some(option), libraries).is_ok() {
            return Ok(());
        }
    }
    run_linker(obj, out, None, libraries)
}

/// Linkers faster than the C compiler's default, fastest first: the program looked for on the
/// `PATH`, and the option that asks the compiler for it.
const FAST_LINKERS: &[(&str, &str)] = &[("mold", "-fuse-ld=mold"), ("ld.lld", "-fuse-ld=lld")];

/// Whether `program` is a file in a directory of the `PATH` (a few `stat`s, once a link).
fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|d| d.join(program).is_file()))
}

fn run_linker(
    obj: &Path,
    out: &Path,
    option: Option<&str>,
    libraries: &[String],
) -> Result<(), BackendError> {
    let cc = linker();
    let mut command = Command::new(&cc);
    command.args(option).arg(obj).arg("-o").arg(out).arg("-lm");
    command.args(libraries.iter().map(|l| format!("-l{l}")));
    dies_with_parent(&mut command);
    let output = command.output().map_err(|e| {
        BackendError::NoLinker(format!(
            "cannot run `{cc}` ({e}); install a C compiler or set CC"
        ))
    })?;
    if !output.status.success() {
        // The object file is a temporary with a random name: say "the object file" instead,
        // so that the message is the same on every run.
        let msg = String::from_utf8_lossy(&output.stderr)
            .replace(&*obj.to_string_lossy(), "the object file")
            .replace(&*out.to_string_lossy(), "the executable");
        let first: Vec<&str> = msg
            .lines()
            .filter(|l| !l.trim().is_empty())
            .take(3)
            .collect();
        return Err(BackendError::Link(format!(
            "`{cc}` exited with {}: {}",
            output.status,
            first.join("; ")
        )));
    }
    Ok(())
}

/// Asks the child to receive SIGTERM when this process ends, however it ends (Linux), so a
/// tool stopped while `cc` runs does not leave it running on.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn dies_with_parent(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: the closure runs in the forked child before exec and calls only `prctl`, which
    // is async-signal-safe and allocates nothing.
    unsafe {
        command.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
}

/// Elsewhere the child may outlive a tool that is stopped.
#[cfg(not(target_os = "linux"))]
fn dies_with_parent(_command: &mut Command) {}

/// Compiles `m` and links it into the executable `out`, whose C `main` runs the function
/// exported as `entry` (the object goes to a temporary file beside `out`, removed afterwards).
pub fn build_executable(
    m: &irkit_core::Module,
    entry: &str,
    out: &Path,
) -> Result<(), BackendError> {
    build_executable_with_depth(m, entry, None, out)
}

/// Like [`build_executable`], with call depth limit `max_depth` (see
/// [`crate::emit_object_with`]).
pub fn build_executable_with_depth(
    m: &irkit_core::Module,
    entry: &str,
    max_depth: Option<usize>,
    out: &Path,
) -> Result<(), BackendError> {
    let opts = crate::CodegenOptions {
        entry: entry.to_string(),
        max_depth,
        ..crate::CodegenOptions::default()
    };
    build_executable_with(m, &opts, out).map(|_| ())
}

/// Like [`build_executable`], with the object compiled as [`crate::compile_object`] compiles
/// it (threads, code cache).
pub fn build_executable_with(
    m: &irkit_core::Module,
    opts: &crate::CodegenOptions,
    out: &Path,
) -> Result<crate::CodegenStats, BackendError> {
    let (bytes, stats) = crate::object::compile_object(m, opts)?;
    link_object(bytes, out, &opts.libraries).map(|()| stats)
}

/// Like [`build_executable_with`], for a module not verified yet: the object is compiled as
/// [`crate::compile_object_verifying`] compiles it (`verify` first, and nothing compiled or
/// written unless it passes).
pub fn build_executable_verifying<E: Send>(
    m: &irkit_core::Module,
    opts: &crate::CodegenOptions,
    out: &Path,
    verify: impl FnOnce() -> Result<(), E> + Send,
) -> Result<Result<crate::CodegenStats, BackendError>, E> {
    Ok(crate::object::compile_object_verifying(m, opts, verify)?
        .and_then(|(bytes, stats)| link_object(bytes, out, &opts.libraries).map(|()| stats)))
}

/// Links object file bytes `bytes` into the executable `out`, with `libraries` (the object
/// goes to a temporary file beside `out`, removed afterwards).
fn link_object(bytes: Vec<u8>, out: &Path, libraries: &[String]) -> Result<(), BackendError> {
    let dir = out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = out
        .file_name()
        .map_or_else(|| "a.out".into(), |n| n.to_string_lossy().into_owned());
    let obj = dir.join(format!(".{name}.{}.o", std::process::id()));
    std::fs::write(&obj, bytes)?;
    let r = link_executable_with(&obj, out, libraries);
    let _ = std::fs::remove_file(&obj);
    r
}
