//! Differential tests of the back ends: every runnable program runs three ways, through the
//! interpreter (`ir-run --interp`), the Cranelift JIT (`ir-run`) and a native executable
//! (`ir-link --emit exe`, then the program), and the three must agree exactly: standard output,
//! exit code and standard error (the trap line, when there is one; for a program with NOIR
//! procs, the trap's kind: the interpreter locates a trap in the proc, native code in the
//! function the proc was lowered to).
//!
//! The programs: the examples (`examples/*.ir`, and each directory of `examples/` linked from
//! all its files) and the runnable cases of `tests/run/*.ir`, whose expectations are the
//! `; expect:` lines beside the input (`irkit_tests::expect`: exit code, standard output, trap,
//! standard error; `IRKIT_BLESS=1` rewrites them from the interpreter's run),
//! and every linker case of `tests/link/*/expected.ir` that exports `main` (no expectation
//! beyond agreement; a case linked for a collector, `--gc`, is left to `objects_gc.rs`), and random linked programs from `irkit-testgen` (module sets with a
//! `main`; seeds 0..RANDOM_SEEDS, `IRKIT_RANDOM_SEEDS` to change the count) through the
//! interpreter and the JIT (a program that uses `ptrtoint` may legitimately differ, since
//! addresses differ between back ends: about 1 in 1000 does; it only has to run). Also: the exe path reports a missing C compiler clearly.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use irkit_tests::expect::Expect;
use libtest_mimic::{Arguments, Failed, Trial};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// How a run ended, as compared across back ends.
#[derive(Debug, PartialEq, Eq)]
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl From<Output> for Run {
    fn from(o: Output) -> Run {
        Run {
            code: o.status.code(),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

impl Run {
    /// The run with its trap line cut to `trap: <kind>` (the location dropped).
    fn kind_only(self) -> Run {
        let stderr = match self.stderr.split_once(" in ") {
            Some((kind, _)) if kind.starts_with("trap: ") => format!("{kind}\n"),
            _ => self.stderr,
        };
        Run { stderr, ..self }
    }
}

/// Whether any of the program's modules defines a NOIR proc.
fn uses_procs(files: &[PathBuf]) -> bool {
    files.iter().any(|f| {
        std::fs::read_to_string(f).is_ok_and(|t| t.contains("= proc(") || t.contains("= proc {"))
    })
}

/// Whether any of `files` defines or uses a generic.
fn mentions_generics(files: &[PathBuf]) -> bool {
    files
        .iter()
        .any(|f| std::fs::read_to_string(f).is_ok_and(|t| t.contains("= generic")))
}

/// Extra options for every tool (`--link-stubs` for the linker cases that link stubs).
type Extra<'a> = &'a [&'a str];

fn run_interp(files: &[PathBuf], extra: Extra<'_>) -> Run {
    Command::new(env!("CARGO_BIN_EXE_ir-run"))
        .args(extra)
        .arg("--interp")
        .args(files)
        .output()
        .expect("ir-run runs")
        .into()
}

fn run_jit(files: &[PathBuf], extra: Extra<'_>) -> Run {
    Command::new(env!("CARGO_BIN_EXE_ir-run"))
        .args(extra)
        .args(files)
        .output()
        .expect("ir-run runs")
        .into()
}

fn run_exe(name: &str, files: &[PathBuf], extra: Extra<'_>) -> Result<Run, Failed> {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("backends");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let exe = dir.join(name.replace('/', "_"));
    let link = Command::new(env!("CARGO_BIN_EXE_ir-link"))
        .args(extra)
        .args(files)
        .arg("--emit")
        .arg("exe")
        .arg("-o")
        .arg(&exe)
        .output()
        .map_err(|e| e.to_string())?;
    if !link.status.success() {
        return Err(format!(
            "ir-link --emit exe failed: {}",
            String::from_utf8_lossy(&link.stderr)
        )
        .into());
    }
    let out = Command::new(&exe).output().map_err(|e| e.to_string())?;
    Ok(out.into())
}

/// Runs `files` three ways; checks agreement and the expectation.
fn check(
    name: &str,
    files: &[PathBuf],
    extra: Extra<'_>,
    expect: Option<(&Path, &Expect)>,
) -> Result<(), Failed> {
    let interp = run_interp(files, extra);
    let jit = run_jit(files, extra);
    let exe = run_exe(name, files, extra)?;
    if let Some((file, e)) = expect {
        // The optimized runs check the same expectation; only the plain ones write it.
        if irkit_tests::blessing() && !extra.contains(&"-O") {
            bless(file, e, &interp)?;
        }
        let code = e.exit_code();
        if interp.code != Some(code) {
            return Err(format!(
                "interpreter: exit code {:?}, expected {code}: {interp:?}",
                interp.code
            )
            .into());
        }
        let stdout = e.stdout.clone().unwrap_or_default();
        if interp.stdout != stdout {
            return Err(format!(
                "interpreter: stdout {:?}, expected {stdout:?}",
                interp.stdout
            )
            .into());
        }
        if let Some(kind) = &e.trap
            && !interp.stderr.starts_with(&format!("trap: {kind} in "))
        {
            return Err(format!(
                "interpreter: stderr {:?}, expected trap {kind}",
                interp.stderr
            )
            .into());
        }
        // The passes move instructions between functions and blocks: an optimized program's
        // trap has the expected kind, not necessarily the expected place.
        let located = |t: &str| t.split(" in @").next().unwrap_or_default().to_string();
        let optimized = extra.contains(&"-O");
        if let Some(line) = &e.stderr
            && if optimized {
                located(interp.stderr.trim_end()) != located(line)
            } else {
                interp.stderr.trim_end() != line
            }
        {
            return Err(
                format!("interpreter: stderr {:?}, expected {line:?}", interp.stderr).into(),
            );
        }
        if e.trap.is_none() && e.stderr.is_none() && !interp.stderr.is_empty() {
            return Err(format!("interpreter: unexpected stderr {:?}", interp.stderr).into());
        }
    }
    // A trap inside a proc is located by the interpreter in the proc itself, and in native
    // code in the function the proc was lowered to: there, only the kind has to agree.
    let (jit, exe, interp) = if uses_procs(files) {
        (jit.kind_only(), exe.kind_only(), interp.kind_only())
    } else {
        (jit, exe, interp)
    };
    if jit != interp {
        return Err(format!(
            "JIT and interpreter differ:\n  jit:    {jit:?}\n  interp: {interp:?}"
        )
        .into());
    }
    if exe != interp {
        return Err(format!(
            "executable and interpreter differ:\n  exe:    {exe:?}\n  interp: {interp:?}"
        )
        .into());
    }
    Ok(())
}

/// The run of `interp` as `file`'s expectations, written into it (`IRKIT_BLESS=1`). An
/// expected `result` (the entry's whole return value, which a process does not show) is kept:
/// `tests/tests/examples.rs` blesses it.
fn bless(file: &Path, e: &Expect, interp: &Run) -> Result<(), Failed> {
    let trap = interp
        .stderr
        .strip_prefix("trap: ")
        .and_then(|t| t.split(" in ").next())
        .map(|k| k.trim_end().to_string());
    let stdout = Some(interp.stdout.clone());
    let actual = Expect {
        result: e.result,
        exit: interp.code,
        stdout,
        stderr: e
            .stderr
            .as_ref()
            .map(|_| interp.stderr.trim_end().to_string()),
        trap,
    };
    let text = std::fs::read_to_string(file).map_err(|err| err.to_string())?;
    std::fs::write(file, actual.rewrite(&text)).map_err(|err| format!("cannot bless: {err}"))?;
    Ok(())
}

fn sorted_files(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|e| e == ext))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// How many generated programs run through the interpreter and the JIT.
const RANDOM_SEEDS: u64 = 24;

/// A generated module set, written as text files; run by the interpreter and the JIT.
fn random_program(seed: u64) -> Result<(), Failed> {
    use irkit_testgen::{Config, Entropy, module_set};
    let set = module_set(&mut Entropy::from_seed(seed), &Config::default());
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("backends-random-{seed}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let mut files = Vec::new();
    let mut uses_addresses = false;
    for (name, m) in &set.modules {
        let path = dir.join(format!("{}.ir", name.trim_end_matches(".irm")));
        let text = irkit_text::print(m);
        // Addresses differ between back ends: a result (or a trap) computed from one may differ
        // too, so such programs only have to run.
        uses_addresses |= text.contains("ptrtoint");
        std::fs::write(&path, text).map_err(|e| e.to_string())?;
        files.push(path);
    }
    let interp = run_interp(&files, &[]);
    let jit = run_jit(&files, &[]);
    if interp.stderr.starts_with("error:") {
        return Err(format!("the generated program does not run: {interp:?}").into());
    }
    let (jit, interp) = if uses_procs(&files) {
        (jit.kind_only(), interp.kind_only())
    } else {
        (jit, interp)
    };
    if jit != interp && !uses_addresses {
        return Err(format!(
            "seed {seed}: JIT and interpreter differ (files in {}):\n  jit:    {jit:?}\n  interp: {interp:?}",
            dir.display()
        )
        .into());
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = Vec::new();
    let seeds = std::env::var("IRKIT_RANDOM_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(RANDOM_SEEDS);
    for seed in 0..seeds {
        trials.push(Trial::test(format!("random::seed_{seed}"), move || {
            random_program(seed)
        }));
    }
    // Every example and run case, also linked with the link-time optimization passes (`-O`):
    // the same expectation holds on every back end.
    // Every program with generics also has its generic functions compiled once, with dynamic
    // dispatch (`--generics dynamic`): the same expectation holds.
    let dynamic: &[&str] = &["--generics", "dynamic"];
    for (prefix, extra) in [
        ("", &[][..]),
        ("optimized::", &["-O"][..]),
        ("dynamic_generics::", dynamic),
    ] {
        for ex in irkit_tests::expect::examples() {
            if extra == dynamic && !mentions_generics(&ex.files) {
                continue;
            }
            let name = ex.name.clone();
            trials.push(Trial::test(
                format!("{prefix}examples::{name}"),
                move || {
                    let file = ex.stating?;
                    let text = std::fs::read_to_string(&file).map_err(|e| e.to_string())?;
                    if !Expect::stated(&text) {
                        return Err(
                            format!("{} states no `; expect:` lines", file.display()).into()
                        );
                    }
                    let e = Expect::parse(&text)?;
                    check(
                        &format!("{prefix}example_{}", ex.name),
                        &ex.files,
                        extra,
                        Some((&file, &e)),
                    )
                },
            ));
        }
        for f in sorted_files(&repo().join("tests/run"), "ir") {
            if extra == dynamic && !mentions_generics(std::slice::from_ref(&f)) {
                continue;
            }
            let n = f
                .file_stem()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            trials.push(Trial::test(format!("{prefix}run::{n}"), move || {
                let text = std::fs::read_to_string(&f).map_err(|e| e.to_string())?;
                let e = Expect::parse(&text)?;
                let args = irkit_tests::expect::run_args(&text);
                let extra: Vec<&str> = extra
                    .iter()
                    .copied()
                    .chain(args.iter().map(String::as_str))
                    .collect();
                check(
                    &format!("{prefix}run_{n}"),
                    std::slice::from_ref(&f),
                    &extra,
                    Some((&f, &e)),
                )
            }));
        }
    }
    let mut link_cases: Vec<PathBuf> = std::fs::read_dir(repo().join("tests/link"))
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path().join("expected.ir")))
                .collect()
        })
        .unwrap_or_default();
    link_cases.sort();
    for f in link_cases {
        let Ok(text) = std::fs::read_to_string(&f) else {
            continue;
        };
        if !text.contains("#[export(\"main\")]") {
            continue;
        }
        // A case linked for a collector calls it: only `ir-link --gc boehm --emit exe` links
        // the collector's library, and tests/objects_gc.rs runs such programs.
        let args = f.with_file_name("args");
        if std::fs::read_to_string(&args).is_ok_and(|a| a.contains("--gc")) {
            continue;
        }
        let n = f
            .parent()
            .and_then(Path::file_name)
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        // The case's inputs, when they use generics, linked with their generic functions
        // shared: the same run as the expected (specialized) output's.
        let inputs: Vec<PathBuf> = sorted_files(f.parent().unwrap_or(Path::new(".")), "ir")
            .into_iter()
            .filter(|p| p.file_name().is_some_and(|n| n != "expected.ir"))
            .collect();
        if !inputs.is_empty() && mentions_generics(&inputs) {
            let (n, f) = (n.clone(), f.clone());
            trials.push(Trial::test(
                format!("dynamic_generics::link_cases::{n}"),
                move || {
                    check(&format!("dynamic_link_{n}"), &inputs, dynamic, None)?;
                    let (shared, cloned) = (
                        run_interp(&inputs, dynamic),
                        run_interp(std::slice::from_ref(&f), &[]),
                    );
                    if shared != cloned {
                        return Err(format!(
                            "shared generics differ from the expected output:\n  shared: \
                             {shared:?}\n  cloned: {cloned:?}"
                        )
                        .into());
                    }
                    Ok(())
                },
            ));
        }
        trials.push(Trial::test(format!("link_cases::{n}"), move || {
            check(
                &format!("link_{n}"),
                std::slice::from_ref(&f),
                &["--link-stubs"],
                None,
            )
        }));
    }
    trials.push(Trial::test("exe_without_c_compiler", || {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("backends-nocc");
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let out = dir.join("prog");
        let _ = std::fs::remove_file(&out);
        let o = Command::new(env!("CARGO_BIN_EXE_ir-link"))
            .arg(repo().join("examples/fib_recursive.ir"))
            .args(["--emit", "exe", "-o"])
            .arg(&out)
            .env("CC", "/nonexistent/irkit-cc")
            .output()
            .map_err(|e| e.to_string())?;
        let err = String::from_utf8_lossy(&o.stderr);
        if o.status.code() != Some(1)
            || !err.starts_with(
                "error: no C compiler to link with: cannot run `/nonexistent/irkit-cc`",
            )
            || err.lines().count() != 1
        {
            return Err(format!(
                "expected exit 1 and one clear line, got {:?}: {err}",
                o.status
            )
            .into());
        }
        if out.exists() || std::fs::read_dir(&dir).map(|d| d.count()).unwrap_or(0) != 0 {
            return Err("a failed exe link left files behind".into());
        }
        Ok(())
    }));
    trials.push(Trial::test("unknown_extern_traps_alike_in_interp_and_jit", || {
        // An executable cannot be linked with a C function that does not exist, but the
        // interpreter and the JIT both report the call as the same trap.
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("backends-extern");
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let f = dir.join("unknown_extern.ir");
        std::fs::write(
            &f,
            "#[extern(\"irkit_no_such_c_function\")]\n@nope: fn(i32) -> i32 = func\n\n\
             #[export(\"main\")]\n@main: fn() -> i32 = func {\n^entry:\n  \
             %r: i32 = call @nope(i32 1)\n  ret %r\n}\n",
        )
        .map_err(|e| e.to_string())?;
        let files = [f];
        let (interp, jit) = (run_interp(&files, &[]), run_jit(&files, &[]));
        let line = "trap: unknown extern function \"irkit_no_such_c_function\" in @main ^entry, \
                    instruction 0 (call %r)\n";
        if interp.code != Some(70) || interp.stderr != line || jit != interp {
            return Err(format!("interp: {interp:?}\njit: {jit:?}").into());
        }
        Ok(())
    }));
    trials.push(Trial::test("object_file_links_with_cc", || {
        // `--emit obj` is a plain object file: any C toolchain links it into a program.
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("backends-obj");
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let (obj, exe) = (dir.join("two.o"), dir.join("two"));
        let ex = repo().join("examples/two_module");
        let o = Command::new(env!("CARGO_BIN_EXE_ir-link"))
            .args([ex.join("main.ir"), ex.join("lib.ir")])
            .args(["--emit", "obj", "-o"])
            .arg(&obj)
            .output()
            .map_err(|e| e.to_string())?;
        if !o.status.success() {
            return Err(String::from_utf8_lossy(&o.stderr).into_owned().into());
        }
        let cc = Command::new("cc")
            .arg(&obj)
            .arg("-o")
            .arg(&exe)
            .output()
            .map_err(|e| e.to_string())?;
        if !cc.status.success() {
            return Err(String::from_utf8_lossy(&cc.stderr).into_owned().into());
        }
        let run = Command::new(&exe).output().map_err(|e| e.to_string())?;
        if run.status.code() != Some(42) {
            return Err(format!("expected exit 42, got {:?}", run.status).into());
        }
        Ok(())
    }));
    trials.push(Trial::test("run_without_main_is_bad_input", || {
        let o = Command::new(env!("CARGO_BIN_EXE_ir-run"))
            .arg(repo().join("examples/two_module/lib.ir"))
            .output()
            .map_err(|e| e.to_string())?;
        if o.status.code() != Some(1) {
            return Err(format!("expected exit 1, got {:?}", o.status).into());
        }
        Ok(())
    }));
    trials.push(Trial::test("interp_fuel_stops_an_endless_loop", || {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("fuel");
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let file = dir.join("loop.ir");
        std::fs::write(
            &file,
            "#[export(\"main\")]\n@main: fn() -> i32 = func {\n^entry:\n  jump ^loop\n^loop:\n  \
             jump ^loop\n}\n",
        )
        .map_err(|e| e.to_string())?;
        let o = Command::new(env!("CARGO_BIN_EXE_ir-run"))
            .args(["--interp", "--fuel", "100000"])
            .arg(&file)
            .output()
            .map_err(|e| e.to_string())?;
        let err = String::from_utf8_lossy(&o.stderr);
        if o.status.code() != Some(70) || !err.contains("trap: fuel exhausted in @main ^loop") {
            return Err(format!("expected the fuel trap, got {:?}: {err}", o.status).into());
        }
        Ok(())
    }));
    libtest_mimic::run(&args, trials).exit();
}
