//! The code cache's key of a function, computed from the **irkit** function before anything
//! is lowered (spec/backends.md, "The code cache", gives the bytes hashed): a BLAKE3 hash of
//! everything its machine code, its name table and its trap messages depend on:
//!
//! * the cache format version, irkit's version and the Cranelift version it is built with;
//! * the target: the ISA's name, its triple, its shared flags and its ISA-specific flags (all
//!   as Cranelift prints them; the [`crate::CodegenLevel`] is among them);
//! * the lowering options that reach function bodies (call depth limit, data reach, session
//!   mode);
//! * the function's own tree: every instruction of it with its opcode, payload, type,
//!   decorations (names, which trap messages spell), operands and children; a local value by
//!   its position in the function, a type or constant by its own tree where the function
//!   first uses it and by its number (in first-use order) after that, and a definition by its
//!   position in the function's **reference list** (the definitions it refers to, in first-use
//!   order), with the largest callee frame of each indirect call's type;
//! * for each entry of the reference list, what lowering takes from it: for a function how it
//!   is called (an IR function with a body, a C function, `abort`, one that cannot be called)
//!   with its Cranelift signature, linkage and `stackalloc` frame; for a global its linkage,
//!   writability and thread-locality; and the symbol name of either **unless it is local**.
//!
//! Local symbols (`irkit.<index>.<name>`) are not in the key: a cache entry names the symbols
//! its code refers to by reference-list position (`crate::names`), resolved again in every
//! build, so renumbering or renaming other definitions keeps a function's entry valid and an
//! edit invalidates the edited function and those whose code it changes (a callee's signature
//! or frame).

use cranelift_codegen::isa::TargetIsa;
use cranelift_module::{Linkage, Module as ClModule};
use irkit_core::{Inst, Opcode, Payload};
use rustc_hash::FxHashMap as HashMap;

use crate::context::{Callee, Ctx};

/// The version of the cache's entry format and key; a change makes every entry foreign.
pub(crate) const FORMAT_VERSION: u32 = 2;

/// The Cranelift version irkit compiles with (the crate pins it exactly).
const CRANELIFT: &str = "cranelift-codegen 0.135.8";

/// The deepest type or constant hashed; a deeper one (never in a verified module, whose
/// nesting is at most `irkit_core::MAX_NESTING`) makes the function uncacheable.
const MAX_DEPTH: usize = 1024;

/// A cache key.
pub(crate) type Key = [u8; 32];

/// What every key of one build starts with: the versions and the target.
#[derive(Clone, Debug)]
pub(crate) struct KeyPrefix(Vec<u8>);

impl KeyPrefix {
    /// The prefix for code compiled by `isa`.
    pub(crate) fn new(isa: &dyn TargetIsa) -> KeyPrefix {
        let mut out = Stream(Vec::new());
        out.str("irkit code cache");
        out.str(&FORMAT_VERSION.to_string());
        out.str(env!("CARGO_PKG_VERSION"));
        out.str(CRANELIFT);
        out.str(isa.name());
        out.str(&isa.triple().to_string());
        out.str(&isa.flags().to_string());
        for f in isa.isa_flags() {
            out.str(&f.to_string());
        }
        KeyPrefix(out.0)
    }
}

/// A function's key and its reference list.
#[derive(Clone, Debug)]
pub(crate) struct Fingerprint {
    /// The key.
    pub(crate) key: Key,
    /// The definitions the function refers to, in first-use order (what a cache entry's
    /// names point into).
    pub(crate) refs: Vec<Inst>,
}

/// The key of function definition `f` of `ctx`'s module compiled for the target `prefix`
/// describes; `None` if it cannot be keyed (a type or constant nested beyond [`MAX_DEPTH`]):
/// the function is then compiled without the cache.
pub(crate) fn fingerprint<M: ClModule>(
    ctx: &Ctx<'_, M>,
    prefix: &KeyPrefix,
    f: Inst,
) -> Option<Fingerprint> {
    let m = ctx.m;
    let mut locals = HashMap::default();
    let mut stack: Vec<Inst> = m.children(f).iter().rev().copied().collect();
    while let Some(i) = stack.pop() {
        locals.insert(i, locals.len() as u32);
        stack.extend(m.children(i).iter().rev().copied());
    }
    let mut h = Hashing {
        ctx,
        locals,
        refs: Vec::new(),
        ref_index: HashMap::default(),
        values: HashMap::default(),
    };
    let mut out = Stream(Vec::with_capacity(4096));
    out.bytes(&prefix.0);
    out.u64(ctx.max_depth);
    out.u8(u8::from(ctx.far_data));
    out.u8(u8::from(ctx.session.is_some()));
    h.node(&mut out, f, 0)?;
    out.u32(h.refs.len() as u32);
    for &d in &h.refs {
        h.reference(&mut out, d);
    }
    Some(Fingerprint {
        key: *blake3::hash(&out.0).as_bytes(),
        refs: h.refs,
    })
}

/// The bytes hashed, written as spec/backends.md spells them.
struct Stream(Vec<u8>);

impl Stream {
    fn bytes(&mut self, b: &[u8]) {
        self.0.extend_from_slice(b);
    }

    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }

    fn u16(&mut self, v: u16) {
        self.bytes(&v.to_le_bytes());
    }

    fn u32(&mut self, v: u32) {
        self.bytes(&v.to_le_bytes());
    }

    fn u64(&mut self, v: u64) {
        self.bytes(&v.to_le_bytes());
    }

    /// A length-prefixed string (8-byte length).
    fn str(&mut self, s: &str) {
        self.u64(s.len() as u64);
        self.bytes(s.as_bytes());
    }
}

