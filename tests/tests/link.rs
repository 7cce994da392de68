//! The linker's file-driven cases: one folder per case under `tests/link/`, holding the
//! modules (`*.ir`, or an `inputs` file listing paths relative to the repository root), an
//! optional `args` file (ir-link options: `--entry N`, `--export N`, `--library`,
//! `--internalize`, `--link-stubs`, `--strip-debug`, `--devirtualize`, `--inline`, `-O`,
//! `--gc boehm`), and the expectation: `expected.ir` (the linked module,
//! printed) or `expected.err` (the error lines, `error: ...`, file names as in the folder).
//!
//! Every case is also linked with its inputs in every order: the output bytes (or the error
//! lines) must be identical. A case that runs optimization passes is also linked without them,
//! and both programs run in the reference interpreter: the result (or trap kind) and the output
//! must be the same. `IRKIT_BLESS=1` rewrites the expectations.
//!
//! Further tests: a definition nobody reaches is never validated (a corrupted unreached
//! definition does not stop the link, and reaching it names the file and the definition),
//! and the library's own errors for bad inputs.

use std::path::{Path, PathBuf};

use irkit_link::{Input, LinkOptions, link};
use libtest_mimic::{Arguments, Failed, Trial};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// The inputs of a case: (name used in messages, text).
fn case_inputs(dir: &Path) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    let list = dir.join("inputs");
    let mut paths: Vec<PathBuf> = if list.exists() {
        let text = std::fs::read_to_string(&list).map_err(|e| e.to_string())?;
        text.lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(|l| repo().join(l))
            .collect()
    } else {
        std::fs::read_dir(dir)
            .map_err(|e| e.to_string())?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.extension().is_some_and(|e| e == "ir")
                    && p.file_name().is_some_and(|n| n != "expected.ir")
            })
            .collect()
    };
    paths.sort();
    for p in paths {
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let text = std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
        out.push((name, text));
    }
    Ok(out)
}

fn case_options(dir: &Path) -> Result<LinkOptions, String> {
    let mut o = LinkOptions::default();
    let Ok(text) = std::fs::read_to_string(dir.join("args")) else {
        return Ok(o);
    };
    let mut words = text.split_whitespace();
    while let Some(w) = words.next() {
        match w {
            "--library" => o.library = true,
            "--internalize" => o.internalize = true,
            "--link-stubs" => o.link_stubs = true,
            "--strip-debug" => o.debug_info = false,
            "--devirtualize" => o.devirtualize = true,
            "--inline" => o.inline = true,
            "-O" => (o.devirtualize, o.inline) = (true, true),
            "--gc" => match words.next() {
                Some("boehm") => o.gc = irkit_link::Gc::Boehm,
                Some("none") => o.gc = irkit_link::Gc::None,
                _ => return Err("--gc needs none or boehm".into()),
            },
            "--entry" => o.entry = words.next().ok_or("--entry needs a name")?.to_string(),
            "--export" => o
                .exports
                .push(words.next().ok_or("--export needs a name")?.to_string()),
            other => return Err(format!("unknown argument in args: {other}")),
        }
    }
    Ok(o)
}

/// Links the inputs in the given order: `Ok((printed text, bytes))` or `Err(error lines)`.
fn run_link(inputs: &[(String, String)], opts: &LinkOptions) -> Result<(String, Vec<u8>), String> {
    // As `link_files` does: inputs are opened in name order, so errors come in a fixed order.
    let mut sorted: Vec<&(String, String)> = inputs.iter().collect();
    sorted.sort();
    let mut opened = Vec::new();
    let mut errors = Vec::new();
    for (name, text) in sorted {
        match irkit_tests::text_input(name, text) {
            Ok(i) => opened.push(i),
            Err(e) => errors.extend(e),
        }
    }
    if !errors.is_empty() {
        return Err(errors.join("\n") + "\n");
    }
    match link(opened, opts) {
        Ok(l) => {
            let bytes = irkit_format::write(&l.module).map_err(|e| format!("write: {e}"))?;
            Ok((irkit_text::print(&l.module), bytes))
        }
        Err(e) => Err(e.to_string() + "\n"),
    }
}

