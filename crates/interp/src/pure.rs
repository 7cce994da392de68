//! The pure core operations (integer and float arithmetic, `icmp`, `fcmp`, the conversions,
//! `select`, `extract`, `insert`, `elem`) applied to operand values: shared by the block-form
//! execution loop ([`crate::exec`]) and the NOIR evaluator ([`crate::proc_eval`]), which differ only
//! in where operand values come from.

use irkit_core::{Conversion, FloatCC, Inst, IntCC, Module, Op};

use crate::layout::{Layouts, Shape};
use crate::ops;
use crate::trap::TrapKind;
use crate::value::{Value, sext};
use crate::vector;

type Res<T> = Result<T, TrapKind>;

fn malformed(what: impl Into<String>) -> TrapKind {
    TrapKind::Malformed(what.into())
}

/// The operand values of one instruction, read on demand.
struct Operands<'a, R> {
    ops: &'a [Inst],
    read: R,
}

impl<R: Fn(Inst) -> Res<Value>> Operands<'_, R> {
    fn get(&self, i: usize) -> Res<Value> {
        let v = *self
            .ops
            .get(i)
            .ok_or_else(|| malformed("missing operand"))?;
        (self.read)(v)
    }

    fn int(&self, i: usize) -> Res<(u32, u64)> {
        self.get(i)?
            .as_int()
            .ok_or_else(|| malformed("operand is not an integer"))
    }

    fn ptr(&self, i: usize) -> Res<u64> {
        self.get(i)?
            .as_ptr()
            .ok_or_else(|| malformed("operand is not a ptr"))
    }
}

/// Performs pure operation `inst` of `m`, reading its operand values with `read`. Traps only
/// for a division by zero or `MIN / -1`, and with [`TrapKind::Malformed`] on operands of the
/// wrong types or an opcode that is not pure.
pub(crate) fn eval(
    m: &Module,
    layouts: &Layouts,
    inst: Inst,
    read: impl Fn(Inst) -> Res<Value>,
) -> Res<Value> {
    let opcode = m.opcode(inst);
    let op = opcode
        .known()
        .ok_or_else(|| malformed(format!("{opcode} is not a pure operation")))?;
    if vector::is_vector_op(m, layouts, inst, op) {
        return vector::eval(m, layouts, inst, op, &read, &|lane_read, lane| {
            scalar_op(m, layouts, inst, op, lane_read, Some(lane.scalar()))
        });
    }
    let result = m.ty(inst).and_then(|t| layouts.scalar(t));
    scalar_op(m, layouts, inst, op, read, result)
}

