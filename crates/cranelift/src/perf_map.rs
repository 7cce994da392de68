//! Perf maps (spec/backends.md, "Profiling JIT code"): `/tmp/perf-PID.map`, the text file
//! through which `perf report` (and other profilers) name the code of a process's JIT, one
//! line `START SIZE NAME` per function (hexadecimal address and size), as wasmtime and V8
//! write it.

use std::io::Write;
use std::path::PathBuf;

use irkit_backend::BackendError;

/// The perf map of this process.
pub fn path() -> PathBuf {
    PathBuf::from(format!("/tmp/perf-{}.map", std::process::id()))
}

/// Appends one line per function `(address, size, name)` to this process's perf map (created
/// if missing: a process whose JIT compiles several times adds to it).
pub(crate) fn append(
    functions: impl IntoIterator<Item = (usize, u32, String)>,
) -> Result<(), BackendError> {
    let mut text = String::new();
    for (addr, size, name) in functions {
        // A name is one line; perf splits at the second space, so spaces may stay.
        let name = name.replace(['\n', '\r'], " ");
        text.push_str(&format!("{addr:x} {size:x} {name}\n"));
    }
    let path = path();
    let fail = |e: std::io::Error| {
        BackendError::Codegen(format!("cannot write the perf map {}: {e}", path.display()))
    };
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(fail)?;
    f.write_all(text.as_bytes()).map_err(fail)
}
