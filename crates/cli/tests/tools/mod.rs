//! What the tests that drive outside tools (gdb, llvm-dwarfdump, addr2line, perf) share:
//! the repository, a scratch directory per test, whether a tool is installed, and running a
//! command that must succeed. Each test binary uses part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository's root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A fresh, empty directory for test `tag` of the tests of `kind` (`debug`, `perf` …).
pub fn scratch(kind: &str, tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("irkit-{kind}-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Whether `tool` runs; if not, the test is skipped (or fails under `IRKIT_REQUIRE_TOOLS=1`).
pub fn have(tool: &str) -> bool {
    let found = Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var_os("IRKIT_REQUIRE_TOOLS").is_none_or(|v| v != "1"),
            "{tool} is not installed (IRKIT_REQUIRE_TOOLS=1)"
        );
        eprintln!("skipped: {tool} is not installed");
    }
    found
}

/// Runs `cmd`, which must succeed.
pub fn run(cmd: &mut Command) -> Output {
    let o = cmd.output().expect("the tool runs");
    assert!(
        o.status.success(),
        "{cmd:?} failed: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// `o`'s standard output as text.
pub fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}