/// Every permutation of `0..n` (Heap's algorithm, iterative).
fn permutations(n: usize) -> Vec<Vec<usize>> {
    let mut a: Vec<usize> = (0..n).collect();
    let mut out = vec![a.clone()];
    let mut c = vec![0; n];
    let mut i = 0;
    while i < n {
        if c[i] < i {
            if i % 2 == 0 {
                a.swap(0, i);
            } else {
                a.swap(c[i], i);
            }
            out.push(a.clone());
            c[i] += 1;
            i = 0;
        } else {
            c[i] = 0;
            i += 1;
        }
    }
    out
}

fn run_case(dir: &Path) -> Result<(), Failed> {
    let inputs = case_inputs(dir)?;
    let opts = case_options(dir)?;
    let result = run_link(&inputs, &opts);
    // Order independence: every permutation gives the same bytes (or the same errors).
    for perm in permutations(inputs.len()) {
        let shuffled: Vec<_> = perm.iter().map(|&i| inputs[i].clone()).collect();
        let again = run_link(&shuffled, &opts);
        let same = match (&result, &again) {
            (Ok((_, a)), Ok((_, b))) => a == b,
            (Err(a), Err(b)) => a == b,
            _ => false,
        };
        if !same {
            return Err(format!("input order {perm:?} changes the result").into());
        }
    }
    let outcome = match result {
        Ok((text, bytes)) => {
            // The output reads back and verifies.
            let m = irkit_format::read(&bytes).map_err(|e| format!("re-read: {e}"))?;
            irkit_core::verify::verify(&m).map_err(|e| format!("re-verify: {e:?}"))?;
            if opts.devirtualize || opts.inline {
                same_behaviour(&inputs, &opts, &m)?;
            }
            Ok(text)
        }
        Err(lines) => Err(lines),
    };
    Ok(irkit_tests::check_outcome(dir, outcome, "the link")?)
}

/// How a program's run ends in the interpreter: its result or trap kind, and its output.
fn behaviour(m: &irkit_core::Module) -> (Result<i32, String>, Vec<u8>) {
    match irkit_interp::Interpreter::new(m) {
        Ok(it) => {
            let mut it = it.with_fuel(10_000_000);
            let r = it.run_main().map_err(|t| t.kind.to_string());
            (r, it.take_output())
        }
        Err(e) => (Err(format!("does not load: {e}")), Vec::new()),
    }
}

/// The program linked with the case's optimization passes (`optimized`) behaves as the one
/// linked without them.
fn same_behaviour(
    inputs: &[(String, String)],
    opts: &LinkOptions,
    optimized: &irkit_core::Module,
) -> Result<(), Failed> {
    let plain_opts = LinkOptions {
        devirtualize: false,
        inline: false,
        ..opts.clone()
    };
    let (_, bytes) = run_link(inputs, &plain_opts)?;
    let plain = irkit_format::read(&bytes).map_err(|e| format!("re-read: {e}"))?;
    let (before, after) = (behaviour(&plain), behaviour(optimized));
    if before != after {
        return Err(
            format!("the passes change the program: {before:?} before, {after:?} after").into(),
        );
    }
    Ok(())
}

const LIB: &str = r#"
#[export("used")]
@used: fn(i32) -> i32 = func {
^entry(%x: i32):
  %r: i32 = iadd %x, i32 1
  ret %r
}

#[export("dead")]
@dead: fn(i32) -> i32 = func {
^entry(%x: i32):
  %a: i32 = imul %x, i32 3
  %b: i32 = isub %a, i32 7
  %c: i32 = imul %b, %b
  ret %c
}

#[export("also_used")]
@also_used: fn() -> void = func {
^entry:
  ret
}
"#;

const MAIN: &str = r#"
#[import("used")]
@used: fn(i32) -> i32 = func

#[import("also_used")]
@also_used: fn() -> void = func

#[export("main")]
@main: fn() -> i32 = func {
^entry:
  call @also_used()
  %r: i32 = call @used(i32 41)
  ret %r
}
"#;

