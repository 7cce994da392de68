//! Loop-invariant code motion over Cranelift IR after Cranelift's own optimizations
//! (spec/backends.md, "Code generation level").
//!
//! Cranelift's e-graph pass hoists a pure value out of a loop when it places the value, but it
//! tracks the loops it is in as a stack that it pops on visiting a block outside the innermost
//! one (a loop exit) and pushes again only at a loop header: every block of the loop visited
//! after such an exit (blocks are visited in dominator-tree preorder, children in reverse
//! postorder) places its values with no loop around it, so each computes its loop invariants
//! again on every iteration. An interpreter's dispatch loop whose last case returns recomputes
//! the base of its operand stack in every case (18 times in `examples/wasm-c/prog.c`).
//!
//! [`cranelift_loses_loops`] replays that walk on the graphs the pass computed (after [`may_loop`],
//! a cheap test for a loop at all; `crate::isa::compile`); only for a function where it loses a
//! loop does [`hoist_invariants`] finish the job on the optimized function: in reverse postorder, a
//! pure instruction of a loop whose operands are all defined outside that loop moves to the end of
//! the loop header's immediate dominator (where Cranelift itself hoists), to the outermost loop it
//! is invariant in; an instruction the same as one already moved there is replaced by it. Constants
//! are not moved on their own (Cranelift recomputes them where they are used, for register
//! pressure); an invariant instruction that uses one gets a copy of it beside it. Loads, traps,
//! calls and anything with an effect stay where they are. The function is then lowered without a
//! second e-graph pass, which would move the values back.

use std::hash::{Hash, Hasher};

use rustc_hash::{FxHashMap as HashMap, FxHasher};

use cranelift_codegen::dominator_tree::DominatorTree;
use cranelift_codegen::entity::EntityRef;
use cranelift_codegen::ir::{Block, Function, Inst, Opcode, Type, Value, ValueDef};
use cranelift_codegen::loop_analysis::{Loop, LoopAnalysis};

/// Whether `func` may have a loop: a branch to a block laid out at or before the branch's own
/// (every cycle has one). Cheap, and enough to skip [`cranelift_loses_loops`]'s analyses.
pub(crate) fn may_loop(func: &Function) -> bool {
    let mut position = vec![u32::MAX; func.dfg.num_blocks()];
    for (i, block) in func.layout.blocks().enumerate() {
        position[block.index()] = u32::try_from(i).unwrap_or(u32::MAX);
        if func
            .block_successors(block)
            .any(|to| position[to.index()] != u32::MAX)
        {
            return true;
        }
    }
    false
}

/// Whether Cranelift's e-graph pass, given `func` (its dominator tree `domtree` and loops
/// `loops`), places the values of some block with fewer loops around it than the block is in:
/// a replay of its walk (dominator-tree preorder, a loop pushed at its header and popped at the
/// first block outside it, never pushed again; the module doc). Only then has
/// [`hoist_invariants`] anything to do that Cranelift would not have done.
pub(crate) fn cranelift_loses_loops(
    func: &Function,
    domtree: &DominatorTree,
    loops: &LoopAnalysis,
) -> bool {
    let Some(entry) = func.layout.entry_block() else {
        return false;
    };
    let mut around: Vec<Loop> = Vec::new();
    let mut walk = vec![entry];
    while let Some(block) = walk.pop() {
        while around
            .last()
            .is_some_and(|&lp| !loops.is_in_loop(block, lp))
        {
            around.pop();
        }
        if domtree.idom(block).is_some()
            && let Some(lp) = loops.is_loop_header(block)
        {
            around.push(lp);
        }
        if around.len() < loops.loop_level(block).level() {
            return true;
        }
        let children = walk.len();
        walk.extend(domtree.children(block));
        walk[children..].reverse();
    }
    false
}

/// Moves the loop-invariant pure instructions of `func` out of their loops (the module doc);
/// `domtree` and `loops` are `func`'s. Returns whether anything moved.
pub(crate) fn hoist_invariants(
    func: &mut Function,
    domtree: &DominatorTree,
    loops: &LoopAnalysis,
) -> bool {
    if loops.loops().next().is_none() {
        return false;
    }
    let mut hoister = Hoister {
        moved: HashMap::default(),
        any: false,
    };
    let order: Vec<Block> = domtree.cfg_rpo().copied().collect();
    let mut insts = Vec::new();
    for block in order {
        let Some(innermost) = loops.innermost_loop(block) else {
            continue;
        };
        insts.clear();
        insts.extend(func.layout.block_insts(block));
        for &inst in &insts {
            if !is_movable(func, inst) {
                continue;
            }
            let Some(target) = outermost_invariant_loop(func, loops, innermost, inst) else {
                continue;
            };
            let Some(to) = domtree.idom(loops.loop_header(target)) else {
                continue;
            };
            hoister.hoist(func, inst, to);
        }
    }
    hoister.any
}

