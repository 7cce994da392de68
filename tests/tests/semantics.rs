//! The semantics cases of `tests/semantics/*.ir` on every back end: one trial per file and back
//! end (`interp::NAME`, `jit::NAME`, `exe::NAME`). Each file is parsed and verified, and each of
//! its `; run:` lines (grammar: `irkit_tests::runtest`) calls a function with constant
//! arguments and checks what it gives, bit for bit:
//!
//! * **interp**: the reference interpreter's session (`irkit_interp::InterpSession`);
//! * **jit**: the Cranelift JIT's session (`irkit_cranelift::JitSession`), in this process;
//!   for the JIT and the executable, NOIR procs are lowered to functions first
//!   (`irkit_noir::lower_procs`), as `ir-run` and `ir-link` do, so a trap inside a proc is
//!   located differently there: a proc's trap lines state the kind only, or name the back end;
//! * **exe**: a native executable (`irkit_cranelift::build_executable`, linked by `cc` as
//!   `ir-link --emit exe` links; without a C compiler the trial fails, naming it) made of the
//!   case and a generated driver (`irkit_tests::driver`) that makes the calls and prints their
//!   results: one process runs every call expected to return, and each call expected to trap or
//!   exit runs in a process of its own, whose trap line or exit code is compared.
//!
//! A back end that no line of a file names has no trial for it. The calls of a file run in
//! order on one instance (a session): a case may use the state earlier calls left (the
//! executable runs a trapping call after the returning calls before it). The functions a line
//! calls are exported (under their own names) for the sessions, which call exports. `IRKIT_BLESS=1` rewrites, from the interpreter's results, the
//! expectation of each line that differs (a trap's place is written when the line gave one).
//!
//! The glue to each back end is one function (`verified`, through which every module given to
//! a back end passes, `interp_session`, `jit_session`, `build_exe`), so that a change of their
//! API is a change in one place.

use std::path::{Path, PathBuf};
use std::process::Command;

use irkit_backend::{Backend, Call, RunOptions, Session};
use irkit_core::{Module, Opcode, Payload};
use irkit_tests::driver::{self, DriverCall};
use irkit_tests::runtest::{self, Expected, RunLine, Target};
use libtest_mimic::{Arguments, Failed, Trial};

/// Parses `text` (named `name` in messages).
fn parse(text: &str, name: &str) -> Result<Module, String> {
    irkit_text::parse(text, name).map_err(|e| format!("does not parse:\n{e}"))
}

/// `m`, once the verifier accepts it: every module a back end is given comes through here.
fn verified(m: Module) -> Result<Module, String> {
    if let Err(errors) = irkit_core::verify::verify(&m) {
        let lines: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        return Err(format!("does not verify:\n{}", lines.join("\n")));
    }
    Ok(m)
}

/// `m` with its classes laid out and its object instructions lowered, as a link does for every
/// back end (spec/linking.md, "Objects"); then verified again.
fn objects_lowered(mut m: Module) -> Result<Module, String> {
    let every_function = irkit_link::objects::ObjectOptions::default();
    irkit_link::objects::lower_objects(&mut m, &every_function).map_err(|errors| {
        let lines: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        format!("objects cannot be lowered:\n{}", lines.join("\n"))
    })?;
    verified(m)
}

/// The interpreter's session with `m` loaded.
fn interp_session(m: Module) -> Result<Box<dyn Session>, String> {
    let mut s = irkit_interp::InterpBackend
        .session(&RunOptions::default())
        .map_err(|e| e.to_string())?;
    s.load(m).map_err(|e| e.to_string())?;
    Ok(s)
}

/// `m` with its NOIR procs lowered to functions: the step of the pipeline a native back end
/// needs first (spec/backends.md, "The contract"; `ir-run` and `ir-link` run it too).
fn procs_lowered(mut m: Module) -> Result<Module, String> {
    irkit_noir::lower_procs(&mut m).map_err(|e| e.to_string())?;
    Ok(m)
}

