//! File-driven cases: each `cases/*.wat` file holds one or more WebAssembly modules and the
//! calls to make, each followed by its expected result, side by side:
//!
//! ```text
//! ;; module lib            (optional: a file without it is one module named by its stem)
//! (module ...)
//! ;; invoke lib.fib i32:10
//! ;; => i32:55
//! ```
//!
//! Every module is translated, verified, printed as text and parsed back, written to `.irm`
//! bytes and read back; all of a
//! file's modules are linked together (a library link: every export is a root); the linked
//! module is run in the interpreter: first every module's initializer, in file order, then
//! the invocations in order, in one instance (memory and globals persist), with the call depth
//! limit scripts have (`irkit_wast::SCRIPT_MAX_DEPTH`, 10,000: `recursion`'s unbounded call
//! traps there, as the CLI's wasm cases do on both back ends). A result is
//! `TYPE:VALUE …` (floats by their bits in hex), `void`, or `trap: MESSAGE`.
//! `IRKIT_BLESS=1` rewrites the `;; =>` lines from the actual results.

use std::path::{Path, PathBuf};

use irkit_interp::{Interpreter, Value};
use irkit_link::{Input, LinkOptions};
use libtest_mimic::{Arguments, Failed, Trial};

fn bless() -> bool {
    std::env::var_os("IRKIT_BLESS").is_some_and(|v| v != "0")
}

/// A call to make: the module, the field, the arguments.
struct Invoke {
    module: String,
    field: String,
    args: Vec<Value>,
}

fn parse_value(s: &str) -> Result<Value, String> {
    let (ty, v) = s
        .split_once(':')
        .ok_or_else(|| format!("bad value {s:?}"))?;
    let int = |v: &str| -> Result<i128, String> {
        let (neg, digits) = match v.strip_prefix('-') {
            Some(d) => (true, d),
            None => (false, v),
        };
        let n = match digits.strip_prefix("0x") {
            Some(h) => i128::from_str_radix(h, 16),
            None => digits.parse::<i128>(),
        }
        .map_err(|e| format!("bad number {v:?}: {e}"))?;
        Ok(if neg { -n } else { n })
    };
    Ok(match ty {
        "i32" => Value::I32(int(v)? as u32 as u64),
        "i64" => Value::I64(int(v)? as u64),
        "f32" => Value::F32(match v.strip_prefix("0x") {
            Some(h) => u32::from_str_radix(h, 16).map_err(|e| e.to_string())?,
            None => v.parse::<f32>().map_err(|e| e.to_string())?.to_bits(),
        }),
        "f64" => Value::F64(match v.strip_prefix("0x") {
            Some(h) => u64::from_str_radix(h, 16).map_err(|e| e.to_string())?,
            None => v.parse::<f64>().map_err(|e| e.to_string())?.to_bits(),
        }),
        _ => return Err(format!("bad type in {s:?}")),
    })
}

fn show(v: &Value) -> String {
    match v {
        Value::I32(b) => format!("i32:{}", *b as u32 as i32),
        Value::I64(b) => format!("i64:{}", *b as i64),
        Value::F32(b) => format!("f32:0x{b:08x}"),
        Value::F64(b) => format!("f64:0x{b:016x}"),
        Value::Aggregate(vs) => vs.iter().map(show).collect::<Vec<_>>().join(" "),
        other => format!("{other}"),
    }
}

/// The modules of a case file: (name, text).
fn modules(text: &str, stem: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        if let Some(name) = line.strip_prefix(";; module ") {
            out.push((name.trim().to_string(), String::new()));
        } else if out.is_empty() {
            out.push((stem.to_string(), format!("{line}\n")));
        } else if let Some(last) = out.last_mut() {
            last.1.push_str(line);
            last.1.push('\n');
        }
    }
    out
}