/// The moves made so far: per destination block, the instructions moved there by the hash of
/// what they compute (to find one that computes the same).
struct Hoister {
    moved: HashMap<(Block, u64), Vec<Inst>>,
    any: bool,
}

impl Hoister {
    /// Moves `inst` to the end of `to` (before its branch), giving it copies of the constants
    /// it uses that are defined in the loop, or replaces it by an instruction already moved
    /// there that computes the same.
    fn hoist(&mut self, func: &mut Function, inst: Inst, to: Block) {
        let Some(end) = func.layout.last_inst(to) else {
            return;
        };
        for i in 0..func.dfg.inst_args(inst).len() {
            let arg = func.dfg.resolve_aliases(func.dfg.inst_args(inst)[i]);
            let arg = match func.dfg.value_def(arg) {
                ValueDef::Result(def, _) if func.layout.inst_block(def) != Some(to) => {
                    if is_constant(func.dfg.insts[def].opcode()) {
                        self.constant_in(func, def, to, end)
                    } else {
                        arg
                    }
                }
                _ => arg,
            };
            func.dfg.inst_args_mut(inst)[i] = arg;
        }
        let same = self.same_in(func, inst, to);
        func.layout.remove_inst(inst);
        match same {
            Some(other) => func.dfg.replace_with_aliases(inst, other),
            None => {
                func.layout.insert_inst(inst, end);
                self.note(func, inst, to);
            }
        }
        self.any = true;
    }

    /// An instruction moved to (or made in) `to` that computes what `inst` computes.
    fn same_in(&self, func: &Function, inst: Inst, to: Block) -> Option<Inst> {
        let found = self.moved.get(&(to, fingerprint(func, inst)))?;
        found
            .iter()
            .copied()
            .find(|&other| computes_the_same(func, inst, other))
    }

    /// Notes that `inst` is now in `to`.
    fn note(&mut self, func: &Function, inst: Inst, to: Block) {
        let key = (to, fingerprint(func, inst));
        self.moved.entry(key).or_default().push(inst);
    }

    /// The result of a copy of constant instruction `def` at the end of `to` (before `end`),
    /// made once per block and constant.
    fn constant_in(&mut self, func: &mut Function, def: Inst, to: Block, end: Inst) -> Value {
        let copy = match self.same_in(func, def, to) {
            Some(copy) => copy,
            None => {
                let copy = func.dfg.clone_inst(def);
                func.layout.insert_inst(copy, end);
                self.note(func, copy, to);
                copy
            }
        };
        func.dfg.first_result(copy)
    }
}

/// The outermost loop, from `innermost` (the loop of `inst`'s block) outwards, that defines
/// none of `inst`'s operands (a constant counts as defined anywhere: it is copied), or `None`
/// if `innermost` defines one.
fn outermost_invariant_loop(
    func: &Function,
    loops: &LoopAnalysis,
    innermost: Loop,
    inst: Inst,
) -> Option<Loop> {
    let mut found = None;
    let mut at = Some(innermost);
    while let Some(lp) = at {
        let invariant = func.dfg.inst_args(inst).iter().all(|&arg| {
            let arg = func.dfg.resolve_aliases(arg);
            match func.dfg.value_def(arg) {
                ValueDef::Result(def, _) => {
                    is_constant(func.dfg.insts[def].opcode())
                        || func
                            .layout
                            .inst_block(def)
                            .is_some_and(|b| !loops.is_in_loop(b, lp))
                }
                ValueDef::Param(b, _) => !loops.is_in_loop(b, lp),
                ValueDef::Union(..) => false,
            }
        });
        if !invariant {
            break;
        }
        found = Some(lp);
        at = loops.loop_parent(lp);
    }
    found
}

