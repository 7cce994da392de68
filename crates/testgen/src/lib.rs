//! # irkit-testgen: random valid modules for tests, benches and fuzz targets
//!
//! This crate builds random irkit modules that **the verifier accepts**
//! ([`irkit_core::verify::verify`] returns `Ok` for every one, whatever drives the generator;
//! the crate's tests check it for many inputs), and random *sets* of modules that link.
//!
//! ## What a generated module holds
//!
//! * **Types**: every scalar (`i1` … `i64`, `f32`, `f64`, `ptr`), arrays (including empty
//!   ones), anonymous structs (including the empty struct) and named structs, nested.
//! * **Constants** of every kind: `const_int` (small values, all-ones, sign bit, random),
//!   `const_float` (NaN, infinity, `-0.0`, random bit patterns, `f32` and `f64`),
//!   `const_null`, `const_zero`, `const_aggregate` (with definition addresses among its
//!   elements) and `const_bytes`.
//! * **Globals**: `global_var` with and without initializer, `global_const`, constant function
//!   tables (a `ptr` initialized with a function's address).
//! * **Functions** whose bodies have structured but arbitrarily nested control flow:
//!   `br` if/else diamonds, `switch` with distinct case values, counted loops (a header whose
//!   block parameters carry the counter and a loop state; bounded trip counts), early `ret`,
//!   `unreachable` and `trap`; arguments on every edge; block parameters of every value type.
//!   Instructions: integer and float arithmetic, `icmp`/`fcmp` with every condition code, every
//!   conversion, `select`, `stackalloc`, `elem` (pointer arithmetic and typed paths), `load` and
//!   `store` on correctly typed memory that stays in bounds, `extract`/`insert`, direct calls,
//!   indirect calls through `select` of two function addresses and through function pointers
//!   loaded from a table. Calls only go to declarations and to functions defined earlier, so
//!   the call graph is acyclic: every generated program terminates (or traps).
//! * **Generics** (in about a third of single modules): an interface with one requirement,
//!   a witness table of `i32` for it, a generic function calling the requirement through
//!   `lookup_witness`, a generic struct, and a function using `specialize` of both (in a
//!   module set, exported, so that library links specialize it).
//! * **NOIR procs** (in about half of the modules, with [`Config::procs`]): 1–2 procs with
//!   integer parameters and result, holding every NOIR opcode (`event`, `cue`, `var`, `next`,
//!   `case`, `phi`, `coalesce`, `result`), `when`/`unless` passive dependencies and pure core
//!   operations, with zero to two counter loops (in sequence or nested) that always end; some
//!   are exported. Functions call them only with [`Config::proc_calls`]. [`proc_module`]
//!   makes modules of procs alone, with arguments to run them on.
//! * **Declarations**: imports nobody provides (functions and globals) and C `extern`
//!   functions (only when [`Config::dangling_imports`] is set).
//! * **Decorations**: `export` (with `weak` or `linkonce` sometimes), `pin`, `pin_weak`,
//!   `pin_if`, `inline_hint`/`inline_always`/`inline_never`, `pure`, `loc` (on definitions and
//!   instructions), `stub` (on a definition nothing reaches), name hints on definitions, blocks, parameters and values (some of them
//!   names the printer must quote). Every definition has a unique name hint.
//!
//! [`module_set`] builds 2–4 modules (`m0.irm` …) where later modules export functions and
//! globals that earlier ones import with structurally equal types (so imports form no cycle),
//! every module exports a `hook` (`weak` in all but at most one) and possibly an identical
//! `linkonce` `shared` helper, and `m0` exports a `main` that calls every import. A set links
//! (in an executable link with `main` as entry, or as a library) without errors.
//!
//! [`object_program`] builds a program with classes: a random hierarchy of traits, classes and
//! an `object` over a library `m1.irm` and `m0.irm` (whose classes may extend the library's),
//! and a `main` using every object instruction, sometimes ending in a named trap (`invalid
//! cast`, `null receiver`, `method not found`), with the result or trap it must give, worked
//! out by the generator from the rules of spec/linking.md. It links as an executable and
//! always ends.
//!
//! ## Driving it
//!
//! Every random choice comes from an [`Entropy`]: either a byte slice (a fuzzer's input;
//! choices past its end are all "the smallest option", so short inputs give small modules) or a
//! 64-bit seed. The same input always gives the same module.
//!
//! ```
//! use irkit_testgen::{Config, Entropy, module};
//!
//! let m = module(&mut Entropy::from_seed(42), &Config::default());
//! irkit_core::verify::verify(&m).unwrap();
//! let from_bytes = module(&mut Entropy::new(b"any bytes at all"), &Config::default());
//! irkit_core::verify::verify(&from_bytes).unwrap();
//! ```
//!
//! * With `proptest` (feature `proptest`, on by default), `strategy::modules`,
//!   `strategy::module_sets` and `strategy::proc_modules` are strategies over byte strings,
//!   so shrinking a failing case shrinks the module.
//! * With `arbitrary` (feature `arbitrary`, for cargo-fuzz), `ArbitraryModule` and
//!   `ArbitraryModuleSet` implement `arbitrary::Arbitrary` (they use all the fuzzer's bytes);
//!   a fuzz target can equally pass its input to [`Entropy::new`], as `fuzz/fuzz_targets/link.rs`
//!   does to draw link options from the same bytes.
//! * `cargo run -p irkit-testgen --example show -- SEED [set|procs]` prints what a seed
//!   generates.

