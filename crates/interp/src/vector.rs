//! Vectors in the interpreter (spec/ir.md, "Vectors"): a `vec T N` value is an aggregate of
//! its `N` lane values, and every vector operation is its scalar operation lane by lane
//! ([`crate::pure`]'s), so the interpreter runs vectors of any shape.

use irkit_core::scalar::Lane;
use irkit_core::{Inst, Module, Op};

use crate::layout::{Layouts, ScalarValue, Shape};
use crate::trap::TrapKind;
use crate::value::Value;

type Res<T> = Result<T, TrapKind>;

fn malformed(what: impl Into<String>) -> TrapKind {
    TrapKind::Malformed(what.into())
}

/// The lane type and count of vector type `ty`.
pub(crate) fn shape(layouts: &Layouts, ty: Inst) -> Option<(Lane, usize)> {
    match layouts.get(ty)?.shape {
        Shape::Vector { lane, lanes } => Some((lane, usize::from(lanes))),
        _ => None,
    }
}

/// Whether `v` is a value of lane type `lane`.
pub(crate) fn lane_fits(lane: Lane, v: &Value) -> bool {
    match (lane, v) {
        (Lane::F32, Value::F32(_)) | (Lane::F64, Value::F64(_)) => true,
        (Lane::Int(w), v) => v.as_int().is_some_and(|(vw, _)| vw == w),
        _ => false,
    }
}

/// The bytes of a vector's lanes in memory order (little-endian lanes, lane 0 first).
pub(crate) fn to_bytes(lane: Lane, v: &Value) -> Res<Vec<u8>> {
    let Value::Aggregate(lanes) = v else {
        return Err(malformed("a vector operand is not a vector"));
    };
    let size = lane.size() as usize;
    let mut out = Vec::with_capacity(lanes.len() * size);
    for x in lanes.iter() {
        let bits = x
            .scalar_bits()
            .filter(|_| lane_fits(lane, x))
            .ok_or_else(|| malformed("a vector lane of the wrong type"))?;
        out.extend_from_slice(&bits.to_le_bytes()[..size]);
    }
    Ok(out)
}

/// The vector of lane type `lane` whose lanes are `bytes` in memory order.
pub(crate) fn from_bytes(lane: Lane, bytes: &[u8]) -> Value {
    let size = lane.size() as usize;
    let lanes = bytes
        .chunks_exact(size)
        .map(|c| {
            let mut b = [0u8; 8];
            b[..size].copy_from_slice(c);
            lane.scalar().value(u64::from_le_bytes(b))
        })
        .collect::<Vec<_>>();
    Value::Aggregate(lanes.into())
}

/// Reads an operand's value (of one lane, for a lane's scalar operation).
pub(crate) type Read<'a> = &'a dyn Fn(Inst) -> Res<Value>;

/// Evaluates an operation's scalar form on one lane: its operands read through the given
/// function, its result of the given lane type.
pub(crate) type LaneOp<'a> = &'a dyn Fn(Read<'_>, Lane) -> Res<Value>;

/// Whether pure operation `op` (instruction `inst`) works on vectors: a lane-wise operation
/// whose operand 0 is a vector, or `splat` / `shuffle`.
pub(crate) fn is_vector_op(m: &Module, layouts: &Layouts, inst: Inst, op: Op) -> bool {
    let lanewise = op.is_lanewise();
    matches!(op, Op::Splat | Op::Shuffle | Op::Swizzle)
        || (lanewise
            && m.operands(inst)
                .first()
                .and_then(|&o| m.value_type(o))
                .and_then(|t| shape(layouts, t))
                .is_some())
}

/// Evaluates vector operation `inst` ([`is_vector_op`]): `scalar` evaluates its scalar form
/// on one lane's operand values (read through the given function) with the lane's result
/// scalar.
pub(crate) fn eval(
    m: &Module,
    layouts: &Layouts,
    inst: Inst,
    op: Op,
    read: Read<'_>,
    scalar: LaneOp<'_>,
) -> Res<Value> {
    let ops = m.operands(inst);
    let vals = ops.iter().map(|&o| read(o)).collect::<Res<Vec<Value>>>()?;
    let (lane, lanes) = m
        .ty(inst)
        .and_then(|t| shape(layouts, t))
        .ok_or_else(|| malformed(format!("{op}: the result is not a vector")))?;
    let lanes_of = |k: usize| match vals.get(k) {
        Some(Value::Aggregate(vs)) => Ok(vs.clone()),
        _ => Err(malformed(format!("{op}: operand {k} is not a vector"))),
    };
    match op {
        Op::Splat => {
            let x = vals.first().ok_or_else(|| malformed("splat: no operand"))?;
            return Ok(Value::Aggregate(vec![x.clone(); lanes].into()));
        }
        Op::Shuffle => {
            let (a, b) = (lanes_of(0)?, lanes_of(1)?);
            let idx = m.payload(inst).as_bytes().unwrap_or(&[]);
            let out = idx
                .iter()
                .map(|&k| {
                    let k = usize::from(k);
                    a.get(k)
                        .or_else(|| k.checked_sub(a.len()).and_then(|j| b.get(j)))
                        .cloned()
                        .ok_or_else(|| malformed("shuffle: lane index out of range"))
                })
                .collect::<Res<Vec<Value>>>()?;
            return Ok(Value::Aggregate(out.into()));
        }
        Op::Swizzle => {
            let (a, idx) = (lanes_of(0)?, lanes_of(1)?);
            let zero = lane.scalar().value(0);
            let out = idx
                .iter()
                .map(|k| {
                    let k = k.as_int().map_or(u64::MAX, |(_, b)| b);
                    usize::try_from(k)
                        .ok()
                        .and_then(|k| a.get(k))
                        .cloned()
                        .unwrap_or_else(|| zero.clone())
                })
                .collect::<Vec<Value>>();
            return Ok(Value::Aggregate(out.into()));
        }
        Op::Bitcast => {
            let from = ops
                .first()
                .and_then(|&o| m.value_type(o))
                .and_then(|t| shape(layouts, t))
                .ok_or_else(|| malformed("bitcast: the operand is not a vector"))?;
            let bytes = to_bytes(from.0, vals.first().unwrap_or(&Value::I1(0)))?;
            return Ok(from_bytes(lane, &bytes));
        }
        _ => {}
    }
    let parts = (0..vals.len())
        .map(|k| match &vals[k] {
            Value::Aggregate(vs) => Some(vs.clone()),
            _ => None,
        })
        .collect::<Vec<_>>();
    let mut out = Vec::with_capacity(lanes);
    for j in 0..lanes {
        // Operand `o`'s value in lane `j` (a scalar operand, a shift amount, is every lane's).
        let lane_read = |o: Inst| -> Res<Value> {
            let k = ops
                .iter()
                .position(|&x| x == o)
                .ok_or_else(|| malformed("missing operand"))?;
            match &parts[k] {
                Some(vs) => vs
                    .get(j)
                    .cloned()
                    .ok_or_else(|| malformed(format!("{op}: vectors of different lengths"))),
                None => Ok(vals[k].clone()),
            }
        };
        let v = scalar(&lane_read, lane)?;
        out.push(match (op, v) {
            // A comparison's lane is a mask: all ones or zero.
            (Op::Icmp | Op::Fcmp, Value::I1(b)) => lane.scalar().value(0u64.wrapping_sub(b)),
            (_, v) => v,
        });
    }
    Ok(Value::Aggregate(out.into()))
}
