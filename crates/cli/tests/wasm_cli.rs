//! `ir-wasm`: wasm modules compiled one at a time, linked and run on both back ends; bad input
//! exits 1 with one line naming the file; usage errors exit 2.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/wasm")
}

fn run(bin: &str, args: &[&str]) -> Output {
    let exe = match bin {
        "ir-wasm" => env!("CARGO_BIN_EXE_ir-wasm"),
        "ir-run" => env!("CARGO_BIN_EXE_ir-run"),
        "ir-link" => env!("CARGO_BIN_EXE_ir-link"),
        "ir-wast" => env!("CARGO_BIN_EXE_ir-wast"),
        other => panic!("unknown tool {other}"),
    };
    Command::new(exe)
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("tool runs")
}

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("irkit-wasm-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Compiles lib.wat and main.wat (with `--main`) into `t`; returns the two `.irm` paths.
fn compile(t: &Path, main_field: &str) -> (String, String) {
    let lib = t.join("lib.irm").display().to_string();
    let main = t.join("main.irm").display().to_string();
    let o = run(
        "ir-wasm",
        &[dir().join("lib.wat").to_str().unwrap(), "-o", &lib],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(
        "ir-wasm",
        &[
            dir().join("main.wat").to_str().unwrap(),
            "-o",
            &main,
            "--main",
            main_field,
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    (lib, main)
}

#[test]
fn two_modules_compile_link_and_run_alike_on_both_back_ends() {
    let t = temp_dir("run");
    let (lib, main) = compile(&t, "run");
    for backend in ["interp", "jit"] {
        let o = run("ir-run", &[&lib, &main, "--backend", backend]);
        assert_eq!(o.status.code(), Some(38), "{backend}: {}", stderr(&o));
    }
    // The same through ir-link's text output: the names of the mapping are there.
    let o = run("ir-link", &[&lib, &main, "--emit", "ir", "-o", "-"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("wasm:lib:sum"), "{text}");
    let _ = std::fs::remove_dir_all(&t);
}

#[test]
fn an_out_of_bounds_access_traps_on_both_back_ends() {
    let t = temp_dir("oob");
    let (lib, main) = compile(&t, "oob");
    for backend in ["interp", "jit"] {
        let o = run("ir-run", &[&lib, &main, "--backend", backend]);
        assert_eq!(o.status.code(), Some(70), "{backend}: {}", stderr(&o));
        assert!(stderr(&o).contains("trap"), "{backend}: {}", stderr(&o));
    }
    let _ = std::fs::remove_dir_all(&t);
}

#[test]
fn text_output_and_default_names() {
    let t = temp_dir("text");
    let wat = t.join("adder.wat");
    std::fs::write(&wat, "(module (func (export \"add\") (param i32 i32) (result i32) local.get 0 local.get 1 i32.add))").unwrap();
    let o = run("ir-wasm", &[wat.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(t.join("adder.irm").exists());
    let out = t.join("adder.ir");
    let o = run(
        "ir-wasm",
        &[
            wat.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--name",
            "a:b",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.contains("wasm:a%3Ab:add"), "{text}");
    // `--verify` (what debug builds always do) changes nothing in a translation that verifies.
    let checked = t.join("checked.ir");
    let o = run(
        "ir-wasm",
        &[
            wat.to_str().unwrap(),
            "-o",
            checked.to_str().unwrap(),
            "--name",
            "a:b",
            "--verify",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&checked).unwrap(), text);
    let _ = std::fs::remove_dir_all(&t);
}

#[test]
fn binary_input_from_a_file_or_stdin() {
    use std::io::Write;
    let t = temp_dir("binary");
    let wat = b"(module (func (export \"seven\") (result i32) i32.const 7))";
    let wasm = irkit_wasm::to_binary(wat).unwrap().into_owned();
    let path = t.join("seven.wasm");
    std::fs::write(&path, &wasm).unwrap();
    let out = t.join("seven.ir");
    let o = run(
        "ir-wasm",
        &[path.to_str().unwrap(), "-o", out.to_str().unwrap()],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.contains("wasm:seven:seven"), "{text}");
    let mut child = Command::new(env!("CARGO_BIN_EXE_ir-wasm"))
        .args(["-", "--name", "s", "-o", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&wasm).unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let m = irkit_format::ModuleView::from_bytes(&o.stdout)
        .unwrap()
        .materialize()
        .unwrap();
    assert!(m.find_export("wasm:s:seven").is_some());
    let _ = std::fs::remove_dir_all(&t);
}

#[test]
fn bad_input_exits_1_with_one_line_naming_the_file() {
    let t = temp_dir("bad");
    let cases: [(&str, &[u8], &str); 4] = [
        (
            "trunc.wasm",
            b"\0asm\x01\0\0\0\x01\x05",
            "invalid WebAssembly module at byte offset",
        ),
        (
            "invalid.wat",
            b"(module (func (result i32)))",
            "type mismatch",
        ),
        ("text.wat", b"(module (func", "invalid WebAssembly text"),
        (
            // Module `reexport` re-exporting its own `g` as `g`: a cycle.
            "reexport.wat",
            b"(module (import \"reexport\" \"g\" (global i32)) (export \"g\" (global 0)))",
            "is not supported yet",
        ),
    ];
    for (name, bytes, want) in cases {
        let p = t.join(name);
        std::fs::write(&p, bytes).unwrap();
        let o = run(
            "ir-wasm",
            &[
                p.to_str().unwrap(),
                "-o",
                t.join("out.irm").to_str().unwrap(),
            ],
        );
        assert_eq!(o.status.code(), Some(1), "{name}: {}", stderr(&o));
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{name}: {err}");
        assert!(err.starts_with(p.to_str().unwrap()), "{name}: {err}");
        assert!(err.contains(want), "{name}: {err}");
    }
    assert!(!t.join("out.irm").exists());
    let o = run("ir-wasm", &[t.join("missing.wasm").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let o = run(
        "ir-wasm",
        &[
            dir().join("main.wat").to_str().unwrap(),
            "-o",
            t.join("x.irm").to_str().unwrap(),
            "--main",
            "nope",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&t);
}

/// Unlinkable wasm programs are the linker's errors: a missing module or export, and an import
/// whose type is not the export's.
#[test]
fn unlinkable_programs_exit_1_naming_the_symbol() {
    let t = temp_dir("unlinkable");
    let (lib, main) = compile(&t, "run");
    let o = run("ir-link", &[&main, "--emit", "ir", "-o", "-"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("wasm:lib:"), "{}", stderr(&o));
    let wrong = t.join("wrong.wat");
    std::fs::write(
        &wrong,
        "(module (import \"lib\" \"sum\" (func $s (param i64) (result i64)))\n\
         (func (export \"go\") (result i32) i64.const 1 call $s i32.wrap_i64))",
    )
    .unwrap();
    let wrong_irm = t.join("wrong.irm");
    let o = run(
        "ir-wasm",
        &[
            wrong.to_str().unwrap(),
            "-o",
            wrong_irm.to_str().unwrap(),
            "--main",
            "go",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(
        "ir-link",
        &[&lib, wrong_irm.to_str().unwrap(), "--emit", "ir", "-o", "-"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("wasm:lib:sum"), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&t);
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(run("ir-wasm", &[]).status.code(), Some(2));
    assert_eq!(run("ir-wasm", &["x.wat", "--bogus"]).status.code(), Some(2));
    assert_eq!(run("ir-wasm", &["-"]).status.code(), Some(2));
}

/// C compiled to wasm (examples/wasm-c: two modules built by its `build.sh`, committed), each
/// translated by `ir-wasm`, linked by `ir-link --emit exe` and run: the checksum's low byte is
/// the same as the native build's (`cc -O2 lib.c main.c native.c` exits 40).
#[test]
fn c_compiled_to_two_wasm_modules_links_into_an_executable() {
    let t = temp_dir("c");
    let ex = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/wasm-c");
    let lib = t.join("lib.irm").display().to_string();
    let main = t.join("main.irm").display().to_string();
    let exe = t.join("prog").display().to_string();
    let o = run(
        "ir-wasm",
        &[ex.join("lib.wasm").to_str().unwrap(), "-o", &lib],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(
        "ir-wasm",
        &[
            ex.join("main.wasm").to_str().unwrap(),
            "-o",
            &main,
            "--main",
            "run",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run("ir-link", &[&lib, &main, "--emit", "exe", "-o", &exe]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = Command::new(&exe).output().expect("the executable runs");
    assert_eq!(o.status.code(), Some(40), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&t);
}

/// The larger program of examples/wasm-c (`prog.c`: a bytecode interpreter running a
/// quicksort and a hash table, its `prog.wasm` committed) translated, linked with `-O` into an
/// executable and run, and run by the interpreter: both exit as its native build does.
#[test]
fn the_larger_c_program_runs_as_natively() {
    let t = temp_dir("prog");
    let ex = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/wasm-c");
    let native = t.join("native");
    let o = Command::new("cc")
        .args(["-O2", "-DNATIVE_MAIN", "-o"])
        .arg(&native)
        .arg(ex.join("prog.c"))
        .output()
        .expect("cc runs");
    assert!(o.status.success(), "{}", stderr(&o));
    let expected = Command::new(&native).status().expect("runs").code();
    let irm = t.join("prog.irm").display().to_string();
    let exe = t.join("prog").display().to_string();
    let wasm = ex.join("prog.wasm");
    let o = run(
        "ir-wasm",
        &[wasm.to_str().unwrap(), "-o", &irm, "--main", "run"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(
        "ir-link",
        &[&irm, "-O", "--stats", "--emit", "exe", "-o", &exe],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // Its interpreter's dispatch loop ends in a case that returns: the loop Cranelift's
    // optimizer loses track of, whose invariants irkit moves (spec/backends.md, "Code
    // generation level").
    assert!(
        stderr(&o).contains("loops completed:     1 functions"),
        "{}",
        stderr(&o)
    );
    let o = Command::new(&exe).output().expect("the executable runs");
    assert_eq!(o.status.code(), expected, "{}", stderr(&o));
    let o = run("ir-run", &["--interp", &irm]);
    assert_eq!(o.status.code(), expected, "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&t);
}

/// C compiled to wasm by clang 19 (`tests/wasm/NAME.c` with `flags` beside the defaults; its
/// `NAME.wasm` is committed, and rebuilt from the source when `clang-19` is on the `PATH`),
/// translated, linked into an executable and run: it exits as the native build of the same C
/// (`cc -O2`) does, and so does the interpreter.
fn c_from_clang_19_runs_as_natively(name: &str, flags: &[&str]) {
    let t = temp_dir(name);
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/wasm")
        .join(format!("{name}.c"));
    let mut wasm = src.with_extension("wasm");
    let fresh = t.join(format!("{name}.wasm"));
    let built = Command::new("clang-19")
        .args(["--target=wasm32", "-O2"])
        .args(flags)
        .args(["-nostdlib", "-Wl,--no-entry", "-o"])
        .arg(&fresh)
        .arg(&src)
        .output();
    if built.is_ok_and(|o| o.status.success()) {
        wasm = fresh;
    }
    let native = t.join("native");
    let o = Command::new("cc")
        .args(["-O2", "-o"])
        .arg(&native)
        .arg(&src)
        .output()
        .expect("cc runs");
    assert!(o.status.success(), "{}", stderr(&o));
    let expected = Command::new(&native).status().expect("runs").code();
    let irm = t.join(format!("{name}.irm")).display().to_string();
    let exe = t.join(name).display().to_string();
    let o = run(
        "ir-wasm",
        &[wasm.to_str().unwrap(), "-o", &irm, "--main", "run"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run("ir-link", &[&irm, "--emit", "exe", "-o", &exe]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = Command::new(&exe).output().expect("the executable runs");
    assert_eq!(o.status.code(), expected, "{}", stderr(&o));
    let o = run("ir-run", &["--interp", &irm]);
    assert_eq!(o.status.code(), expected, "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&t);
}

/// Calls through function pointers (a table of them, one passed as an argument, one in a
/// struct, a sort callback) with clang 19's default flags: its default CPU enables reference
/// types, whose `call_indirect` carries a 5-byte table index.
#[test]
fn c_from_clang_19_with_function_pointers_runs_as_natively() {
    c_from_clang_19_runs_as_natively("fnptr", &[]);
}

/// Zeroing and copying loops and a struct copy under `-mbulk-memory` (clang 20's default):
/// `memory.fill` and `memory.copy`, overlapping ranges included.
#[test]
fn c_from_clang_with_bulk_memory_runs_as_natively() {
    c_from_clang_19_runs_as_natively("bulk", &["-mbulk-memory"]);
}

/// Loops clang vectorizes under `-msimd128` (`v128` loads and stores, `i32x4` and `f32x4`
/// arithmetic, splats, shifts, a comparison selecting lanes, the shuffles and lane extracts of
/// a reduction): the vector code runs as the native scalar build does.
#[test]
fn c_from_clang_19_with_simd_runs_as_natively() {
    c_from_clang_19_runs_as_natively("simd", &["-msimd128"]);
}

/// A script is text of any content: NUL bytes inside a block comment (as in the official
/// testsuite's `comments.wast`) do not stop `ir-wast`, which reads scripts as the testsuite
/// test does.
#[test]
fn ir_wast_reads_a_script_with_nul_bytes_in_a_comment() {
    let t = temp_dir("nul-script");
    let script = t.join("nul.wast");
    std::fs::write(
        &script,
        b"(module (func (export \"f\") (result i32) i32.const 7))\n(; a \0 NUL ;)\n\
          (assert_return (invoke \"f\") (i32.const 7))\n",
    )
    .unwrap();
    let o = run("ir-wast", &[script.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("2 passed, 0 failed"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let _ = std::fs::remove_dir_all(&t);
}