/// Translates, verifies, writes and reads back, links; returns the linked module.
pub fn build(mods: &[(String, String)]) -> Result<irkit_core::Module, String> {
    let mut inputs = Vec::new();
    for (name, text) in mods {
        let m = irkit_wasm::translate_input(text.as_bytes(), name)
            .map_err(|e| format!("{name}: {e}"))?;
        if let Err(errs) = irkit_core::verify::verify(&m) {
            let msgs: Vec<String> = errs.iter().map(|e| e.to_string()).collect();
            return Err(format!("{name}: does not verify:\n{}", msgs.join("\n")));
        }
        // The text form prints and parses back to a module that verifies.
        let text = irkit_text::print(&m);
        let reparsed = irkit_text::parse(&text, &format!("{name}.ir"))
            .map_err(|e| format!("{name}: text: {e}"))?;
        if irkit_core::verify::verify(&reparsed).is_err() {
            return Err(format!("{name}: the printed text does not verify"));
        }
        let bytes = irkit_format::write(&m).map_err(|e| format!("{name}: write: {e}"))?;
        let input = Input::from_bytes(&format!("{name}.irm"), &bytes)
            .map_err(|e| format!("{name}: read: {e}"))?;
        inputs.push(input);
    }
    let opts = LinkOptions {
        library: true,
        ..LinkOptions::default()
    };
    irkit_link::link(inputs, &opts)
        .map(|l| l.module)
        .map_err(|e| format!("link: {e}"))
}

fn run_case(path: &Path) -> Result<(), Failed> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("case")
        .to_string();
    let mods = modules(&text, &stem);
    let linked = build(&mods)?;
    let mut it = Interpreter::new(&linked)
        .map_err(|e| e.to_string())?
        .with_max_call_depth(10_000);
    for (name, _) in &mods {
        it.run(irkit_wasm::init_symbol(name).as_str(), &[])
            .map_err(|t| format!("initializing {name}: {t}"))?;
    }
    let mut out = String::new();
    let mut mismatches = Vec::new();
    let mut pending: Option<String> = None;
    for (n, line) in text.lines().enumerate() {
        if line.starts_with(";; => ") {
            let expected = line.trim_start_matches(";; => ").trim_end();
            let actual = pending
                .take()
                .ok_or_else(|| format!("line {}: `;; =>` without `;; invoke`", n + 1))?;
            if expected != actual {
                mismatches.push(format!("line {}: expected {expected}, got {actual}", n + 1));
            }
            out.push_str(&format!(";; => {actual}\n"));
            continue;
        }
        if let Some(actual) = pending.take() {
            mismatches.push(format!("line {}: no expectation, got {actual}", n));
            out.push_str(&format!(";; => {actual}\n"));
        }
        out.push_str(line);
        out.push('\n');
        if let Some(rest) = line.strip_prefix(";; invoke ") {
            let mut words = rest.split_whitespace();
            let target = words.next().ok_or("invoke without a target")?;
            let (module, field) = match target.split_once('.') {
                Some((m, f)) => (m.to_string(), f.to_string()),
                None => (mods[0].0.clone(), target.to_string()),
            };
            let args = words.map(parse_value).collect::<Result<Vec<_>, _>>()?;
            let inv = Invoke {
                module,
                field,
                args,
            };
            let sym = irkit_wasm::symbol(&inv.module, &inv.field);
            let actual = match it.run(sym.as_str(), &inv.args) {
                Ok(None) => "void".to_string(),
                Ok(Some(v)) => show(&v),
                Err(t) => format!("trap: {}", t.kind),
            };
            pending = Some(actual);
        }
    }
    if let Some(actual) = pending.take() {
        mismatches.push(format!("end: no expectation, got {actual}"));
        out.push_str(&format!(";; => {actual}\n"));
    }
    if mismatches.is_empty() {
        return Ok(());
    }
    if bless() {
        std::fs::write(path, out).map_err(|e| e.to_string())?;
        return Ok(());
    }
    Err(format!(
        "expectation differs (run with IRKIT_BLESS=1 to accept the actual result)\n{}",
        mismatches.join("\n")
    )
    .into())
}

fn main() {
    let args = Arguments::from_args();
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/cases");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    paths.retain(|p| p.extension().is_some_and(|e| e == "wat"));
    paths.sort();
    let trials = paths
        .into_iter()
        .map(|p| {
            let name = p
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or("?")
                .to_string();
            Trial::test(name, move || run_case(&p))
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}