/// The JIT's session with `m` loaded.
fn jit_session(m: Module) -> Result<Box<dyn Session>, String> {
    let mut s = irkit_cranelift::Jit
        .session(&RunOptions::default())
        .map_err(|e| e.to_string())?;
    s.load(procs_lowered(m)?).map_err(|e| e.to_string())?;
    Ok(s)
}

/// `m` compiled and linked into the executable `out`, whose `main` runs the export `entry`.
fn build_exe(m: Module, entry: &str, out: &Path) -> Result<(), String> {
    irkit_cranelift::build_executable(&procs_lowered(m)?, entry, out).map_err(|e| e.to_string())
}

/// A case file: its text, its verified module and its run lines.
struct Case {
    path: PathBuf,
    name: String,
    text: String,
    module: Module,
    lines: Vec<RunLine>,
}

fn load(path: &Path) -> Result<Case, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let name = path
        .file_stem()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned();
    let lines = runtest::parse_lines(&text)?;
    if lines.is_empty() {
        return Err("the case has no `; run:` line".into());
    }
    let module = objects_lowered(verified(parse(&text, &format!("{name}.ir"))?)?)?;
    Ok(Case {
        path: path.to_path_buf(),
        name,
        text,
        module,
        lines,
    })
}

/// `m` with every function `lines` call exported under its own name (a session calls
/// exports), unless it already is.
fn with_exports(mut m: Module, lines: &[RunLine]) -> Result<Module, String> {
    for l in lines {
        let def = m
            .find_named(&l.func)
            .ok_or_else(|| format!("line {}: no function @{}", l.line, l.func))?;
        match m.find_export(&l.func) {
            Some(d) if d == def => {}
            Some(_) => {
                return Err(format!(
                    "line {}: another definition is exported as `{}`",
                    l.line, l.func
                ));
            }
            None => {
                m.add_decoration(
                    def,
                    Opcode::EXPORT,
                    Vec::new(),
                    Payload::Str(l.func.as_str().into()),
                )
                .map_err(|e| e.to_string())?;
            }
        }
    }
    Ok(m)
}

/// The outcome of each of `lines` (those `target` runs) in a session.
fn run_session(
    target: Target,
    case: &Case,
    lines: &[&RunLine],
) -> Result<Vec<Result<Call, String>>, String> {
    let m = verified(with_exports(case.module.clone(), &case.lines)?)?;
    let mut s = match target {
        Target::Interp => interp_session(m)?,
        _ => jit_session(m)?,
    };
    Ok(lines
        .iter()
        .map(|l| s.call(&l.func, &l.args).map_err(|e| e.to_string()))
        .collect())
}

/// Whether a line's call is expected to stop the process (trap or exit).
fn stops(l: &RunLine) -> bool {
    !matches!(l.expect, Expected::Returns(_))
}

/// The outcome of each of `lines` in an executable made of the case and its driver.
fn run_exe(case: &Case, lines: &[&RunLine]) -> Result<Vec<Result<Call, String>>, String> {
    let calls: Vec<DriverCall<'_>> = lines
        .iter()
        .map(|l| DriverCall {
            func: &l.func,
            args: &l.args,
            stops: stops(l),
        })
        .collect();
    let (text, leaves) = driver::driver(&case.module, &calls)?;
    let whole = format!("{}{text}", case.text);
    let m = objects_lowered(verified(parse(
        &whole,
        &format!("{}.driver.ir", case.name),
    )?)?)?;
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("semantics");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let exe = dir.join(&case.name);
    build_exe(m, driver::ENTRY, &exe)?;
    let run = |select: Option<usize>| {
        let mut c = Command::new(&exe);
        match select {
            Some(k) => c.env(driver::SELECT, k.to_string()),
            None => c.env_remove(driver::SELECT),
        };
        c.output()
            .map_err(|e| format!("cannot run {}: {e}", exe.display()))
    };
    // The outcome of call `k` in process output `o`: its result line, else how the process
    // ended (when it ended at that call).
    let outcome = |k: usize, o: &std::process::Output| -> Result<Call, String> {
        let stdout = String::from_utf8_lossy(&o.stdout);
        if let Some((_, bits)) = driver::results(&stdout).into_iter().find(|(i, _)| *i == k) {
            let kinds = &leaves[k];
            if bits.len() != kinds.len() {
                return Err(format!("the driver printed {} leaves", bits.len()));
            }
            return Ok(Call::Returned(
                kinds.iter().zip(bits).map(|(l, b)| l.val(b)).collect(),
            ));
        }
        let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
        match (o.status.code(), stderr.strip_prefix("trap: ")) {
            (Some(irkit_backend::EXIT_TRAP), Some(t)) => {
                let kind = t.split(" in @").next().unwrap_or(t).trim_end().to_string();
                Ok(Call::Trapped {
                    kind,
                    message: stderr.trim_end().to_string(),
                })
            }
            (Some(code), _) if stderr.is_empty() => Ok(Call::Exited(code)),
            (code, _) => Err(format!("the executable ended with {code:?}: {stderr}")),
        }
    };
    let batch = run(None)?;
    let mut out = Vec::new();
    let mut stopped = false;
    for (k, l) in lines.iter().enumerate() {
        if stops(l) {
            out.push(outcome(k, &run(Some(k))?));
        } else if stopped {
            out.push(Err(
                "not run: the executable stopped at an earlier call".into()
            ));
        } else {
            let o = outcome(k, &batch);
            stopped = !matches!(o, Ok(Call::Returned(_)));
            out.push(o);
        }
    }
    Ok(out)
}