pub mod coverage;
mod entropy;
mod generator;
mod generic_sort;
mod many_types;
mod objects;
mod ty;
#[cfg(feature = "wasm")]
pub mod wasm;

#[cfg(feature = "proptest")]
pub mod strategy;

use std::fmt;

use irkit_core::Module;

pub use entropy::Entropy;
pub use generic_sort::heapsort_program;
pub use many_types::{MAX_TYPES, many_types_program};
pub use objects::{ObjectProgram, object_program};

use generator::Gen;

/// Size limits of generated modules. Bigger values give bigger modules; the defaults keep a
/// module to a few hundred instructions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// Most functions with a body per module (at least one is generated).
    pub max_functions: usize,
    /// Most global variables and constants per module (function tables aside).
    pub max_globals: usize,
    /// Most aggregate types (arrays, structs, named structs) per module.
    pub max_aggregate_types: usize,
    /// Most parameters per function.
    pub max_params: usize,
    /// Most straight-line instructions generated in one go.
    pub max_insts_per_block: usize,
    /// Deepest nesting of control-flow constructs.
    pub max_depth: usize,
    /// Most blocks per function (a soft limit: constructs start only with room for theirs).
    pub max_blocks: usize,
    /// Most iterations of a generated loop.
    pub max_loop_trips: usize,
    /// Whether single modules may declare imports no module provides, and C externs.
    pub dangling_imports: bool,
    /// Whether to generate generics (interfaces, witness tables, generic functions and types,
    /// `specialize`). Back ends take linked, specialized modules: turn this off to feed a
    /// single generated module to one directly.
    pub generics: bool,
    /// Whether to generate NOIR procs (in about half of the modules; see
    /// [`proc_module`] for what a proc holds). Nothing calls them unless `proc_calls` is set;
    /// some are exported. Turn this off for a consumer that does not know procs yet.
    pub procs: bool,
    /// Whether functions may call the generated procs (directly, through `select` of two
    /// addresses or through a function table) and, in a module set, import exported ones:
    /// then a program's `main` reaches procs (the interpreter evaluates them, native back ends
    /// run their lowering). On by default; has no effect without `procs`.
    pub proc_calls: bool,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            max_functions: 5,
            max_globals: 4,
            max_aggregate_types: 4,
            max_params: 3,
            max_insts_per_block: 6,
            max_depth: 3,
            max_blocks: 24,
            max_loop_trips: 4,
            dangling_imports: true,
            generics: true,
            procs: true,
            proc_calls: true,
        }
    }
}

