//! Vector typing (spec/ir.md, "Vectors"): the lane-wise operations on `vec T N` operands,
//! `splat`, `shuffle`, and `extract`/`insert` of a lane.
//!
//! V1: a lane-wise arithmetic operation takes vectors of one type whose lanes its scalar rule
//! accepts, and yields that type; a shift or rotate takes its amount as one scalar of the lane
//! type. V2: a comparison of two vectors of one type yields `vec iW N`, `W` the lane width
//! (each lane all ones or zero). V3: a lane-wise conversion maps `vec T N` to `vec U N` where
//! the scalar conversion maps `T` to `U`; `bitcast` maps a vector to any vector of the same
//! size. V4: `splat` makes `vec T N` of one `T`. V5: `shuffle` takes two vectors of one type
//! `vec T N` and, for each byte `k` of its payload (1 to 256 bytes, each below `2N`), yields
//! lane `k` of their concatenation: a `vec T M`, `M` the payload's length. V6: `extract` and
//! `insert` of a vector name a lane below `N` and read or write a `T`. V7: `swizzle` takes a
//! `vec T N` and a vector of integer lanes `vec iK M` and yields a `vec T M`.

use crate::{Conversion, Inst, Op, Opcode, Payload};

use super::{Cx, VTy};

impl Cx<'_> {
    /// Whether `i` is a lane-wise operation (arithmetic, comparison, conversion) whose first
    /// operand is a vector: typed by [`Cx::check_vector_op`] instead of the scalar rules.
    pub(super) fn vector_operand(&self, i: Inst) -> bool {
        let Some(d) = self.live(i) else { return false };
        let lanewise = d.opcode.known().is_some_and(Op::is_lanewise);
        lanewise
            && d.operands
                .first()
                .and_then(|&o| self.live(o))
                .and_then(|od| od.ty)
                .is_some_and(|t| self.is_vec(VTy(Some(t))))
    }

    /// V1–V3 for a lane-wise operation `op` whose operand 0 is a vector.
    pub(super) fn check_vector_op(&mut self, i: Inst, op: Op, r: Option<VTy>) {
        let Some(a) = self.val(i, 0) else { return };
        let Some((lane, n)) = self.vec_of(a) else {
            return;
        };
        let lane = VTy(Some(lane));
        if let Some(c) = op.conversion() {
            return self.check_vector_conversion(i, c, a, lane, n, r);
        }
        let int = self.int_w(lane).is_some();
        let float = self.float_w(lane).is_some();
        let (ok, what) = match op {
            op_int_binary!() | op_int_unary!() => (int, "a vector of integer lanes"),
            op_float_binary!() | op_float_unary!() => (float, "a vector of float lanes"),
            _ => (true, ""),
        };
        if !self.need(i, 0, a, ok, what) {
            return;
        }
        let shift = matches!(op, Op::Shl | Op::Lshr | Op::Ashr | Op::Rotl | Op::Rotr);
        let binary = matches!(op, op_int_binary!() | op_float_binary!() | op_compare!());
        if binary && let Some(b) = self.val(i, 1) {
            if shift {
                self.need_eq(i, 1, b, lane);
            } else {
                self.need_eq(i, 1, b, a);
            }
        }
        let Some(r) = r else { return };
        if matches!(op, op_compare!()) {
            let w = self.int_w(lane).or(self.float_w(lane)).unwrap_or(0);
            let ok = self
                .vec_of(r)
                .is_some_and(|(rl, rn)| rn == n && self.int_w(VTy(Some(rl))) == Some(w));
            self.need_res(i, r, ok, &format!("vec i{w} {n} (a mask per lane)"));
        } else {
            self.need_res_eq(i, r, a);
        }
    }

    /// V3: `op` from `vec T N` (`a`, lane `lane`) to the result type.
    fn check_vector_conversion(
        &mut self,
        i: Inst,
        op: Conversion,
        a: VTy,
        lane: VTy,
        n: u64,
        r: Option<VTy>,
    ) {
        let Some(r) = r else { return };
        let size = |cx: &Self, v: VTy| {
            let (l, n) = cx.vec_of(v)?;
            let d = cx.live(l)?;
            Some(crate::scalar::Lane::of(d.opcode)?.size() * n)
        };
        if op == Conversion::Bitcast {
            let ok = self.is_vec(r) && size(self, r) == size(self, a);
            if !ok {
                let msg = format!(
                    "`bitcast` from {} to {}: a vector only to a vector of the same size",
                    self.vty_str(a),
                    self.vty_str(r)
                );
                self.err(i, msg);
            }
            return;
        }
        let Some((rl, rn)) = self.vec_of(r) else {
            self.need_res(i, r, false, &format!("a vector of {n} lanes"));
            return;
        };
        if rn != n {
            self.need_res(i, r, false, &format!("a vector of {n} lanes"));
            return;
        }
        self.check_conversion_of(i, op, lane, Some(VTy(Some(rl))));
    }

    /// V4: `splat %x` of type `vec T N`, `%x` a `T`.
    pub(super) fn check_splat(&mut self, i: Inst, r: Option<VTy>) {
        let Some(r) = r else { return };
        let Some((lane, _)) = self.vec_of(r) else {
            self.need_res(i, r, false, "a vector type");
            return;
        };
        if let Some(x) = self.val(i, 0) {
            self.need_eq(i, 0, x, VTy(Some(lane)));
        }
    }

    /// V5: `shuffle %a, %b, [k…]`.
    pub(super) fn check_shuffle(&mut self, i: Inst, r: Option<VTy>) {
        let Some(a) = self.val(i, 0) else { return };
        let Some((lane, n)) = self.vec_of(a) else {
            self.need(i, 0, a, false, "a vector type");
            return;
        };
        if let Some(b) = self.val(i, 1) {
            self.need_eq(i, 1, b, a);
        }
        let idx: Vec<u8> = match self.live(i).map(|d| &*d.payload) {
            Some(Payload::Bytes(b)) => b.to_vec(),
            _ => return,
        };
        if idx.is_empty() || idx.len() as u64 > crate::scalar::MAX_LANES {
            let msg = format!(
                "`shuffle` takes 1 to {} lane indices, found {}",
                crate::scalar::MAX_LANES,
                idx.len()
            );
            return self.err(i, msg);
        }
        if let Some((k, &x)) = idx
            .iter()
            .enumerate()
            .find(|&(_, &x)| u64::from(x) >= 2 * n)
        {
            let msg = format!(
                "`shuffle` lane index {k} is {x}, not below {} (two vectors of {n} lanes)",
                2 * n
            );
            return self.err(i, msg);
        }
        let Some(r) = r else { return };
        let ok = self
            .vec_of(r)
            .is_some_and(|(rl, rn)| rl == lane && rn == idx.len() as u64);
        let lane_s = self.ty_str(lane);
        self.need_res(i, r, ok, &format!("vec {lane_s} {}", idx.len()));
    }

    /// V7: `swizzle %v, %idx`.
    pub(super) fn check_swizzle(&mut self, i: Inst, r: Option<VTy>) {
        let Some(v) = self.val(i, 0) else { return };
        let Some((lane, _)) = self.vec_of(v) else {
            self.need(i, 0, v, false, "a vector type");
            return;
        };
        let Some(idx) = self.val(i, 1) else { return };
        let m = self
            .vec_of(idx)
            .filter(|&(il, _)| self.int_w(VTy(Some(il))).is_some())
            .map(|(_, m)| m);
        let Some(m) = m else {
            self.need(i, 1, idx, false, "a vector of integer lanes");
            return;
        };
        let Some(r) = r else { return };
        let ok = self.vec_of(r).is_some_and(|(rl, rn)| rl == lane && rn == m);
        let lane_s = self.ty_str(lane);
        self.need_res(i, r, ok, &format!("vec {lane_s} {m}"));
    }

    /// V6: `extract`/`insert` of lane `k` of vector `v`.
    pub(super) fn check_lane_access(&mut self, i: Inst, op: Opcode, v: VTy, r: Option<VTy>) {
        let Some((lane, n)) = self.vec_of(v) else {
            return;
        };
        let k = self
            .live(i)
            .and_then(|d| d.payload.as_int())
            .unwrap_or(u64::MAX);
        if k >= n {
            let msg = format!(
                "`{op}` lane {k} is out of range for {} ({n} lanes)",
                self.vty_str(v)
            );
            return self.err(i, msg);
        }
        let lane = VTy(Some(lane));
        if op == Opcode::EXTRACT {
            if let Some(r) = r {
                self.need_res_eq(i, r, lane);
            }
        } else {
            if let Some(x) = self.val(i, 1) {
                self.need_eq(i, 1, x, lane);
            }
            if let Some(r) = r {
                self.need_res_eq(i, r, v);
            }
        }
    }
}