/// Runs `case`'s lines on `target` and checks them; when blessing on the interpreter, writes
/// the actual results of the lines that differ.
fn check(target: Target, path: &Path) -> Result<(), Failed> {
    let case = load(path)?;
    let lines: Vec<&RunLine> = case.lines.iter().filter(|l| l.runs_on(target)).collect();
    let outcomes = match target {
        Target::Exe => run_exe(&case, &lines)?,
        _ => run_session(target, &case, &lines)?,
    };
    let mut report = String::new();
    let mut fixes = Vec::new();
    for (l, o) in lines.iter().zip(outcomes) {
        let got = match o {
            Ok(c) if runtest::matches(&l.expect, &c) => continue,
            Ok(c) => {
                let placed = matches!(l.expect, Expected::Trap { place: Some(_), .. });
                let text = runtest::format_call(&c, placed);
                if let Ok(e) = runtest::parse_expected(&text) {
                    fixes.push((l.line, e));
                }
                text
            }
            Err(e) => format!("an error: {e}"),
        };
        report.push_str(&format!(
            "{}:{}: {} on {}: expected {}, got {got}\n",
            case.path.display(),
            l.line,
            l.call_text(),
            target.name(),
            runtest::format_expected(&l.expect),
        ));
    }
    if report.is_empty() {
        return Ok(());
    }
    if target == Target::Interp && irkit_tests::blessing() && fixes.len() == report.lines().count()
    {
        // Written aside, then renamed over the case: the other back ends' trials, which may
        // be reading it meanwhile, see the old text or the new, never a part.
        let text = runtest::rewrite(&case.text, &fixes);
        let aside = case.path.with_extension("ir.blessing");
        std::fs::write(&aside, text)
            .and_then(|()| std::fs::rename(&aside, &case.path))
            .map_err(|e| format!("cannot bless: {e}"))?;
        return Ok(());
    }
    Err(report.into())
}

fn main() {
    let args = Arguments::from_args();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("semantics");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|e| e == "ir"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    assert!(!files.is_empty(), "no case in {}", dir.display());
    let mut trials = Vec::new();
    for target in Target::ALL {
        for f in &files {
            let name = f
                .file_stem()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            // A back end no line of the file names has no trial (a file that does not read
            // has every trial, which reports why).
            let lines = std::fs::read_to_string(f)
                .map_err(|e| e.to_string())
                .and_then(|t| runtest::parse_lines(&t));
            if lines.is_ok_and(|ls| !ls.iter().any(|l| l.runs_on(target))) {
                continue;
            }
            let f = f.clone();
            trials.push(Trial::test(
                format!("{}::{name}", target.name()),
                move || check(target, &f),
            ));
        }
    }
    libtest_mimic::run(&args, trials).exit();
}