/// A random module that the verifier accepts, its choices read from `e`. Its procs, if any,
/// come after everything else, so with `cfg.procs` off or on, a seed gives the same other
/// definitions (unless `cfg.proc_calls` is set).
pub fn module(e: &mut Entropy<'_>, cfg: &Config) -> Module {
    let mut g = Gen::new(e, cfg, "");
    g.gen_types();
    if cfg.dangling_imports {
        g.gen_dangling_decls();
    }
    if cfg.procs && cfg.proc_calls {
        g.gen_callable_procs(50);
    }
    g.gen_defs();
    if cfg.generics {
        g.gen_generics(30, false);
    }
    if cfg.procs && !cfg.proc_calls {
        g.gen_procs(50);
    }
    g.finish()
}

/// Modules meant to be linked together; see the [crate documentation](crate).
#[derive(Clone)]
pub struct ModuleSet {
    /// `(input name, module)`, in dependency order: `m0.irm` (which exports `main`) first.
    pub modules: Vec<(String, Module)>,
}

/// Shows each module as text.
impl fmt::Debug for ModuleSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (name, m) in &self.modules {
            writeln!(f, "; ---- {name}\n{}", irkit_text::print(m))?;
        }
        Ok(())
    }
}

/// A random set of 2–4 modules linked through imports and exports, with `main` exported by
/// the first; every module passes the verifier and the set links. A set never declares
/// imports that no module provides (`cfg.dangling_imports` is not used).
pub fn module_set(e: &mut Entropy<'_>, cfg: &Config) -> ModuleSet {
    let n = e.range(2, 4);
    let shared = e.chance(50);
    let strong_hook = e.below(n + 1); // n: every hook is weak
    let mut iface = Vec::new();
    let mut modules = Vec::with_capacity(n);
    for k in (0..n).rev() {
        let mut g = Gen::new(e, cfg, &format!("m{k}_"));
        g.gen_types();
        for item in &iface {
            if k == 0 || g.coin(50) {
                g.declare_import(item);
            }
        }
        if shared {
            g.add_shared();
        }
        g.add_hook(strong_hook == k);
        if cfg.procs && cfg.proc_calls {
            g.gen_callable_procs(40);
        }
        g.gen_defs();
        g.gen_generics(25, true);
        if k == 0 {
            g.add_main(true);
        }
        if cfg.procs && !cfg.proc_calls {
            g.gen_procs(40);
        }
        iface.extend(g.exports.iter().cloned());
        modules.push((format!("m{k}.irm"), g.finish()));
    }
    modules.reverse();
    ModuleSet { modules }
}

/// A module of exported procs with arguments to call them on: what [`proc_module`] returns.
#[derive(Clone)]
pub struct ProcModule {
    /// The module: the procs `@p0`, `@p1`, … (exported under the same names), nothing else
    /// but their types and constants.
    pub module: Module,
    /// One entry per proc, in order.
    pub procs: Vec<ProcCase>,
}

/// One generated proc of a [`ProcModule`] and the argument tuples to try.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcCase {
    /// Its name hint and export name: `p0`, `p1`, ….
    pub name: String,
    /// The bit widths of its parameters, all integers (1, 8, 16, 32 or 64).
    pub params: Vec<u32>,
    /// The bit width of its integer result.
    pub result: u32,
    /// Argument tuples, one value per parameter, each a bit pattern below `2^width` (small
    /// values, all ones, the sign bit, random ones); a single empty tuple without parameters.
    pub args: Vec<Vec<u64>>,
}

/// Shows the module as text, then the argument tuples of each proc.
impl fmt::Debug for ProcModule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&irkit_text::print(&self.module))?;
        for p in &self.procs {
            writeln!(f, "; @{} args {:?}", p.name, p.args)?;
        }
        Ok(())
    }
}

