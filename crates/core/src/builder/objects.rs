//! Classes, traits and objects (spec/ir.md, "Objects"): their definitions and members on the
//! builder, and the object instructions on the typed path (`b.ins().classalloc(c)`, …).
//!
//! A front end says what a class holds, by name; the linker decides where everything lives
//! (spec/linking.md, "Objects"). Members are checked by the linker, which sees the whole
//! hierarchy; the typed path checks what one module can: the kind of definition named and the
//! object operand's type.

use crate::{CoreError, Inst, Opcode, Payload};

use super::check::{Class, show};
use super::{Builder, Ins};

impl Builder<'_> {
    /// A `class` named `name` (a name hint) extending `supers`: at most one parent class,
    /// first, then traits. Its members are added with [`Builder::field_def`] and
    /// [`Builder::method_def`]; marked [`Builder::import`] and without members, it declares a
    /// class of another module.
    pub fn class(&mut self, name: &str, supers: &[Inst]) -> Result<Inst, CoreError> {
        self.definition(Opcode::CLASS, name, None, supers.to_vec())
    }

    /// A `trait` named `name` extending the traits `supers` (`trait` is a Rust keyword).
    pub fn trait_def(&mut self, name: &str, supers: &[Inst]) -> Result<Inst, CoreError> {
        self.definition(Opcode::TRAIT, name, None, supers.to_vec())
    }

    /// An `object` (a singleton class) named `name` extending `supers`, as a class does.
    pub fn object(&mut self, name: &str, supers: &[Inst]) -> Result<Inst, CoreError> {
        self.definition(Opcode::OBJECT, name, None, supers.to_vec())
    }

    /// Field `name` of type `ty` of the class or object `owner`.
    pub fn field_def(&mut self, owner: Inst, name: &str, ty: Inst) -> Result<Inst, CoreError> {
        self.member(
            owner,
            Opcode::FIELD_DEF,
            vec![ty],
            Payload::Str(name.into()),
        )
    }

    /// Method `selector` of signature `sig` (a `fn` type whose first parameter is the
    /// receiver, `ptr`) of `owner`, implemented by the function `body`, or abstract (required,
    /// in a trait) without one.
    pub fn method_def(
        &mut self,
        owner: Inst,
        selector: &str,
        sig: Inst,
        body: Option<Inst>,
    ) -> Result<Inst, CoreError> {
        let mut ops = vec![sig];
        ops.extend(body);
        self.member(
            owner,
            Opcode::METHOD_DEF,
            ops,
            Payload::Str(selector.into()),
        )
    }

    /// The constructor of the object `owner`: a function of type `fn(ptr) -> void`, run once
    /// with the instance on its first `instance`.
    pub fn ctor_def(&mut self, owner: Inst, ctor: Inst) -> Result<Inst, CoreError> {
        self.member(owner, Opcode::CTOR_DEF, vec![ctor], Payload::None)
    }

    fn member(
        &mut self,
        owner: Inst,
        op: Opcode,
        ops: Vec<Inst>,
        payload: Payload,
    ) -> Result<Inst, CoreError> {
        let i = self.m.new_inst(op, None, ops, payload)?;
        self.m.append_child(owner, i)?;
        Ok(i)
    }

    /// Panics unless `d` is a definition with one of the opcodes `kinds`.
    fn names_kind(&self, op: &str, d: Inst, kinds: &[Opcode]) {
        let ok = self
            .m
            .get(d)
            .is_some_and(|x| !x.is_dead() && kinds.contains(&x.opcode()));
        if !ok {
            let names: Vec<String> = kinds.iter().map(|k| format!("`{k}`")).collect();
            panic!(
                "`{op}`: {} is not a {}",
                show(self.m, d),
                names.join(" or ")
            );
        }
    }
}

/// What `method`, `is` and `as` may name.
const TYPES: [Opcode; 3] = [Opcode::CLASS, Opcode::OBJECT, Opcode::TRAIT];

impl Ins<'_, '_> {
    fn object_inst(&mut self, op: Opcode, ty: Inst, ops: Vec<Inst>, payload: Payload) -> Inst {
        let name = op.name().unwrap_or("?");
        Builder::done(name, self.b.inst(op, Some(ty), ops, payload))
    }

    /// `classalloc @class`: a new object of a class (zeroed fields), a `ptr`.
    pub fn classalloc(&mut self, class: Inst) -> Inst {
        self.b.cursor("classalloc");
        self.b.names_kind("classalloc", class, &[Opcode::CLASS]);
        let ptr = self.b.m.ty_ptr();
        self.object_inst(Opcode::CLASSALLOC, ptr, vec![class], Payload::None)
    }

    /// `field "name" @class, %object`: the address of a field `class` declares or inherits.
    pub fn field(&mut self, class: Inst, name: &str, object: Inst) -> Inst {
        self.b.cursor("field");
        self.b
            .names_kind("field", class, &[Opcode::CLASS, Opcode::OBJECT]);
        self.b.value_of("field", 1, object, Class::Ptr);
        let ptr = self.b.m.ty_ptr();
        let payload = Payload::Str(name.into());
        self.object_inst(Opcode::FIELD, ptr, vec![class, object], payload)
    }

