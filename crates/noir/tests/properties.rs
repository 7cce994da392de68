//! Random verified procs (from `irkit-testgen`) give the same result in the interpreter's NOIR
//! evaluator and, lowered to the block form, in its block-form path: the same value, or both
//! an undefined result (the lowered function's `unreachable`), or the same trap kind.

use irkit_core::Module;
use irkit_interp::{Interpreter, ProcResult, TrapKind, Value, eval_proc};
use irkit_testgen::{Config, Entropy, ProcModule, proc_module, strategy};
use proptest::prelude::*;

fn value(width: u32, bits: u64) -> Value {
    match width {
        1 => Value::I1(bits),
        8 => Value::I8(bits),
        16 => Value::I16(bits),
        32 => Value::I32(bits),
        _ => Value::I64(bits),
    }
}

fn check(pm: &ProcModule) -> Result<(), String> {
    let m: &Module = &pm.module;
    irkit_core::verify::verify(m).map_err(|e| format!("{e:?}"))?;
    let mut l = m.clone();
    irkit_noir::lower_procs(&mut l).map_err(|e| e.to_string())?;
    irkit_core::verify::verify(&l).map_err(|es| {
        let es: Vec<String> = es.iter().map(|e| e.to_string()).collect();
        format!(
            "lowered module does not verify: {es:?}\n{}",
            irkit_text::print(&l)
        )
    })?;
    for case in &pm.procs {
        let p = m.find_export(&case.name).ok_or("no proc")?;
        let f = l.find_export(&case.name).ok_or("no lowered func")?;
        for args in &case.args {
            let args: Vec<Value> = case
                .params
                .iter()
                .zip(args)
                .map(|(&w, &b)| value(w, b))
                .collect();
            let mut fuel = 1_000_000;
            let want = match eval_proc(m, p, &args, &mut fuel) {
                Ok(ProcResult::Defined(v)) => Ok(v),
                Ok(ProcResult::Undefined) => Err(TrapKind::Unreachable.to_string()),
                Err(t) => Err(t.kind.to_string()),
            };
            let mut it = Interpreter::new(&l)
                .map_err(|e| e.to_string())?
                .with_fuel(50_000_000);
            let got = it.run(f, &args).map_err(|t| t.kind.to_string());
            if got != want {
                return Err(format!(
                    "@{} {args:?}: evaluator {want:?}, lowered {got:?}\n{}",
                    case.name,
                    irkit_text::print(m)
                ));
            }
        }
    }
    Ok(())
}

#[test]
fn seeded_procs_agree() {
    let seeds: u64 = std::env::var("IRKIT_PROC_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(300);
    for seed in 0..seeds {
        let pm = proc_module(&mut Entropy::from_seed(seed), &Config::default());
        if let Err(e) = check(&pm) {
            panic!("seed {seed}: {e}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
    #[test]
    fn random_procs_agree(pm in strategy::proc_modules(Config::default())) {
        if let Err(e) = check(&pm) {
            prop_assert!(false, "{}", e);
        }
    }
}
