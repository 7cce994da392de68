//! The linker workload: one program as N modules, where a chosen fraction of the functions is
//! reachable from `main`, written as irkit modules (`.irm`, optionally `.ir`) and as LLVM IR
//! (`.ll`) for `llvm-link --only-needed`.
//!
//! Module 0 (`m0`) holds only `main` (llvm-link keeps every definition of its first input, so
//! putting the program's bulk there would defeat `--only-needed`); modules 1..N each hold M
//! functions `mI_fJ: fn(i32) -> i32`, all exported, of about K instructions each (arithmetic
//! on the argument with small constants, and the calls).
//!
//! Reachability is exact: the reachable functions are a random subset of the requested size;
//! each reachable function is called by `main` or by a reachable function earlier in a random
//! order (a random spanning tree), plus an extra call to a later reachable one; unreachable
//! functions call only later unreachable ones. Calls only go forward in that order, so the
//! call graph is acyclic and the program terminates.

use std::fmt::Write as _;
use std::path::Path;

use irkit_core::{Builder, Inst, Module, Opcode};

/// The workload's shape.
#[derive(Clone, Debug)]
pub struct Shape {
    /// Number of modules (at least 2: `m0` holds `main` only).
    pub modules: usize,
    /// Functions per module (modules 1..N).
    pub functions: usize,
    /// Instructions per function (approximately).
    pub insts: usize,
    /// Fraction of the functions reachable from `main` (0..=1).
    pub reach: f64,
    /// Seed of the pseudo-random generator.
    pub seed: u64,
    /// An edit: function `.0` (an index in the program's function list) adds constant `.1`
    /// (1..=15) in its first arithmetic step instead of the generated one (for the code
    /// cache's one-edit rebuild).
    pub edit: Option<(usize, u32)>,
}

/// SplitMix64: small, fast, deterministic.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

/// One generated function.
struct Func {
    module: usize,
    name: String,
    /// Callees, by index into the function list (`main` is not among them).
    calls: Vec<usize>,
}

/// The arithmetic operations of a body, as (irkit opcode, LLVM instruction).
const OPS: [(Opcode, &str); 4] = [
    (Opcode::IADD, "add"),
    (Opcode::IMUL, "mul"),
    (Opcode::XOR, "xor"),
    (Opcode::ISUB, "sub"),
];

/// One body step: an arithmetic op with a constant, or a call.
enum Step {
    Arith(usize, u32),
    Call(usize),
}

struct Program {
    shape: Shape,
    funcs: Vec<Func>,
    /// `main`'s callees.
    main_calls: Vec<usize>,
    /// Number of reachable functions (main excluded).
    reachable: usize,
}

impl Program {
    fn new(shape: Shape) -> Program {
        let mut rng = Rng(shape.seed);
        let total = shape.modules.saturating_sub(1) * shape.functions;
        let reach = shape.reach.clamp(0.0, 1.0);
        let r = ((total as f64) * reach).round() as usize;
        let mut funcs: Vec<Func> = (0..total)
            .map(|g| {
                let module = 1 + g / shape.functions.max(1);
                let j = g % shape.functions.max(1);
                Func {
                    module,
                    name: format!("m{module}_f{j}"),
                    calls: Vec::new(),
                }
            })
            .collect();
        // A random order of all functions: the first `r` are the reachable ones.
        let mut order: Vec<usize> = (0..total).collect();
        for i in (1..order.len()).rev() {
            let j = rng.below(i + 1);
            order.swap(i, j);
        }
        let (reachable, unreachable) = order.split_at(r);
        let mut main_calls = Vec::new();
        for (class, list) in [(true, reachable), (false, unreachable)] {
            for (k, &f) in list.iter().enumerate() {
                // Tree edge from an earlier function of the class (or main for the first few
                // reachable ones); unreachable ones get a tree edge only from their own class,
                // so nothing reachable leads to them.
                if k < 4 {
                    if class {
                        main_calls.push(f);
                    }
                } else {
                    let parent = list[rng.below(k)];
                    funcs[parent].calls.push(f);
                }
                // An extra forward edge within the class.
                if k + 1 < list.len() {
                    let later = list[k + 1 + rng.below(list.len() - k - 1)];
                    funcs[f].calls.push(later);
                }
            }
        }
        for f in &mut funcs {
            f.calls.sort_unstable();
            f.calls.dedup();
        }
        Program {
            shape,
            funcs,
            main_calls,
            reachable: r,
        }
    }