/// A module of 1–3 random NOIR procs for property tests of proc evaluation and lowering.
/// Each proc verifies, **ends** after a bounded number of iterations (every loop is driven
/// by a counter that decreases to 0: the argument is in `src/generator/procs/loops.rs`, and
/// `tests/procs.rs` checks it), and returns a deterministic value or traps deterministically:
/// a division by zero or overflow (rare), or `unreachable executed` when the value `result`
/// names is undefined at the end. The procs take and return integers only (`f64` arithmetic
/// appears inside); together they use every NOIR opcode and passive dependency form, zero to
/// two events (two loops in sequence or nested), and their children are sometimes out of
/// dependency order. `cfg` bounds sizes (`max_params`, `max_insts_per_block`,
/// `max_loop_trips` for counter initial values, at most 7); the other fields are not used.
///
/// ```
/// use irkit_testgen::{Config, Entropy, proc_module};
///
/// let pm = proc_module(&mut Entropy::from_seed(7), &Config::default());
/// irkit_core::verify::verify(&pm.module).unwrap();
/// for case in &pm.procs {
///     let p = pm.module.find_export(&case.name).unwrap();
///     assert_eq!(pm.module.opcode(p), irkit_core::Opcode::PROC);
///     assert!(case.args.iter().all(|a| a.len() == case.params.len()));
/// }
/// ```
pub fn proc_module(e: &mut Entropy<'_>, cfg: &Config) -> ProcModule {
    let n = e.range(1, 3);
    let mut g = Gen::new(e, cfg, "");
    let procs = (0..n).map(|k| g.proc_case(&format!("p{k}"))).collect();
    ProcModule {
        module: g.finish(),
        procs,
    }
}

/// A generated module that shows as its text (handy in failure messages).
#[derive(Clone)]
pub struct Generated(pub Module);

impl fmt::Debug for Generated {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&irkit_text::print(&self.0))
    }
}

/// A module generated from a fuzzer's input (`arbitrary` feature).
#[cfg(feature = "arbitrary")]
#[derive(Clone, Debug)]
pub struct ArbitraryModule(pub Generated);

/// A module set generated from a fuzzer's input (`arbitrary` feature).
#[cfg(feature = "arbitrary")]
#[derive(Clone, Debug)]
pub struct ArbitraryModuleSet(pub ModuleSet);

#[cfg(feature = "arbitrary")]
impl<'a> arbitrary::Arbitrary<'a> for ArbitraryModule {
    fn arbitrary(u: &mut arbitrary::Unstructured<'a>) -> arbitrary::Result<Self> {
        let bytes = u.bytes(u.len())?;
        let m = module(&mut Entropy::new(bytes), &Config::default());
        Ok(ArbitraryModule(Generated(m)))
    }
}

