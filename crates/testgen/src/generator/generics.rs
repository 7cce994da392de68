//! Generics: an interface with one requirement, a conformance of `i32` to it, a generic
//! function whose body calls the requirement through `lookup_witness`, a generic type, and a
//! function calling a `specialize` of the generic (so every generics opcode appears).

use irkit_core::{Inst, Opcode, Payload};

use super::Gen;

impl Gen<'_, '_> {
    /// Adds the generics fragment (with probability about `percent`/100); with `export`, the
    /// function using the specializations is exported (a root of a library link).
    pub(crate) fn gen_generics(&mut self, percent: usize, export: bool) {
        if !self.coin(percent) {
            return;
        }
        let i1 = self.m.ty_i1();
        let i32t = self.m.ty_i32();
        // interface Ord { less: fn(Self, Self) -> i1 }
        let iface_name = self.fresh("Ord");
        let req_name = self.fresh("less");
        let iface = self.new_def(Opcode::INTERFACE, None, &iface_name);
        let req_ty = self.m.ty_fn(i1, &[iface, iface]).expect("fn types intern");
        let req = self.new_def(Opcode::INTERFACE_REQ, Some(req_ty), &req_name);
        self.m.set_operands(iface, vec![req]).expect("operands set");
        // fn(i32, i32) -> i1 { icmp slt }
        let lt_ty = self.m.ty_fn(i1, &[i32t, i32t]).expect("fn types intern");
        let lt_name = self.fresh("lt");
        let lt = self.new_def(Opcode::FUNC, Some(lt_ty), &lt_name);
        let (b, ps) = self.raw_block(lt, &[i32t, i32t]);
        let c = self.emit_payload(b, Opcode::ICMP, Some(i1), ps.clone(), Payload::Int(12));
        self.emit_raw(b, Opcode::RET, None, vec![c]);
        // witness_table i32 { less = lt }
        let table_name = self.fresh("ord_i32");
        let table = self.new_def(Opcode::WITNESS_TABLE, Some(iface), &table_name);
        self.m
            .set_operands(table, vec![i32t])
            .expect("operands set");
        let entry = self
            .m
            .new_inst(Opcode::WITNESS_ENTRY, None, vec![req, lt], Payload::None)
            .expect("entries are created");
        self.m.append_child(table, entry).expect("entries attach");
        // generic max<T, w: Ord(T)>(a: T, b: T) -> T
        let g_name = self.fresh("max");
        let g = self.new_def(Opcode::GENERIC, None, &g_name);
        let t = self
            .m
            .intern(Opcode::TYPE_PARAM, None, &[g], Payload::Int(0))
            .expect("parameters intern");
        let w = self
            .m
            .intern(Opcode::WITNESS_PARAM, Some(iface), &[g, t], Payload::Int(1))
            .expect("parameters intern");
        self.m.set_operands(g, vec![t, w]).expect("operands set");
        // How the link compiles it: by the module's size, so the random stream is untouched
        // (a clone per instance, one shared version, or the link's choice).
        match self.m.top_level().len() % 3 {
            0 => self.decorate(g, Opcode::SPECIALIZE_ALWAYS, Vec::new(), Payload::None),
            1 => self.decorate(g, Opcode::DYNAMIC_DISPATCH, Vec::new(), Payload::None),
            _ => {}
        }
        let sig = self.m.ty_fn(t, &[t, t]).expect("fn types intern");
        let body = self
            .m
            .new_inst(Opcode::FUNC, Some(sig), Vec::new(), Payload::None)
            .expect("functions are created");
        self.m.append_child(g, body).expect("functions attach");
        let (b, ps) = self.raw_block(body, &[t, t]);
        let less_ty = self.m.ty_fn(i1, &[t, t]).expect("fn types intern");
        let less = self.emit_raw(b, Opcode::LOOKUP_WITNESS, Some(less_ty), vec![w, req]);
        let lt_v = self.emit_raw(b, Opcode::CALL, Some(i1), vec![less, ps[0], ps[1]]);
        let r = self.emit_raw(b, Opcode::SELECT, Some(t), vec![lt_v, ps[1], ps[0]]);
        self.emit_raw(b, Opcode::RET, None, vec![r]);
        // generic Pair<T> = struct {T, T}
        let p_name = self.fresh("Pair");
        let pair_g = self.new_def(Opcode::GENERIC, None, &p_name);
        let pt = self
            .m
            .intern(Opcode::TYPE_PARAM, None, &[pair_g], Payload::Int(0))
            .expect("parameters intern");
        self.m.set_operands(pair_g, vec![pt]).expect("operands set");
        let shape = self.m.ty_struct(&[pt, pt]).expect("struct types intern");
        self.m.set_type(pair_g, Some(shape)).expect("types set");
        let pair_i32 = self
            .m
            .intern(Opcode::SPECIALIZE, None, &[pair_g, i32t], Payload::None)
            .expect("specialize interns");
        // fn(i32, i32) -> i32 { max<i32>(a, b) }, through a Pair<i32>
        let spec_ty = self.m.ty_fn(i32t, &[i32t, i32t]).expect("fn types intern");
        let spec = self
            .m
            .intern(
                Opcode::SPECIALIZE,
                Some(spec_ty),
                &[g, i32t, table],
                Payload::None,
            )
            .expect("specialize interns");
        let user_name = self.fresh("use_max");
        let user = self.new_def(Opcode::FUNC, Some(spec_ty), &user_name);
        if export {
            self.export(user, &user_name);
        }
        let (b, ps) = self.raw_block(user, &[i32t, i32t]);
        let zero = self.m.const_zero(pair_i32).expect("constants intern");
        let p = self.emit_payload(
            b,
            Opcode::INSERT,
            Some(pair_i32),
            vec![zero, ps[0]],
            Payload::Int(0),
        );
        let a = self.emit_payload(b, Opcode::EXTRACT, Some(i32t), vec![p], Payload::Int(0));
        let m = self.emit_raw(b, Opcode::CALL, Some(i32t), vec![spec, a, ps[1]]);
        self.emit_raw(b, Opcode::RET, None, vec![m]);
    }

    /// A new top-level definition without operands.
    fn new_def(&mut self, op: Opcode, ty: Option<Inst>, name: &str) -> Inst {
        let d = self
            .m
            .new_inst(op, ty, Vec::new(), Payload::None)
            .expect("definitions are created");
        let root = self.m.root();
        self.m.append_child(root, d).expect("definitions attach");
        self.m.set_name(d, name).expect("definitions take names");
        d
    }
}