    /// The steps of function `f`'s body: about `insts` instructions, calls spread evenly.
    fn steps(&self, calls: &[usize], seed: u64) -> Vec<Step> {
        let mut rng = Rng(seed);
        let n = self.shape.insts.max(calls.len() + 1);
        let arith = n - calls.len() - 1;
        let mut steps = Vec::with_capacity(n);
        let every = if calls.is_empty() {
            usize::MAX
        } else {
            (arith / calls.len()).max(1)
        };
        let mut next_call = 0;
        for i in 0..arith {
            if i % every == 0 && next_call < calls.len() {
                steps.push(Step::Call(calls[next_call]));
                next_call += 1;
            }
            steps.push(Step::Arith(rng.below(OPS.len()), 1 + rng.below(15) as u32));
        }
        while next_call < calls.len() {
            steps.push(Step::Call(calls[next_call]));
            next_call += 1;
        }
        steps
    }

    fn funcs_of(&self, module: usize) -> impl Iterator<Item = usize> + '_ {
        let m = self.shape.functions;
        let start = (module.saturating_sub(1)) * m;
        (start..start + m).filter(move |_| module > 0)
    }

    fn build_irkit(&self, module: usize) -> Result<Module, String> {
        let e = |e: irkit_core::CoreError| e.to_string();
        let mut m = Module::new();
        let i32t = m.ty_i32();
        let sig = m.ty_fn(i32t, &[i32t]).map_err(e)?;
        let main_sig = m.ty_fn(i32t, &[]).map_err(e)?;
        let mut b = Builder::new(&mut m);
        let mut handle: std::collections::HashMap<usize, Inst> = Default::default();
        let own: Vec<usize> = self.funcs_of(module).collect();
        let main = if module == 0 {
            let f = b.func("main", main_sig).map_err(e)?;
            b.export(f, "main").map_err(e)?;
            Some(f)
        } else {
            None
        };
        for &g in &own {
            let f = b.func(&self.funcs[g].name, sig).map_err(e)?;
            b.export(f, &self.funcs[g].name).map_err(e)?;
            handle.insert(g, f);
        }
        // Import declarations, in callee order.
        let mut imported: Vec<usize> = own
            .iter()
            .flat_map(|&g| self.funcs[g].calls.iter().copied())
            .chain(if module == 0 {
                self.main_calls.clone()
            } else {
                Vec::new()
            })
            .filter(|c| self.funcs[*c].module != module)
            .collect();
        imported.sort_unstable();
        imported.dedup();
        for c in imported {
            let f = b.func(&self.funcs[c].name, sig).map_err(e)?;
            b.import(f, &self.funcs[c].name).map_err(e)?;
            handle.insert(c, f);
        }
        let consts: Vec<Inst> = (0..16).map(|v| b.module().const_i32(v)).collect();
        if let Some(f) = main {
            let (blk, _) = b.block(f, &[]).map_err(e)?;
            b.position_at_end(blk);
            let mut acc = consts[0];
            for c in &self.main_calls {
                let r = b.call(handle[c], &[consts[1]]).map_err(e)?;
                acc = b.binary(Opcode::IADD, acc, r).map_err(e)?;
            }
            b.ret(Some(acc)).map_err(e)?;
        }
        for &g in &own {
            let f = handle[&g];
            let (blk, params) = b.block(f, &[i32t]).map_err(e)?;
            b.position_at_end(blk);
            let mut v = params[0];
            let mut steps = self.steps(&self.funcs[g].calls, self.shape.seed ^ g as u64);
            if let Some((edited, k)) = self.shape.edit
                && edited == g
                && let Some(Step::Arith(_, c)) =
                    steps.iter_mut().find(|s| matches!(s, Step::Arith(..)))
            {
                *c = k.clamp(1, 15);
            }
            for step in steps {
                v = match step {
                    Step::Arith(op, k) => b.binary(OPS[op].0, v, consts[k as usize]).map_err(e)?,
                    Step::Call(c) => b.call(handle[&c], &[v]).map_err(e)?,
                };
            }
            b.ret(Some(v)).map_err(e)?;
        }
        Ok(m)
    }

    fn build_llvm(&self, module: usize) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "; ModuleID = 'm{module}'\nsource_filename = \"m{module}\"\n"
        );
        let own: Vec<usize> = self.funcs_of(module).collect();
        let mut imported: Vec<usize> = own
            .iter()
            .flat_map(|&g| self.funcs[g].calls.iter().copied())
            .chain(if module == 0 {
                self.main_calls.clone()
            } else {
                Vec::new()
            })
            .filter(|c| self.funcs[*c].module != module)
            .collect();
        imported.sort_unstable();
        imported.dedup();
        for c in imported {
            let _ = writeln!(s, "declare i32 @{}(i32)", self.funcs[c].name);
        }
        if module == 0 {
            let _ = writeln!(s, "\ndefine i32 @main() {{\nentry:");
            let mut acc = "0".to_string();
            for (i, c) in self.main_calls.iter().enumerate() {
                let _ = writeln!(s, "  %c{i} = call i32 @{}(i32 1)", self.funcs[*c].name);
                let _ = writeln!(s, "  %a{i} = add i32 {acc}, %c{i}");
                acc = format!("%a{i}");
            }
            let _ = writeln!(s, "  ret i32 {acc}\n}}");
        }
        for &g in &own {
            let _ = writeln!(s, "\ndefine i32 @{}(i32 %x) {{\nentry:", self.funcs[g].name);
            let mut v = "%x".to_string();
            for (i, step) in self
                .steps(&self.funcs[g].calls, self.shape.seed ^ g as u64)
                .into_iter()
                .enumerate()
            {
                match step {
                    Step::Arith(op, k) => {
                        let _ = writeln!(s, "  %v{i} = {} i32 {v}, {k}", OPS[op].1);
                    }
                    Step::Call(c) => {
                        let _ = writeln!(s, "  %v{i} = call i32 @{}(i32 {v})", self.funcs[c].name);
                    }
                }
                v = format!("%v{i}");
            }
            let _ = writeln!(s, "  ret i32 {v}\n}}");
        }
        s
    }
}

