//! The interpreter and the JIT agree on every wasm case of `crates/wasm/tests/cases`: each case's
//! modules are compiled with `ir-wasm --canonical-nans` (wasm lets back ends return different NaNs,
//! which would not compare bit for bit: spec/wasm.md, "NaNs"), a driver module (built here)
//! initializes them and makes the case's calls, printing each result's bits; the program runs with
//! `ir-run` on both back ends, which must print the same, exit alike and report the same trap line.
//!
//! A trap ends a program, so a case runs as several programs: each replays the calls that
//! do not trap (by the case's expectations) and ends with the next call that does.

use std::path::{Path, PathBuf};
use std::process::Command;

use irkit_core::{Builder, Inst, Module, Opcode, Payload};

fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../wasm/tests/cases")
}

struct Call {
    module: String,
    field: String,
    args: Vec<(String, String)>,
    traps: bool,
}

/// The modules (name, text) and calls of a case file.
fn parse(text: &str, stem: &str) -> (Vec<(String, String)>, Vec<Call>) {
    let mut mods: Vec<(String, String)> = Vec::new();
    let mut calls: Vec<Call> = Vec::new();
    for line in text.lines() {
        if let Some(name) = line.strip_prefix(";; module ") {
            mods.push((name.trim().to_string(), String::new()));
            continue;
        }
        if let Some(rest) = line.strip_prefix(";; invoke ") {
            let mut words = rest.split_whitespace();
            let target = words.next().unwrap_or_default();
            let (module, field) = match target.split_once('.') {
                Some((m, f)) => (m.to_string(), f.to_string()),
                None => (stem.to_string(), target.to_string()),
            };
            let args = words
                .map(|w| {
                    let (t, v) = w.split_once(':').unwrap();
                    (t.to_string(), v.to_string())
                })
                .collect();
            calls.push(Call {
                module,
                field,
                args,
                traps: false,
            });
            continue;
        }
        if let Some(r) = line.strip_prefix(";; => ") {
            if let Some(c) = calls.last_mut() {
                c.traps = r.starts_with("trap");
            }
            continue;
        }
        if mods.is_empty() {
            mods.push((stem.to_string(), String::new()));
        }
        if let Some(last) = mods.last_mut() {
            last.1.push_str(line);
            last.1.push('\n');
        }
    }
    (mods, calls)
}

/// `t` (a type of `src`) re-made in `dst`: scalars, `void` and structs of scalars.
fn copy_type(src: &Module, t: Inst, dst: &mut Module) -> Inst {
    match src.opcode(t) {
        Opcode::I32 => dst.ty_i32(),
        Opcode::I64 => dst.ty_i64(),
        Opcode::F32 => dst.ty_f32(),
        Opcode::F64 => dst.ty_f64(),
        Opcode::VOID => dst.ty_void(),
        Opcode::STRUCT => {
            let fields: Vec<Inst> = src
                .operands(t)
                .iter()
                .map(|&f| copy_type(src, f, dst))
                .collect();
            dst.ty_struct(&fields).unwrap()
        }
        other => panic!("unexpected type {other:?}"),
    }
}

fn constant(m: &mut Module, ty: &str, v: &str) -> Inst {
    let int = |v: &str| -> i128 {
        let (neg, d) = v.strip_prefix('-').map_or((false, v), |d| (true, d));
        let n = match d.strip_prefix("0x") {
            Some(h) => i128::from_str_radix(h, 16).unwrap(),
            None => d.parse().unwrap(),
        };
        if neg { -n } else { n }
    };
    match ty {
        "i32" => m.const_i32(int(v) as u32 as i32),
        "i64" => m.const_i64(int(v) as u64 as i64),
        "f32" => {
            let bits = match v.strip_prefix("0x") {
                Some(h) => u32::from_str_radix(h, 16).unwrap(),
                None => v.parse::<f32>().unwrap().to_bits(),
            };
            let t = m.ty_f32();
            m.const_float_bits(t, u64::from(bits)).unwrap()
        }
        "f64" => {
            let bits = match v.strip_prefix("0x") {
                Some(h) => u64::from_str_radix(h, 16).unwrap(),
                None => v.parse::<f64>().unwrap().to_bits(),
            };
            let t = m.ty_f64();
            m.const_float_bits(t, bits).unwrap()
        }
        other => panic!("bad type {other}"),
    }
}