/// The state of one function's hashing.
struct Hashing<'c, 'm, M: ClModule> {
    ctx: &'c Ctx<'m, M>,
    /// Every instruction below the function, numbered in preorder.
    locals: HashMap<Inst, u32>,
    /// The reference list.
    refs: Vec<Inst>,
    /// Each definition's position in [`Hashing::refs`].
    ref_index: HashMap<Inst, u32>,
    /// The number of each type or constant met, in first-use order.
    values: HashMap<Inst, u32>,
}

impl<M: ClModule> Hashing<'_, '_, M> {
    /// An instruction and everything below it: opcode, payload, type, decorations, operands,
    /// (for `call_indirect`) the largest frame of its type, children.
    fn node(&mut self, out: &mut Stream, n: Inst, depth: usize) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        let m = self.ctx.m;
        let op = m.opcode(n);
        out.u16(op.0);
        payload(out, m.payload(n));
        match m.ty(n) {
            Some(t) => self.operand(out, t, depth)?,
            None => out.u8(0),
        }
        out.u32(m.decorations(n).len() as u32);
        for &d in m.decorations(n) {
            self.node(out, d, depth + 1)?;
        }
        out.u32(m.operands(n).len() as u32);
        for &o in m.operands(n) {
            self.operand(out, o, depth)?;
        }
        if op == Opcode::CALL_INDIRECT {
            let ty = m.operands(n).first();
            out.u64(
                ty.and_then(|t| self.ctx.max_frame.get(t))
                    .copied()
                    .unwrap_or(0),
            );
        }
        out.u32(m.children(n).len() as u32);
        for &c in m.children(n) {
            self.node(out, c, depth + 1)?;
        }
        Some(())
    }

    /// A reference: `1` and a local's number, `2` and a definition's reference-list position,
    /// `3` and a type's or constant's own tree where the function first uses it, `4` and its
    /// number after that.
    fn operand(&mut self, out: &mut Stream, v: Inst, depth: usize) -> Option<()> {
        let m = self.ctx.m;
        if let Some(&n) = self.locals.get(&v) {
            out.u8(1);
            out.u32(n);
        } else if m.opcode(v).is_definition() {
            let next = self.refs.len() as u32;
            let i = *self.ref_index.entry(v).or_insert(next);
            if i == next {
                self.refs.push(v);
            }
            out.u8(2);
            out.u32(i);
        } else if let Some(&n) = self.values.get(&v) {
            out.u8(4);
            out.u32(n);
        } else {
            let n = self.values.len() as u32;
            self.values.insert(v, n);
            out.u8(3);
            self.node(out, v, depth + 1)?;
        }
        Some(())
    }

    /// What lowering takes from referenced definition `d`.
    fn reference(&self, out: &mut Stream, d: Inst) {
        let ctx = self.ctx;
        let m = ctx.m;
        out.u16(m.opcode(d).0);
        if let Some(callee) = ctx.funcs.get(&d) {
            out.u8(1);
            out.u8(u8::from(m.entry_block(d).is_some()));
            out.u64(ctx.frames.get(&d).copied().unwrap_or(0));
            match callee {
                Callee::Func(id) | Callee::Abort(id) => {
                    out.u8(if matches!(callee, Callee::Func(_)) {
                        0
                    } else {
                        1
                    });
                    let decl = ctx.cl.declarations().get_function_decl(*id);
                    linkage(out, decl.linkage, &decl.linkage_name(*id));
                    out.str(&decl.signature.to_string());
                }
                Callee::Unavailable(name) => {
                    out.u8(2);
                    out.str(name);
                }
                Callee::SessionExit => out.u8(3),
            }
        } else if let Some(&id) = ctx.globals.get(&d) {
            out.u8(2);
            let decl = ctx.cl.declarations().get_data_decl(id);
            linkage(out, decl.linkage, &decl.linkage_name(id));
            out.u8(u8::from(decl.writable));
            out.u8(u8::from(decl.tls));
        } else {
            out.u8(0);
        }
    }
}

/// A linkage (one byte) and, unless local, the symbol's name.
fn linkage(out: &mut Stream, l: Linkage, name: &str) {
    out.u8(match l {
        Linkage::Import => 0,
        Linkage::Local => 1,
        Linkage::Preemptible => 2,
        Linkage::Hidden => 3,
        Linkage::Export => 4,
    });
    if l != Linkage::Local {
        out.str(name);
    }
}

/// A payload: a tag byte (`0` none, `1` integer, `2` float bits, `3` string, `4` bytes), then
/// 8 bytes for a number or a length-prefixed byte string.
fn payload(out: &mut Stream, p: &Payload) {
    match p {
        Payload::None => out.u8(0),
        Payload::Int(v) => {
            out.u8(1);
            out.u64(*v);
        }
        Payload::Float(v) => {
            out.u8(2);
            out.u64(*v);
        }
        Payload::Str(s) => {
            out.u8(3);
            out.str(s);
        }
        Payload::Bytes(b) => {
            out.u8(4);
            out.u64(b.len() as u64);
            out.bytes(b);
        }
    }
}