    /// `method "selector" %object, @class`: the implementation of a method for the object's
    /// class (a function address, called with `call_indirect` and the method's signature).
    pub fn method(&mut self, object: Inst, class: Inst, selector: &str) -> Inst {
        self.b.cursor("method");
        self.b.value_of("method", 0, object, Class::Ptr);
        self.b.names_kind("method", class, &TYPES);
        let ptr = self.b.m.ty_ptr();
        let payload = Payload::Str(selector.into());
        self.object_inst(Opcode::METHOD, ptr, vec![object, class], payload)
    }

    /// `dynmethod "selector" %object`: a method looked up by selector alone.
    pub fn dynmethod(&mut self, object: Inst, selector: &str) -> Inst {
        self.b.cursor("dynmethod");
        self.b.value_of("dynmethod", 0, object, Class::Ptr);
        let ptr = self.b.m.ty_ptr();
        let payload = Payload::Str(selector.into());
        self.object_inst(Opcode::DYNMETHOD, ptr, vec![object], payload)
    }

    /// `is @ty, %object`: whether the object is an instance of a class, object or trait (an
    /// `i1`; false for null).
    pub fn is(&mut self, ty: Inst, object: Inst) -> Inst {
        self.b.cursor("is");
        self.b.names_kind("is", ty, &TYPES);
        self.b.value_of("is", 1, object, Class::Ptr);
        let i1 = self.b.m.ty_i1();
        self.object_inst(Opcode::IS, i1, vec![ty, object], Payload::None)
    }

    /// `as @ty, %object`: the object, which must be an instance of `ty` or null (else the
    /// `invalid cast` trap). (`as` is a Rust keyword.)
    pub fn cast(&mut self, ty: Inst, object: Inst) -> Inst {
        self.b.cursor("as");
        self.b.names_kind("as", ty, &TYPES);
        self.b.value_of("as", 1, object, Class::Ptr);
        let ptr = self.b.m.ty_ptr();
        self.object_inst(Opcode::AS, ptr, vec![ty, object], Payload::None)
    }

    /// `instance @object`: the singleton's instance, made and constructed on first use.
    pub fn instance(&mut self, object: Inst) -> Inst {
        self.b.cursor("instance");
        self.b.names_kind("instance", object, &[Opcode::OBJECT]);
        let ptr = self.b.m.ty_ptr();
        self.object_inst(Opcode::INSTANCE, ptr, vec![object], Payload::None)
    }
}

#[cfg(test)]
mod tests {
    use crate::verify::verify;
    use crate::{Builder, Module};

    /// A trait, a class implementing it and a program using it, built on the builder: the
    /// module verifies and prints as the text form writes it.
    #[test]
    fn a_class_and_its_uses_verify() {
        let mut m = Module::new();
        let mut b = Builder::new(&mut m);
        let (ptr, i64t) = (b.module().ty_ptr(), b.module().ty_i64());
        let sig = b.module().ty_fn(i64t, &[ptr]).unwrap();
        let shape = b.trait_def("Shape", &[]).unwrap();
        b.method_def(shape, "area", sig, None).unwrap();
        let area = b.func("sq_area", sig).unwrap();
        let sq = b.class("Square", &[shape]).unwrap();
        b.field_def(sq, "side", i64t).unwrap();
        b.method_def(sq, "area", sig, Some(area)).unwrap();
        let (entry, p) = b.entry_block(area).unwrap();
        b.position_at_end(entry);
        let side = b.ins().field(sq, "side", p[0]);
        let s = b.ins().load(i64t, side);
        let a = b.ins().imul(s, s);
        b.ins().ret(Some(a));
        let main_sig = b.module().ty_fn(i64t, &[]).unwrap();
        let main = b.func("main", main_sig).unwrap();
        let (entry, _) = b.entry_block(main).unwrap();
        b.position_at_end(entry);
        let o = b.ins().classalloc(sq);
        let f = b.ins().method(o, shape, "area");
        let r = b.ins().call_indirect(sig, f, &[o]);
        let _ = b.ins().is(shape, o);
        let _ = b.ins().cast(sq, o);
        let _ = b.ins().dynmethod(o, "area");
        b.ins().ret(Some(r));
        verify(&m).unwrap_or_else(|e| panic!("{e:?}"));
    }

    #[test]
    #[should_panic(expected = "`classalloc`: @Shape is not a `class`")]
    fn classalloc_of_a_trait_panics() {
        let mut m = Module::new();
        let mut b = Builder::new(&mut m);
        let shape = b.trait_def("Shape", &[]).unwrap();
        let i32t = b.module().ty_i32();
        let sig = b.module().ty_fn(i32t, &[]).unwrap();
        let f = b.func("f", sig).unwrap();
        let (entry, _) = b.entry_block(f).unwrap();
        b.position_at_end(entry);
        b.ins().classalloc(shape);
    }
}