/// Prints the bits of scalar `v` as 16 hex digits and a space.
fn print_bits(b: &mut Builder<'_>, putchar: Inst, v: Inst) {
    let i64t = b.module().ty_i64();
    let i32t = b.module().ty_i32();
    let ty = b.module().ty(v).unwrap();
    let bits = match b.module().opcode(ty) {
        Opcode::I32 => b.convert(Opcode::ZEXT, i64t, v).unwrap(),
        Opcode::I64 => v,
        Opcode::F32 => {
            let i = b.convert(Opcode::BITCAST, i32t, v).unwrap();
            b.convert(Opcode::ZEXT, i64t, i).unwrap()
        }
        _ => b.convert(Opcode::BITCAST, i64t, v).unwrap(),
    };
    for k in (0..16).rev() {
        let s = b.module().const_i64(4 * k);
        let sh = b.binary(Opcode::LSHR, bits, s).unwrap();
        let fifteen = b.module().const_i64(15);
        let nib = b.binary(Opcode::AND, sh, fifteen).unwrap();
        let nib = b.convert(Opcode::TRUNC, i32t, nib).unwrap();
        let nine = b.module().const_i32(9);
        let letter = b.icmp(irkit_core::IntCC::Ugt, nib, nine).unwrap();
        let (a, z) = (b.module().const_i32(87), b.module().const_i32(48));
        let off = b
            .inst(
                Opcode::SELECT,
                Some(i32t),
                vec![letter, a, z],
                Payload::None,
            )
            .unwrap();
        let c = b.binary(Opcode::IADD, nib, off).unwrap();
        b.call(putchar, &[c]).unwrap();
    }
    let space = b.module().const_i32(32);
    b.call(putchar, &[space]).unwrap();
}

/// A driver making `calls` after initializing `mods` (translated as `translated`).
fn driver(mods: &[(String, String)], translated: &[Module], calls: &[&Call]) -> Module {
    let mut m = Module::new();
    let mut b = Builder::new(&mut m);
    let i32t = b.module().ty_i32();
    let void = b.module().ty_void();
    let init_sig = b.module().ty_fn(void, &[]).unwrap();
    let putchar_sig = b.module().ty_fn(i32t, &[i32t]).unwrap();
    let putchar = b.func("putchar", putchar_sig).unwrap();
    b.decorate(
        putchar,
        Opcode::EXTERN,
        Vec::new(),
        Payload::Str("putchar".into()),
    )
    .unwrap();
    let main_sig = b.module().ty_fn(i32t, &[]).unwrap();
    let main = b.func("main", main_sig).unwrap();
    b.export(main, "main").unwrap();
    let (entry, _) = b.block(main, &[]).unwrap();
    let mut inits = Vec::new();
    for (name, _) in mods {
        let d = b.func("init", init_sig).unwrap();
        b.import(d, &irkit_wasm::init_symbol(name)).unwrap();
        inits.push(d);
    }
    let mut decls: Vec<(String, Inst)> = Vec::new();
    b.position_at_end(entry);
    for d in inits {
        b.call(d, &[]).unwrap();
    }
    for c in calls {
        let sym = irkit_wasm::symbol(&c.module, &c.field);
        let f = match decls.iter().find(|(s, _)| *s == sym) {
            Some(&(_, f)) => f,
            None => {
                let k = mods.iter().position(|(n, _)| *n == c.module).unwrap();
                let src = &translated[k];
                let sf = src
                    .find_export(&sym)
                    .unwrap_or_else(|| panic!("no export {sym}"));
                let sig = src.ty(sf).unwrap();
                let (ret, params) = src.fn_signature(sig).unwrap();
                let ret = copy_type(src, ret, b.module());
                let params: Vec<Inst> = params
                    .iter()
                    .map(|&p| copy_type(src, p, b.module()))
                    .collect();
                let sig = b.module().ty_fn(ret, &params).unwrap();
                let d = b.func("callee", sig).unwrap();
                b.import(d, &sym).unwrap();
                decls.push((sym, d));
                d
            }
        };
        let args: Vec<Inst> = c
            .args
            .iter()
            .map(|(t, v)| constant(b.module(), t, v))
            .collect();
        let r = b.call(f, &args).unwrap();
        if let Some(t) = b.module().ty(r) {
            if b.module().opcode(t) == Opcode::STRUCT {
                let fields = b.module().operands(t).to_vec();
                for (k, ft) in fields.into_iter().enumerate() {
                    let v = b
                        .inst(Opcode::EXTRACT, Some(ft), vec![r], Payload::Int(k as u64))
                        .unwrap();
                    print_bits(&mut b, putchar, v);
                }
            } else {
                print_bits(&mut b, putchar, r);
            }
        }
        let nl = b.module().const_i32(10);
        b.call(putchar, &[nl]).unwrap();
    }
    let zero = b.module().const_i32(0);
    b.ret(Some(zero)).unwrap();
    irkit_core::verify::verify(&m).unwrap_or_else(|e| panic!("driver: {e:?}"));
    m
}

