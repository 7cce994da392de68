//! A module that does not verify is refused with a typed error naming the problem, never a
//! panic: random procs from `irkit-testgen`, each broken in one of several ways (an operand
//! dropped or added, a type removed, an operand redirected, an instruction removed), lowered.
//! When a broken module happens to still verify, its lowering verifies too.

use irkit_core::{Inst, Module, Opcode};
use irkit_noir::LowerError;
use irkit_testgen::{Config, Entropy, proc_module};

fn body(m: &Module, p: Inst) -> Vec<Inst> {
    m.children(p)
        .iter()
        .copied()
        .filter(|&c| !matches!(m.opcode(c), Opcode::PARAM | Opcode::RESULT))
        .collect()
}

/// The `k`-th instruction of `b` broken in way `mode`; `None` if that way does not apply.
fn broken(m: &Module, b: &[Inst], k: usize, mode: usize) -> Option<Module> {
    let mut c = m.clone();
    let x = b[k];
    let mut ops = c.operands(x).to_vec();
    match mode {
        0 => {
            ops.pop()?;
        }
        1 => ops.push(b[(k + 1) % b.len()]),
        2 => {
            c.set_type(x, None).ok()?;
            return Some(c);
        }
        3 => *ops.first_mut()? = b[(k + 3) % b.len()],
        _ => {
            c.remove(b[(k + 2) % b.len()]).ok()?;
            return Some(c);
        }
    }
    c.set_operands(x, ops).ok()?;
    Some(c)
}

#[test]
fn broken_procs_are_refused_without_panicking() {
    let (mut refused, mut lowered) = (0, 0);
    for seed in 0..25u64 {
        let pm = proc_module(&mut Entropy::from_seed(seed), &Config::default());
        for p in irkit_core::noir::procs(&pm.module) {
            let b = body(&pm.module, p);
            for k in 0..b.len() {
                for mode in 0..5 {
                    let Some(mut c) = broken(&pm.module, &b, k, mode) else {
                        continue;
                    };
                    let valid = irkit_core::verify::verify(&c).is_ok();
                    match irkit_noir::lower_procs(&mut c) {
                        Ok(_) => {
                            lowered += 1;
                            if let Err(es) = irkit_core::verify::verify(&c) {
                                panic!("seed {seed}: lowered module does not verify: {es:?}");
                            }
                        }
                        Err(LowerError::Invalid { first, .. }) => {
                            assert!(!valid, "seed {seed}: a valid module refused: {first}");
                            refused += 1;
                        }
                        Err(e) => panic!("seed {seed}: not the verifier's error: {e}"),
                    }
                }
            }
        }
    }
    assert!(
        refused > 100 && lowered > 0,
        "{refused} refused, {lowered} lowered"
    );
}

#[test]
fn the_error_names_the_proc_and_instruction() {
    // A cycle: %a reads %b, which reads %a.
    let src = "@p: fn(i32) -> i32 = proc {\n  %x: i32 = param\n  %a: i32 = iadd %x, %b\n  \
               %b: i32 = iadd %a, i32 1\n  result %b\n}\n";
    let mut m = irkit_text::parse(src, "cycle.ir").unwrap();
    let e = irkit_noir::lower_procs(&mut m).unwrap_err();
    let LowerError::Invalid { proc_, first, .. } = &e else {
        panic!("{e}");
    };
    assert_eq!(proc_.as_deref(), Some("@p"));
    assert!(first.contains("@p"), "{first}");
    assert!(
        e.to_string().starts_with("the module does not verify: "),
        "{e}"
    );
    // Nothing was lowered.
    assert!(irkit_noir::has_procs(&m));
}

#[test]
fn lower_proc_refuses_what_is_not_a_proc() {
    let src = "@f: fn() -> i32 = func {\n^entry:\n  ret i32 1\n}\n";
    let mut m = irkit_text::parse(src, "f.ir").unwrap();
    let f = m.find_named("f").unwrap();
    assert_eq!(
        irkit_noir::lower_proc(&mut m, f),
        Err(LowerError::NotAProc(f.index()))
    );
    let far = Inst::from_index(1_000_000);
    assert_eq!(
        irkit_noir::lower_proc(&mut m, far),
        Err(LowerError::NotAProc(1_000_000))
    );
    // No proc: nothing to do, the module is untouched.
    let before = irkit_text::print(&m);
    assert_eq!(irkit_noir::lower_procs(&mut m), Ok(vec![]));
    assert_eq!(irkit_text::print(&m), before);
}

#[test]
fn lower_proc_lowers_one_proc() {
    let src = "@a: fn(i32) -> i32 = proc(%x: i32) -> %y {\n  %y: i32 = iadd %x, i32 1\n}\n\
               @b: fn(i32) -> i32 = proc(%x: i32) -> %y {\n  %y: i32 = imul %x, i32 2\n}\n";
    let mut m = irkit_text::parse(src, "ab.ir").unwrap();
    let a = m.find_named("a").unwrap();
    let l = irkit_noir::lower_proc(&mut m, a).unwrap();
    assert_eq!(l.name, "@a");
    assert_eq!(m.opcode(l.func), Opcode::FUNC);
    assert_eq!(m.find_named("a"), Some(l.func));
    assert_eq!(irkit_core::noir::procs(&m).len(), 1);
    irkit_core::verify::verify(&m).unwrap();
}