/// Whether `inst` may move: one result, at least one operand (constants stay where Cranelift
/// put them), and nothing but its result: no memory access, trap, call, branch or other
/// effect.
fn is_movable(func: &Function, inst: Inst) -> bool {
    let op = func.dfg.insts[inst].opcode();
    func.dfg.inst_results(inst).len() == 1
        && !func.dfg.inst_args(inst).is_empty()
        && !(op.is_call()
            || op.is_branch()
            || op.is_terminator()
            || op.is_return()
            || op.can_trap()
            || op.can_load()
            || op.can_store()
            || op.other_side_effects())
}

/// Whether `op` computes a constant from its immediate alone.
fn is_constant(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::Iconst | Opcode::F32const | Opcode::F64const | Opcode::Vconst
    )
}

/// A hash of what `inst` computes: its operation, operands, immediates and type.
fn fingerprint(func: &Function, inst: Inst) -> u64 {
    let mut h = FxHasher::default();
    func.dfg.insts[inst].hash(&mut h, &func.dfg.value_lists);
    result_type(func, inst).hash(&mut h);
    h.finish()
}

/// Whether `a` and `b` compute the same value (same operation, operands, immediates, type).
fn computes_the_same(func: &Function, a: Inst, b: Inst) -> bool {
    func.dfg.insts[a].eq(&func.dfg.insts[b], &func.dfg.value_lists)
        && result_type(func, a) == result_type(func, b)
}

/// The type of `inst`'s result.
fn result_type(func: &Function, inst: Inst) -> Type {
    func.dfg.value_type(func.dfg.first_result(inst))
}

