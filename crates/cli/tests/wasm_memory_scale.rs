//! A WebAssembly memory costs what the program touches, not what it declares (issue 37, "Size";
//! spec/wasm.md, "Linear memory"): a module declaring 65,536 initial pages (4 GiB) starts at
//! once and its process stays small, in the JIT and in an executable; the interpreter, whose
//! limit refuses 4 GiB, stays as small with 8,192 pages (512 MiB). (Before, the memory was
//! allocated and then zeroed byte by byte: 4.2 GB of memory and 10 to 19 s before `main`.)
//!
//! The program loops forever in `main` once the initializer has given it its memory; the test
//! reads the process's peak resident size (`VmHWM`) for a while, then kills it.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Far below the declared memory: the process's own code and data.
const MAX_RSS_KB: u64 = 100 * 1024;

/// A scratch directory for this test.
fn scratch(test: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("wasm-memory-{test}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

/// The module of `pages` initial pages whose `main` never returns, compiled by `ir-wasm`.
fn looping_module(dir: &Path, pages: u32) -> PathBuf {
    let wat = dir.join("big.wat");
    std::fs::write(
        &wat,
        format!(
            "(module (memory {pages}) (func (export \"main\") (result i32) (loop $l (br $l)) unreachable))\n"
        ),
    )
    .expect("write module");
    let irm = dir.join("big.irm");
    let o = Command::new(env!("CARGO_BIN_EXE_ir-wasm"))
        .arg(&wat)
        .arg("-o")
        .arg(&irm)
        .args(["--main", "main"])
        .output()
        .expect("ir-wasm runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    irm
}

/// The peak resident size of `cmd`'s process, in KiB, read for 1.5 s (the initializer runs
/// first, then `main` loops), after which the process is killed. It must still be running.
fn peak_rss_kb(cmd: &mut Command) -> u64 {
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starts");
    let status = format!("/proc/{}/status", child.id());
    let start = Instant::now();
    let mut peak = 0;
    while start.elapsed() < Duration::from_millis(1500) {
        std::thread::sleep(Duration::from_millis(50));
        let text = std::fs::read_to_string(&status).unwrap_or_default();
        let hwm = text
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok());
        if let Some(kb) = hwm {
            peak = peak.max(kb);
        }
    }
    let ended = child.try_wait().expect("waits");
    let _ = child.kill();
    let out = child.wait_with_output().expect("waits");
    assert!(
        ended.is_none(),
        "the program ended ({ended:?}): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(peak > 0, "no reading of {status}");
    peak
}

#[test]
fn sixty_five_thousand_pages_cost_nothing_untouched_in_the_jit_and_an_executable() {
    let dir = scratch("native");
    let irm = looping_module(&dir, 65536);
    let jit = peak_rss_kb(Command::new(env!("CARGO_BIN_EXE_ir-run")).arg(&irm));
    assert!(jit < MAX_RSS_KB, "JIT: {jit} KiB resident");

    let exe = dir.join("big");
    let o = Command::new(env!("CARGO_BIN_EXE_ir-link"))
        .arg(&irm)
        .args(["--emit", "exe", "-o"])
        .arg(&exe)
        .output()
        .expect("ir-link runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let native = peak_rss_kb(&mut Command::new(&exe));
    assert!(native < MAX_RSS_KB, "executable: {native} KiB resident");
}

#[test]
fn eight_thousand_pages_cost_nothing_untouched_in_the_interpreter() {
    let dir = scratch("interp");
    let irm = looping_module(&dir, 8192);
    let kb = peak_rss_kb(
        Command::new(env!("CARGO_BIN_EXE_ir-run"))
            .arg("--interp")
            .arg(&irm),
    );
    assert!(kb < MAX_RSS_KB, "interpreter: {kb} KiB resident");
}