#[cfg(feature = "arbitrary")]
impl<'a> arbitrary::Arbitrary<'a> for ArbitraryModuleSet {
    fn arbitrary(u: &mut arbitrary::Unstructured<'a>) -> arbitrary::Result<Self> {
        let bytes = u.bytes(u.len())?;
        let cfg = Config {
            dangling_imports: false,
            ..Config::default()
        };
        Ok(ArbitraryModuleSet(module_set(
            &mut Entropy::new(bytes),
            &cfg,
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use irkit_core::{Inst, Opcode};

    fn check(m: &Module) {
        if let Err(errs) = irkit_core::verify::verify(m) {
            let msgs: Vec<String> = errs.iter().take(10).map(|e| e.to_string()).collect();
            panic!(
                "generated module does not verify:\n{}\n{}",
                msgs.join("\n"),
                irkit_text::print(m)
            );
        }
    }

    #[test]
    fn seeded_modules_verify() {
        for seed in 0..400 {
            check(&module(&mut Entropy::from_seed(seed), &Config::default()));
        }
    }

    #[test]
    fn byte_driven_modules_verify() {
        let mut e = Entropy::from_seed(1);
        for len in 0..300 {
            let bytes: Vec<u8> = (0..len * 4).map(|_| e.byte()).collect();
            check(&module(&mut Entropy::new(&bytes), &Config::default()));
        }
    }

    #[test]
    fn bigger_configs_verify() {
        let cfg = Config {
            max_functions: 12,
            max_globals: 8,
            max_aggregate_types: 8,
            max_depth: 5,
            max_blocks: 64,
            ..Config::default()
        };
        for seed in 0..40 {
            check(&module(&mut Entropy::from_seed(seed), &cfg));
        }
    }

    #[test]
    fn module_sets_verify() {
        let cfg = Config {
            dangling_imports: false,
            ..Config::default()
        };
        for seed in 0..150 {
            let set = module_set(&mut Entropy::from_seed(seed), &cfg);
            assert!((2..=4).contains(&set.modules.len()));
            for (_, m) in &set.modules {
                check(m);
            }
            assert!(set.modules[0].1.find_export("main").is_some());
        }
    }

    #[test]
    fn generation_is_deterministic() {
        for seed in 0..20 {
            let a = module(&mut Entropy::from_seed(seed), &Config::default());
            let b = module(&mut Entropy::from_seed(seed), &Config::default());
            irkit_core::equiv::modules_equal(&a, &b).unwrap();
            assert_eq!(irkit_text::print(&a), irkit_text::print(&b));
        }
    }

    /// Programs with classes verify module by module, and a seed always gives the same one.
    #[test]
    fn object_programs_verify_and_are_deterministic() {
        for seed in 0..100 {
            let a = object_program(&mut Entropy::from_seed(seed), &Config::default());
            let b = object_program(&mut Entropy::from_seed(seed), &Config::default());
            assert_eq!(format!("{a:?}"), format!("{b:?}"));
            for (name, m) in &a.set.modules {
                irkit_core::verify::verify(m)
                    .unwrap_or_else(|e| panic!("seed {seed}, {name}: {e:?}\n{a:?}"));
            }
        }
    }

    /// Every opcode the coverage table says is generated shows up in a few hundred modules.
    #[test]
    fn generated_modules_cover_every_opcode() {
        let mut seen = std::collections::HashSet::new();
        let mut record = |m: &Module| {
            for i in m.walk().into_iter().chain(m.pool().iter().copied()) {
                seen.insert(m.opcode(i));
            }
        };
        for seed in 0..300 {
            record(&module(&mut Entropy::from_seed(seed), &Config::default()));
        }
        for seed in 0..20 {
            for (_, m) in module_set(&mut Entropy::from_seed(seed), &Config::default()).modules {
                record(&m);
            }
            let objects = object_program(&mut Entropy::from_seed(seed), &Config::default());
            for (_, m) in objects.set.modules {
                record(&m);
            }
        }
        let missing: Vec<String> = irkit_core::REGISTRY
            .iter()
            .filter(|info| !info.flags.contains(irkit_core::Flags::RESERVED))
            .filter(|info| {
                let op = info.opcode.known();
                op.is_some_and(|op| {
                    crate::coverage::coverage(op) == crate::coverage::Coverage::Generated
                })
            })
            .filter(|info| !seen.contains(&info.opcode))
            .map(|info| info.name.to_string())
            .collect();
        assert!(missing.is_empty(), "never generated: {missing:?}");
    }

    /// Proc modules verify, hold what [`ProcModule`] says, and use every NOIR opcode.
    #[test]
    fn proc_modules_verify() {
        let mut seen = std::collections::HashSet::new();
        let mut check_pm = |pm: &ProcModule| {
            check(&pm.module);
            let m = &pm.module;
            assert_eq!(m.top_level().len(), pm.procs.len());
            for (k, case) in pm.procs.iter().enumerate() {
                let p = m.find_export(&case.name).expect("procs are exported");
                assert_eq!(case.name, format!("p{k}"));
                assert_eq!(m.name(p), Some(case.name.as_str()));
                assert_eq!(m.opcode(p), Opcode::PROC);
                let (ret, params) = m.fn_signature(m.ty(p).unwrap()).unwrap();
                assert_eq!(m.int_width(ret), Some(case.result));
                let widths: Vec<u32> = params.iter().map(|&t| m.int_width(t).unwrap()).collect();
                assert_eq!(widths, case.params);
                assert!(!case.args.is_empty());
                for args in &case.args {
                    assert_eq!(args.len(), widths.len());
                    for (&a, &w) in args.iter().zip(&widths) {
                        assert_eq!(a, irkit_core::payload::mask_to_width(a, w));
                    }
                }
            }
            for i in m.walk() {
                seen.insert(m.opcode(i));
            }
        };
        for seed in 0..300 {
            check_pm(&proc_module(
                &mut Entropy::from_seed(seed),
                &Config::default(),
            ));
        }
        let mut e = Entropy::from_seed(2);
        for len in 0..100 {
            let bytes: Vec<u8> = (0..len * 4).map(|_| e.byte()).collect();
            check_pm(&proc_module(&mut Entropy::new(&bytes), &Config::default()));
        }
        for op in [
            Opcode::PROC,
            Opcode::EVENT,
            Opcode::CUE,
            Opcode::VAR,
            Opcode::NEXT,
            Opcode::CASE,
            Opcode::PHI,
            Opcode::COALESCE,
            Opcode::RESULT,
            Opcode::WHEN,
            Opcode::UNLESS,
        ] {
            assert!(seen.contains(&op), "no proc module has `{op}`");
        }
    }

    /// `procs: false` makes no procs; `proc_calls` makes functions call them (the modules
    /// and sets still verify, and a set's `main` reaches procs through imports sometimes).
    #[test]
    fn proc_config_switches() {
        let off = Config {
            procs: false,
            ..Config::default()
        };
        let calls = Config {
            proc_calls: true,
            dangling_imports: false,
            ..Config::default()
        };
        let is_proc = |m: &Module, d: Inst| m.opcode(d) == Opcode::PROC;
        let calls_a_proc = |m: &Module| {
            m.walk().into_iter().any(|i| {
                m.opcode(i) == Opcode::CALL && m.operands(i).first().is_some_and(|&f| is_proc(m, f))
            })
        };
        let (mut with_calls, mut imported) = (0, 0);
        for seed in 0..100 {
            let m = module(&mut Entropy::from_seed(seed), &off);
            check(&m);
            assert!(!m.top_level().iter().any(|&d| is_proc(&m, d)));
            // Procs come last: without calls to them, the rest of the module is the same.
            let uncalled = Config {
                proc_calls: false,
                ..Config::default()
            };
            let on = module(&mut Entropy::from_seed(seed), &uncalled);
            let defs = |m: &Module| -> Vec<String> {
                let shown = m.top_level().iter().filter(|&&d| !is_proc(m, d));
                shown
                    .map(|&d| m.name(d).unwrap_or("").to_string())
                    .collect()
            };
            assert_eq!(defs(&on), defs(&m), "seed {seed}");
            let m = module(&mut Entropy::from_seed(seed), &calls);
            check(&m);
            with_calls += usize::from(calls_a_proc(&m));
            let set = module_set(&mut Entropy::from_seed(seed), &calls);
            for (_, m) in &set.modules {
                check(m);
            }
            let exported: Vec<&str> = set
                .modules
                .iter()
                .flat_map(|(_, m)| m.top_level().iter().map(move |&d| (m, d)))
                .filter(|&(m, d)| is_proc(m, d))
                .filter_map(|(m, d)| m.decoration_str(d, Opcode::EXPORT))
                .collect();
            let m0 = &set.modules[0].1;
            imported += m0
                .top_level()
                .iter()
                .filter_map(|&d| m0.decoration_str(d, Opcode::IMPORT))
                .filter(|name| exported.contains(name))
                .count();
        }
        assert!(with_calls > 10, "{with_calls} modules call a proc");
        assert!(imported > 5, "{imported} procs imported by m0");
    }

    #[test]
    fn empty_input_gives_a_small_module() {
        let m = module(&mut Entropy::new(&[]), &Config::default());
        check(&m);
        assert!(m.top_level().len() <= 2, "{}", irkit_text::print(&m));
    }
}