/// What [`generate`] wrote.
#[derive(Clone, Debug, Default)]
pub struct Generated {
    /// Functions in all modules (main excluded).
    pub functions: usize,
    /// Of which reachable from `main`.
    pub reachable: usize,
    /// Instructions in all irkit modules (definitions' instructions).
    pub insts: u64,
    /// Bytes of all `.irm` files.
    pub irm_bytes: u64,
}

/// Writes module `m{module}.irm` of `shape` into `out` again (with `shape.edit` applied).
pub fn rewrite_module(shape: &Shape, out: &Path, module: usize) -> Result<(), String> {
    let p = Program::new(shape.clone());
    let m = p.build_irkit(module)?;
    let path = out.join(format!("m{module}.irm"));
    irkit_format::write_to_path(&m, &path).map_err(|e| format!("{}: {e}", path.display()))
}

/// The module holding function `f` (an index in the program's function list) and the
/// constant its first arithmetic step adds.
pub fn function_site(shape: &Shape, f: usize) -> Option<(usize, u32)> {
    let p = Program::new(shape.clone());
    let func = p.funcs.get(f)?;
    let k = p
        .steps(&func.calls, shape.seed ^ f as u64)
        .iter()
        .find_map(|s| match s {
            Step::Arith(_, k) => Some(*k),
            Step::Call(_) => None,
        })?;
    Some((func.module, k))
}

/// Writes `m0.irm` … `m{N-1}.irm` (and `.ir` with `text`) and `m0.ll` … into `out`.
pub fn generate(shape: &Shape, out: &Path, text: bool) -> Result<Generated, String> {
    if shape.modules < 2 || shape.functions == 0 {
        return Err("need at least 2 modules and 1 function per module".into());
    }
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let p = Program::new(shape.clone());
    let mut g = Generated {
        functions: p.funcs.len(),
        reachable: p.reachable,
        ..Generated::default()
    };
    for module in 0..shape.modules {
        let m = p.build_irkit(module)?;
        g.insts += m.live_count() as u64;
        let path = out.join(format!("m{module}.irm"));
        irkit_format::write_to_path(&m, &path).map_err(|e| format!("{}: {e}", path.display()))?;
        g.irm_bytes += std::fs::metadata(&path).map(|md| md.len()).unwrap_or(0);
        if text {
            let path = out.join(format!("m{module}.ir"));
            std::fs::write(&path, irkit_text::print(&m))
                .map_err(|e| format!("{}: {e}", path.display()))?;
        }
        let path = out.join(format!("m{module}.ll"));
        std::fs::write(&path, p.build_llvm(module))
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(g)
}