#[cfg(test)]
mod tests {
    use cranelift_codegen::Context;
    use cranelift_codegen::control::ControlPlane;
    use cranelift_codegen::ir::condcodes::IntCC;
    use cranelift_codegen::ir::types::I32;
    use cranelift_codegen::ir::{
        AbiParam, Block, Function, InstBuilder, Signature, UserFuncName, Value,
    };
    use cranelift_codegen::isa::{CallConv, TargetIsa};
    use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Switch};

    /// An empty function of `(i32, i32) -> i32`.
    fn two_ints_to_int() -> Function {
        let mut sig = Signature::new(CallConv::SystemV);
        sig.params = vec![AbiParam::new(I32), AbiParam::new(I32)];
        sig.returns = vec![AbiParam::new(I32)];
        Function::with_name_signature(UserFuncName::default(), sig)
    }

    /// An interpreter's dispatch loop: the header switches on the state `s` to two cases that
    /// compute the next state from `base + 1000` (invariant), to a case that leaves the loop
    /// (the last entry of the table: the depth-first search reaches it last, so it comes first
    /// among the header's children) and, by default, to a block that leaves too.
    fn dispatch_loop(isa: &dyn TargetIsa) -> (Function, Value) {
        let mut f = two_ints_to_int();
        let mut fctx = FunctionBuilderContext::new();
        let mut b = FunctionBuilder::new(&mut f, &mut fctx);
        let [entry, header, mul, add, halt, other, exit]: [Block; 7] =
            std::array::from_fn(|_| b.create_block());
        b.append_block_params_for_function_params(entry);
        b.append_block_param(header, I32);
        b.append_block_param(exit, I32);
        b.switch_to_block(entry);
        let (base, start) = (b.block_params(entry)[0], b.block_params(entry)[1]);
        b.ins().jump(header, &[start.into()]);
        b.switch_to_block(header);
        let s = b.block_params(header)[0];
        let mut sw = Switch::new();
        for (i, target) in [mul, add, halt].into_iter().enumerate() {
            sw.set_entry(i as u128, target);
        }
        sw.emit(&mut b, s, other);
        for (block, op) in [(mul, 0), (add, 1)] {
            b.switch_to_block(block);
            let k = b.ins().iadd_imm_s(base, 1000);
            let next = if op == 0 {
                b.ins().imul(s, k)
            } else {
                b.ins().iadd(s, k)
            };
            let three = b.ins().iconst(I32, 3);
            let next = b.ins().band(next, three);
            b.ins().jump(header, &[next.into()]);
        }
        b.switch_to_block(halt);
        let r = b.ins().iadd_imm_s(s, 7);
        b.ins().jump(exit, &[r.into()]);
        b.switch_to_block(other);
        let r = b.ins().iconst(I32, -1);
        b.ins().jump(exit, &[r.into()]);
        b.switch_to_block(exit);
        let r = b.block_params(exit)[0];
        b.ins().return_(&[r]);
        b.seal_all_blocks();
        b.finalize(isa.frontend_config());
        (f, base)
    }

    /// `sum(i < n) base + i` as a counted loop whose header tests and leaves (its exit is
    /// visited after the loop's body), and, if `looping` is false, as one pass of its body.
    fn counted(isa: &dyn TargetIsa, looping: bool) -> Function {
        let mut f = two_ints_to_int();
        let mut fctx = FunctionBuilderContext::new();
        let mut b = FunctionBuilder::new(&mut f, &mut fctx);
        let [entry, header, exit]: [Block; 3] = std::array::from_fn(|_| b.create_block());
        b.append_block_params_for_function_params(entry);
        b.append_block_param(header, I32);
        b.append_block_param(header, I32);
        b.append_block_param(exit, I32);
        b.switch_to_block(entry);
        let (base, n) = (b.block_params(entry)[0], b.block_params(entry)[1]);
        let zero = b.ins().iconst(I32, 0);
        b.ins().jump(header, &[zero.into(), zero.into()]);
        b.switch_to_block(header);
        let (i, sum) = (b.block_params(header)[0], b.block_params(header)[1]);
        let k = b.ins().iadd_imm_s(base, 1000);
        let term = b.ins().iadd(k, i);
        let sum = b.ins().iadd(sum, term);
        let next = b.ins().iadd_imm_s(i, 1);
        let more = b.ins().icmp(IntCC::SignedLessThan, next, n);
        let again = if looping { header } else { exit };
        let args = [next.into(), sum.into()];
        b.ins().brif(
            more,
            again,
            &args[..if looping { 2 } else { 1 }],
            exit,
            &[sum.into()],
        );
        b.switch_to_block(exit);
        let r = b.block_params(exit)[0];
        b.ins().return_(&[r]);
        b.seal_all_blocks();
        b.finalize(isa.frontend_config());
        f
    }

    /// Whether Cranelift's e-graph pass would lose a loop of `f` (after [`super::may_loop`]).
    fn loses(f: Function) -> bool {
        let mut ctx = Context::for_function(f);
        ctx.compute_cfg();
        ctx.compute_domtree();
        ctx.compute_loop_analysis();
        super::may_loop(&ctx.func)
            && super::cranelift_loses_loops(&ctx.func, &ctx.domtree, &ctx.loop_analysis)
    }

    #[test]
    fn only_a_loop_visited_after_one_of_its_exits_is_lost() {
        let isa = crate::isa::host(false).unwrap();
        assert!(loses(dispatch_loop(&*isa).0));
        assert!(super::may_loop(&counted(&*isa, true)));
        assert!(!loses(counted(&*isa, true)));
        assert!(!super::may_loop(&counted(&*isa, false)));
    }

    /// The instructions of `ctx`'s function that use `v`, each with whether it is in a loop.
    fn uses_of(ctx: &Context, v: Value) -> Vec<bool> {
        let f = &ctx.func;
        f.layout
            .blocks()
            .flat_map(|b| f.layout.block_insts(b).map(move |i| (b, i)))
            .filter(|&(_, i)| {
                f.dfg
                    .inst_args(i)
                    .iter()
                    .any(|&a| f.dfg.resolve_aliases(a) == v)
            })
            .map(|(b, _)| ctx.loop_analysis.innermost_loop(b).is_some())
            .collect()
    }

    #[test]
    fn an_invariant_left_in_the_cases_moves_before_the_loop_once() {
        let normal = crate::isa::host(false).unwrap();
        let large = crate::isa::large_isa(false).unwrap();
        let (f, base) = dispatch_loop(&*normal);

        // Cranelift's optimizations alone leave `base + 1000` in both cases (why this pass).
        let mut ctx = Context::for_function(f.clone());
        ctx.optimize(&*normal, &mut ControlPlane::default())
            .unwrap();
        ctx.compute_loop_analysis();
        assert_eq!(
            uses_of(&ctx, base),
            vec![true, true],
            "{}",
            ctx.func.display()
        );

        let mut ctx = Context::for_function(f);
        let (_, how, _) = crate::isa::compile(&mut ctx, &*normal, &*large).unwrap();
        assert_eq!(how, crate::isa::Compiled::Hoisted);
        ctx.compute_loop_analysis();
        assert_eq!(uses_of(&ctx, base), vec![false], "{}", ctx.func.display());
        cranelift_codegen::verify_function(&ctx.func, &*normal).unwrap();
    }
}