fn round_up16(x: u64) -> u64 {
    x.div_ceil(16) * 16
}

/// Corrupts one byte in the middle of definition `def`'s archive (the definitions section is
/// the concatenation of 16-aligned archives, in definition order).
fn corrupt_def(bytes: &mut [u8], def: u32) -> Result<(), String> {
    let view = irkit_format::ModuleView::from_bytes(bytes).map_err(|e| e.to_string())?;
    let defs = view
        .sections()
        .into_iter()
        .find(|s| s.name == "definitions")
        .ok_or("no definitions section")?;
    let mut offset = defs.offset;
    for i in 0..def {
        offset += round_up16(view.def_info(i).ok_or("no such definition")?.size);
    }
    let size = view.def_info(def).ok_or("no such definition")?.size;
    let at = (offset + size / 2) as usize;
    drop(view);
    bytes[at] ^= 0x5a;
    Ok(())
}

/// A definition nobody reaches is never validated: corrupting its archive does not stop the
/// link; reaching it (with `--export`) fails, naming the file and the definition.
fn unreached_is_not_validated() -> Result<(), Failed> {
    let lib = irkit_text::parse(LIB, "lib.ir").map_err(|e| e.to_string())?;
    let mut bytes = irkit_format::write(&lib).map_err(|e| e.to_string())?;
    let dead = {
        let view = irkit_format::ModuleView::from_bytes(&bytes).map_err(|e| e.to_string())?;
        view.find_export("dead").ok_or("no export dead")?.def
    };
    corrupt_def(&mut bytes, dead)?;
    // Opening still works, and the whole-file check does see the damage.
    let view = irkit_format::ModuleView::from_bytes_named(&bytes, "lib.irm")
        .map_err(|e| format!("open failed: {e}"))?;
    if view.validate_all().is_ok() {
        return Err("the corruption was not detected by validate_all".into());
    }
    let inputs = || -> Result<Vec<Input>, Failed> {
        Ok(vec![
            Input::from_bytes("lib.irm", &bytes).map_err(|e| format!("{e:?}"))?,
            irkit_tests::text_input("main.ir", MAIN).map_err(|e| e.join("\n"))?,
        ])
    };
    let linked = link(inputs()?, &LinkOptions::default())
        .map_err(|e| format!("link without the corrupted definition failed:\n{e}"))?;
    if linked.module.find_export("dead").is_some() {
        return Err("the unreached definition was copied".into());
    }
    let opts = LinkOptions {
        exports: vec!["dead".into()],
        ..LinkOptions::default()
    };
    match link(inputs()?, &opts) {
        Ok(_) => Err("linking the corrupted definition succeeded".into()),
        Err(e) => {
            let text = e.to_string();
            let want = format!("lib.irm: section definitions: definition {dead}: hash mismatch");
            if text.contains(&want) {
                Ok(())
            } else {
                Err(format!("expected an error containing `{want}`, got:\n{text}").into())
            }
        }
    }
}

/// A bad binary input, or bytes that are neither a module nor text, are reported with their
/// name.
fn bad_binary_inputs() -> Result<(), Failed> {
    let e = Input::from_bytes("x.irm", b"IRKMOD\0\x1a\x02\0\0\0").expect_err("bad bytes");
    let text = e.to_string();
    if !text.starts_with("error: x.irm: ") {
        return Err(format!("the error does not name the file: {text}").into());
    }
    let e = Input::from_bytes("y.bin", &[0xff, 0xfe, 0x00]).expect_err("not text");
    if !e.to_string().starts_with("error: y.bin: ") {
        return Err(format!("the error does not name the file: {:?}", e).into());
    }
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let root = repo().join("tests/link");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    dirs.sort();
    let mut trials: Vec<Trial> = dirs
        .into_iter()
        .map(|d| {
            let name = d
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            Trial::test(format!("case::{name}"), move || run_case(&d))
        })
        .collect();
    trials.push(Trial::test(
        "unreached_definition_is_never_validated",
        unreached_is_not_validated,
    ));
    trials.push(Trial::test("bad_binary_inputs", bad_binary_inputs));
    libtest_mimic::run(&args, trials).exit();
}