/// [`eval`] of a scalar operation, whose result has scalar type `result` (if it has one).
fn scalar_op(
    m: &Module,
    layouts: &Layouts,
    inst: Inst,
    op: Op,
    read: impl Fn(Inst) -> Res<Value>,
    result: Option<crate::layout::Scalar>,
) -> Res<Value> {
    let not_pure = || malformed(format!("{op} is not a pure operation"));
    let o = Operands {
        ops: m.operands(inst),
        read,
    };
    let result_scalar = || result.ok_or_else(|| malformed("result type is not a scalar"));
    let v = match op {
        irkit_core::op_int_binary!() => {
            let op = op.int_binary().ok_or_else(not_pure)?;
            let (w, a) = o.int(0)?;
            let (wb, b) = o.int(1)?;
            if w != wb {
                return Err(malformed("operands of different widths"));
            }
            let r = ops::int_binop(op, w, a, b)?;
            Value::int(w, r)
        }
        irkit_core::op_int_unary!() => {
            let op = op.int_unary().ok_or_else(not_pure)?;
            let (w, a) = o.int(0)?;
            Value::int(w, ops::int_unop(op, w, a))
        }
        irkit_core::op_float_unary!() => {
            let op = op.float_unary().ok_or_else(not_pure)?;
            match o.get(0)? {
                Value::F32(a) => Some(Value::F32(ops::float_unop::<f32>(op, a))),
                Value::F64(a) => Some(Value::F64(ops::float_unop::<f64>(op, a))),
                _ => None,
            }
        }
        irkit_core::op_float_binary!() => {
            let op = op.float_binary().ok_or_else(not_pure)?;
            match (o.get(0)?, o.get(1)?) {
                (Value::F32(a), Value::F32(b)) => {
                    Some(Value::F32(ops::float_binop::<f32>(op, a, b)))
                }
                (Value::F64(a), Value::F64(b)) => {
                    Some(Value::F64(ops::float_binop::<f64>(op, a, b)))
                }
                _ => None,
            }
        }
        Op::Icmp => {
            let cc = m.payload(inst).as_int().and_then(IntCC::from_code);
            let (a, b) = (o.get(0)?, o.get(1)?);
            match (
                cc,
                a.as_int().or(a.as_ptr().map(|p| (64, p))),
                b.as_int().or(b.as_ptr().map(|p| (64, p))),
            ) {
                (Some(cc), Some((w, a)), Some((wb, b))) if w == wb => {
                    Some(Value::bool(cc.eval(w, a, b)))
                }
                _ => None,
            }
        }
        Op::Fcmp => {
            let cc = m.payload(inst).as_int().and_then(FloatCC::from_code);
            let (a, b) = (o.get(0)?, o.get(1)?);
            let same = std::mem::discriminant(&a) == std::mem::discriminant(&b);
            match (cc, ops::float_of(&a), ops::float_of(&b)) {
                (Some(cc), Some(a), Some(b)) if same => Some(Value::bool(cc.eval(a, b))),
                _ => None,
            }
        }
        irkit_core::op_conversions!() => {
            let op = op.conversion().ok_or_else(not_pure)?;
            let x = o.get(0)?;
            if op == Conversion::Bitcast && matches!(x, Value::Aggregate(_)) {
                Some(x)
            } else {
                Some(ops::convert(op, &x, result_scalar()?)?)
            }
        }
        Op::Select => {
            let (_, c) = o.int(0)?;
            Some(o.get(if c & 1 == 1 { 1 } else { 2 })?)
        }
        Op::Elem => Some(Value::Ptr(elem(layouts, &o)?)),
        Op::Extract => {
            let k = m.payload(inst).as_int().unwrap_or(u64::MAX);
            match o.get(0)? {
                Value::Aggregate(vs) => usize::try_from(k).ok().and_then(|k| vs.get(k).cloned()),
                _ => None,
            }
        }
        Op::Insert => {
            let k = m.payload(inst).as_int().unwrap_or(u64::MAX);
            let x = o.get(1)?;
            match o.get(0)? {
                Value::Aggregate(mut vs) => {
                    match usize::try_from(k)
                        .ok()
                        .and_then(|k| std::sync::Arc::make_mut(&mut vs).get_mut(k))
                    {
                        Some(slot) => {
                            *slot = x;
                            Some(Value::Aggregate(vs))
                        }
                        None => None,
                    }
                }
                _ => None,
            }
        }
        // Effects, control, and what is not an instruction of a body: the callers route only
        // `op_pure!()` here, and every one of those has an arm above.
        // A vector from a scalar or from lanes: `eval` sends them to `vector::eval`.
        irkit_core::op_lanes!()
        | irkit_core::op_memory!()
        | irkit_core::op_linear_memory!()
        | irkit_core::op_calls!()
        | irkit_core::op_terminators!()
        | irkit_core::op_objects!()
        | irkit_core::op_existentials!()
        | irkit_core::op_outside_bodies!()
        | irkit_core::op_noir!() => return Err(not_pure()),
    };
    v.ok_or_else(|| malformed(format!("{op}: operands of the wrong types")))
}

/// `elem T, %p, %i0, ...`: the address, wrapping modulo 2^64.
fn elem<R: Fn(Inst) -> Res<Value>>(layouts: &Layouts, o: &Operands<'_, R>) -> Res<u64> {
    let bad = || malformed("elem: bad type path");
    let mut ty = *o.ops.first().ok_or_else(bad)?;
    let mut addr = o.ptr(1)?;
    for (n, i) in (2..o.ops.len()).enumerate() {
        let (w, bits) = o.int(i)?;
        let idx = sext(bits, w);
        if n == 0 {
            let size = layouts.get(ty).ok_or_else(bad)?.size;
            addr = addr.wrapping_add((idx as u64).wrapping_mul(size));
            continue;
        }
        match &layouts.get(ty).ok_or_else(bad)?.shape {
            Shape::Array { elem, .. } => {
                let size = layouts.get(*elem).ok_or_else(bad)?.size;
                addr = addr.wrapping_add((idx as u64).wrapping_mul(size));
                ty = *elem;
            }
            Shape::Struct { fields, offsets } => {
                let k = usize::try_from(bits).map_err(|_| bad())?;
                let (f, off) = fields.get(k).zip(offsets.get(k)).ok_or_else(bad)?;
                addr = addr.wrapping_add(*off);
                ty = *f;
            }
            Shape::Scalar(_) | Shape::Vector { .. } => return Err(bad()),
        }
    }
    Ok(addr)
}