/// Runs the program on `backend` with the call depth limit the wasm cases state (`recursion`'s
/// unbounded call traps at the same call on both back ends, as in a script).
fn run(inputs: &[String], backend: &str) -> (Option<i32>, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_ir-run"))
        .args(inputs)
        .args(["--backend", backend, "--max-depth", "10000"])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("ir-run runs");
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn interpreter_and_jit_agree_on_every_wasm_case() {
    let tmp = std::env::temp_dir().join(format!("irkit-wasm-backends-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();
    let mut paths: Vec<PathBuf> = std::fs::read_dir(cases_dir())
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "wat"))
        .collect();
    paths.sort();
    assert!(!paths.is_empty());
    let mut programs = 0;
    for path in paths {
        let stem = path.file_stem().unwrap().to_str().unwrap().to_string();
        let (mods, calls) = parse(&std::fs::read_to_string(&path).unwrap(), &stem);
        let dir = tmp.join(&stem);
        std::fs::create_dir_all(&dir).unwrap();
        let mut inputs = Vec::new();
        let mut translated = Vec::new();
        for (name, text) in &mods {
            let wat = dir.join(format!("{name}.wat"));
            std::fs::write(&wat, text).unwrap();
            let irm = dir.join(format!("{name}.irm"));
            let o = Command::new(env!("CARGO_BIN_EXE_ir-wasm"))
                .args([
                    wat.to_str().unwrap(),
                    "-o",
                    irm.to_str().unwrap(),
                    "--name",
                    name,
                    "--canonical-nans",
                ])
                .output()
                .unwrap();
            assert!(
                o.status.success(),
                "{stem}/{name}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            inputs.push(irm.display().to_string());
            let opts = irkit_wasm::Options {
                nans: irkit_wasm::Nans::Canonical,
                ..irkit_wasm::Options::default()
            };
            let wasm = irkit_wasm::to_binary(text.as_bytes()).unwrap();
            translated.push(irkit_wasm::translate_with_options(&wasm, name, &opts).unwrap());
        }
        // One program per trapping call (replaying the calls before it that do not trap),
        // and one for all the calls that do not trap.
        let mut ends: Vec<usize> = (0..calls.len()).filter(|&i| calls[i].traps).collect();
        ends.push(calls.len());
        for (p, &end) in ends.iter().enumerate() {
            let mut chosen: Vec<&Call> = calls[..end].iter().filter(|c| !c.traps).collect();
            if let Some(c) = calls.get(end) {
                chosen.push(c);
            }
            let d = driver(&mods, &translated, &chosen);
            let file = dir.join(format!("driver{p}.irm"));
            std::fs::write(&file, irkit_format::write(&d).unwrap()).unwrap();
            let mut all = inputs.clone();
            all.push(file.display().to_string());
            let interp = run(&all, "interp");
            let jit = run(&all, "jit");
            if std::env::var_os("IRKIT_SHOW").is_some() {
                eprintln!("{stem} {p}: {interp:?}");
            }
            assert_eq!(
                interp, jit,
                "{stem}, program {p}: interpreter (left) and JIT (right) differ"
            );
            let want = if end < calls.len() { Some(70) } else { Some(0) };
            assert_eq!(interp.0, want, "{stem}, program {p}: {}", interp.2);
            programs += 1;
        }
    }
    eprintln!("{programs} programs");
    assert!(programs > 10);
    let _ = std::fs::remove_dir_all(&tmp);
}
