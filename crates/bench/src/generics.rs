//! `irkit-bench generics`: the price and the gain of sharing generic functions
//! (spec/linking.md, "Dynamic generics"), measured on generated programs
//! ([`irkit_testgen::many_types_program`], [`irkit_testgen::heapsort_program`]):
//!
//! * the program whose generic `pick` is used at `--types` types, linked to an object file under
//!   `--generics specialize`, `auto` (the default) and `dynamic`: link time and object size;
//! * a generic heapsort of `--elements` `i64`s as an executable (with `-O`), cloned and shared:
//!   run time, and the ratio (the price of the dynamic fallback).

use std::path::{Path, PathBuf};

use crate::{Measure, measure, ratio, row};

/// The benchmark's parameters.
pub(crate) struct Generics {
    pub(crate) ir_link: PathBuf,
    pub(crate) dir: PathBuf,
    pub(crate) types: usize,
    pub(crate) elements: u64,
    pub(crate) runs: usize,
}

fn s(p: &Path) -> String {
    p.display().to_string()
}

pub(crate) fn run(b: &Generics) -> Result<(), String> {
    let dir = b.dir.join("generics");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let (mods, _) = irkit_testgen::many_types_program(b.types);
    let mut inputs = Vec::new();
    for (name, text) in &mods {
        let p = dir.join(name);
        std::fs::write(&p, text).map_err(|e| format!("{}: {e}", p.display()))?;
        inputs.push(s(&p));
    }
    println!(
        "pick<T: Ord> at {} types, linked to an object file:",
        b.types
    );
    let mut specialized: Option<Measure> = None;
    for policy in ["specialize", "auto", "dynamic"] {
        let obj = dir.join(format!("many-{policy}.o"));
        let mut args = inputs.clone();
        args.extend(["--generics", policy, "--emit", "obj", "-o"].map(String::from));
        args.push(s(&obj));
        let m = measure(&b.ir_link, &args, b.runs)?;
        let size = std::fs::metadata(&obj).map(|m| m.len()).unwrap_or(0);
        row(&format!("  --generics {policy} ({size} bytes)"), &m);
        match &specialized {
            None => specialized = Some(m),
            Some(base) => println!("    against specialize: {}", ratio(&m, base)),
        }
    }
    let sort = dir.join("heapsort.ir");
    std::fs::write(&sort, irkit_testgen::heapsort_program(b.elements))
        .map_err(|e| format!("{}: {e}", sort.display()))?;
    println!(
        "heapsort<T: Ord, Cell> of {} i64s, an -O executable:",
        b.elements
    );
    let mut runs: Vec<Measure> = Vec::new();
    for policy in ["specialize", "dynamic"] {
        let exe = dir.join(format!("heapsort-{policy}"));
        let args: Vec<String> = vec![
            s(&sort),
            "-O".into(),
            "--generics".into(),
            policy.into(),
            "--emit".into(),
            "exe".into(),
            "-o".into(),
            s(&exe),
        ];
        measure(&b.ir_link, &args, 1)?;
        let m = measure(&exe, &[], b.runs)?;
        row(&format!("  --generics {policy}"), &m);
        runs.push(m);
    }
    if let [cloned, shared] = runs.as_slice() {
        println!("  dynamic against specialize: {}", ratio(shared, cloned));
    }
    Ok(())
}
