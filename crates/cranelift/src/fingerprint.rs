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
//!   decorations (names, which trap messages spell; locations and inlining scopes, which the
//!   debug information reads), operands and children; a local value (or one of the
//!   function's `inline_scope` decorations, which its instructions' `loc`s name) by its
//!   position in the function, a type or constant by its own tree where the function
//!   first uses it and by its number (in first-use order) after that, and a definition by its
//!   position in the function's **reference list** (the definitions it refers to, in first-use
//!   order), with the largest callee frame of each indirect call's type;
//! * for each entry of the reference list, what lowering takes from it: for a function how it
//!   is called (an IR function with a body, a C function, `abort`, one that cannot be called)
//!   with its Cranelift signature, linkage, `stackalloc` frame and whether its calls are
//!   checked (`Ctx::unchecked`); for a global its linkage,
//!   writability and thread-locality; and the symbol name of either **unless it is local**.
//!
//! Local symbols (`irkit.<index>.<name>`) are not in the key: a cache entry names the symbols
//! its code refers to by reference-list position (`crate::names`), resolved again in every
//! build, so renumbering or renaming other definitions keeps a function's entry valid and an
//! edit invalidates the edited function and those whose code it changes (a callee's signature
//! or frame).

use cranelift_codegen::isa::TargetIsa;
use cranelift_module::{Linkage, Module as ClModule};
use irkit_core::{Inst, Module, Opcode, Payload};
use rustc_hash::FxHashMap as HashMap;
use std::cell::RefCell;
use std::sync::OnceLock;

use crate::context::{Callee, Ctx};

/// The version of the cache's entry format and key; a change makes every entry foreign.
pub const FORMAT_VERSION: u32 = 13;

/// The Cranelift version irkit compiles with (the crate pins it exactly).
const CRANELIFT: &str = "cranelift-codegen 0.135.8";

/// The deepest type or constant hashed; a deeper one (never in a verified module, whose
/// nesting is at most `irkit_core::MAX_NESTING`) makes the function uncacheable.
const MAX_DEPTH: usize = 1024;

/// A cache key.
pub(crate) type Key = [u8; 32];

/// What every key of one build starts with: the hash of the versions and the target (hashed
/// once per build, so each function's key hashes 32 bytes of it, not the flags' text).
#[derive(Clone, Debug)]
pub(crate) struct KeyPrefix(pub(crate) [u8; 32]);

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
        KeyPrefix(*blake3::hash(&out.0).as_bytes())
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

/// A function's tree as its key hashes it (the bytes between the options and the reference
/// list), computed from the irkit module alone: no Cranelift state is needed, so it can be
/// computed while the module is still being verified ([`Trees::prepare`]). On any module the
/// computation ends (depth and work are bounded) and never panics; only a verified module's
/// trees are ever used.
#[derive(Debug)]
pub(crate) struct TreeKey {
    /// The BLAKE3 hash of the tree's bytes, with 8 zero bytes where each `call_indirect`'s
    /// largest callee frame goes (the bytes themselves are not kept: a program's trees are
    /// about as large as its instructions).
    digest: [u8; 32],
    /// Where those frames go: their offset in the bytes, and the call's `fn` type.
    frames: Vec<(u64, Inst)>,
    /// The reference list.
    refs: Vec<Inst>,
}

/// The trees of a module's functions, computed ahead of the rest of its keys.
#[derive(Debug, Default)]
pub(crate) struct Trees(HashMap<Inst, Option<TreeKey>>);

impl Trees {
    /// The tree of every function definition with a body among `m`'s top-level definitions,
    /// on every core (`None` for one that cannot be keyed). `m` need not be verified.
    pub(crate) fn prepare(m: &Module) -> Trees {
        use rayon::prelude::*;
        let trees = m
            .top_level()
            .par_iter()
            .filter(|&&f| {
                m.get(f)
                    .is_some_and(|d| d.opcode() == Opcode::FUNC && !d.children().is_empty())
            })
            .map(|&f| (f, tree_key(m, f)))
            .collect::<Vec<_>>();
        release_numbers();
        Trees(trees.into_iter().collect())
    }
}

/// What keys the functions of one build: the prefix, the trees computed ahead (if any), and
/// the bytes of each function or global definition as a reference-list entry
/// ([`reference()`]), computed once per build by whichever thread first needs them (a
/// definition is in many reference lists; its bytes spell its Cranelift signature).
pub(crate) struct Keyer<'t> {
    prefix: KeyPrefix,
    trees: &'t Trees,
    entries: HashMap<Inst, OnceLock<Box<[u8]>>>,
}

impl<'t> Keyer<'t> {
    /// The keyer of `ctx`'s functions for the target `prefix` describes, taking their trees
    /// from `trees` where they are (computed from the same module).
    pub(crate) fn new<M: ClModule>(
        ctx: &Ctx<'_, M>,
        prefix: KeyPrefix,
        trees: &'t Trees,
    ) -> Keyer<'t> {
        let entries = ctx
            .funcs
            .keys()
            .chain(ctx.globals.keys())
            .map(|&d| (d, OnceLock::new()))
            .collect();
        Keyer {
            prefix,
            trees,
            entries,
        }
    }

    /// The key of function definition `f` of `ctx`'s module; `None` if it cannot be keyed (a
    /// type or constant nested beyond [`MAX_DEPTH`]): the function is then compiled without
    /// the cache.
    pub(crate) fn fingerprint<M: ClModule>(
        &self,
        ctx: &Ctx<'_, M>,
        f: Inst,
    ) -> Option<Fingerprint> {
        match self.trees.0.get(&f) {
            Some(tree) => self.key(ctx, f, tree.as_ref()?),
            None => self.key(ctx, f, &tree_key(ctx.m, f)?),
        }
    }

    /// The key of function `f`, whose tree is `tree`: the prefix, the options, whether C code
    /// may call it, the tree with its callee frames, the reference list.
    fn key<M: ClModule>(&self, ctx: &Ctx<'_, M>, f: Inst, tree: &TreeKey) -> Option<Fingerprint> {
        let mut out = Stream(Vec::with_capacity(
            128 + 16 * tree.frames.len() + 64 * tree.refs.len(),
        ));
        out.bytes(&self.prefix.0);
        // 0: no depth limit (a limit is at least 1).
        out.u64(ctx.max_depth.unwrap_or(0));
        out.u8(u8::from(ctx.far_data));
        out.u8(u8::from(ctx.session.is_some()));
        out.u8(u8::from(ctx.guard.is_some()));
        // Its code may find the thread's stack limit (`crate::routines::ensure_stack_limit`).
        out.u8(u8::from(ctx.entered_from_c.contains(&f)));
        // It gets the limit as a hidden first argument (`Ctx::internal`).
        out.u8(u8::from(ctx.internal.contains(&f)));
        out.bytes(&tree.digest);
        out.u32(u32::try_from(tree.frames.len()).ok()?);
        for &(offset, ty) in &tree.frames {
            out.u64(offset);
            out.u64(ctx.max_frame.get(&ty).copied().unwrap_or(0));
        }
        out.u32(tree.refs.len() as u32);
        for &d in &tree.refs {
            match self.entries.get(&d) {
                Some(entry) => out.bytes(entry.get_or_init(|| {
                    let mut bytes = Stream(Vec::new());
                    reference(ctx, &mut bytes, d);
                    bytes.0.into_boxed_slice()
                })),
                None => reference(ctx, &mut out, d),
            }
        }
        Some(Fingerprint {
            key: *blake3::hash(&out.0).as_bytes(),
            refs: tree.refs.clone(),
        })
    }
}

/// When the locals below a function get their numbers.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Locals {
    /// In one walk before hashing.
    First,
    /// As the hashing walk meets them, a reference to one not met yet written as a
    /// placeholder and filled in after the walk.
    OnTheWay,
}

/// A placeholder named an instruction the walk did not number as a local.
struct Unnumbered;

/// The tree of function definition `f` of `m`; `None` if it cannot be keyed.
fn tree_key(m: &Module, f: Inst) -> Option<TreeKey> {
    NUMBERS.with(|numbers| {
        let mut numbers = numbers.borrow_mut();
        numbers.start(m.arena_len());
        match tree_with(m, f, &mut numbers, Locals::OnTheWay) {
            Some(Ok(tree)) => Some(tree),
            None => None,
            // A reference to a local that is not below `f` (never in a verified module):
            // key the function as though every local were numbered first.
            Some(Err(Unnumbered)) => {
                numbers.start(m.arena_len());
                tree_with(m, f, &mut numbers, Locals::First)?.ok()
            }
        }
    })
}

fn tree_with(
    m: &Module,
    f: Inst,
    numbers: &mut Numbers,
    locals: Locals,
) -> Option<Result<TreeKey, Unnumbered>> {
    // No walk visits more instructions than the arena has: each tree instruction of a
    // verified module is in the tree once, and each type or constant is hashed once.
    let mut budget = m.arena_len();
    let mut next_local = 0u32;
    if locals == Locals::First {
        let fd = m.get(f)?;
        let scopes = fd
            .decorations()
            .iter()
            .filter(|&&d| m.opcode(d) == Opcode::INLINE_SCOPE);
        for &s in scopes {
            budget = budget.checked_sub(1)?;
            numbers.set(s, Kind::Local, next_local);
            next_local += 1;
        }
        let mut stack: Vec<Inst> = fd.children().iter().rev().copied().collect();
        while let Some(i) = stack.pop() {
            budget = budget.checked_sub(1)?;
            numbers.set(i, Kind::Local, next_local);
            next_local += 1;
            stack.extend(m.get(i)?.children().iter().rev().copied());
        }
        budget = m.arena_len();
    }
    let mut h = Hashing {
        m,
        numbers,
        locals,
        next_local,
        budget,
        forward: Vec::new(),
        frames: Vec::new(),
        refs: Vec::new(),
        values: 0,
    };
    let mut out = Stream(Vec::with_capacity(4096));
    h.node(&mut out, f, 0, false)?;
    for &(at, v) in &h.forward {
        let Some((Kind::Local, n)) = h.numbers.get(v) else {
            return Some(Err(Unnumbered));
        };
        out.0.get_mut(at..at + 4)?.copy_from_slice(&n.to_le_bytes());
    }
    Some(Ok(TreeKey {
        digest: *blake3::hash(&out.0).as_bytes(),
        frames: h.frames,
        refs: h.refs,
    }))
}

thread_local! {
    /// Each thread's numbering table, reused from one function to the next.
    static NUMBERS: RefCell<Numbers> = RefCell::new(Numbers::default());
}

/// Frees the numbering tables of this thread and of every thread of the current rayon pool
/// (after hashing a module's functions: each table is as large as the module's arena).
pub(crate) fn release_numbers() {
    let release = || NUMBERS.with(|numbers| *numbers.borrow_mut() = Numbers::default());
    rayon::broadcast(|_| release());
    release();
}

/// What a number in [`Numbers`] counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// A position in preorder below the function.
    Local = 1,
    /// A position in the reference list.
    Def = 2,
    /// A type or constant, in first-use order.
    Value = 3,
}

/// The numbers one function's hashing gave instructions, by arena index: a dense table the
/// size of the arena, stamped with the function it belongs to, so starting the next function
/// clears nothing. An entry is `stamp << 34 | kind << 32 | number`.
#[derive(Default)]
struct Numbers {
    stamp: u64,
    slots: Vec<u64>,
}

impl Numbers {
    /// The largest stamp: 30 bits, above the kind's 2 and the number's 32.
    const MAX_STAMP: u64 = (1 << 30) - 1;

    /// Starts a function of a module of `arena` slots.
    fn start(&mut self, arena: usize) {
        if self.stamp == Self::MAX_STAMP {
            self.slots.fill(0);
            self.stamp = 0;
        }
        self.stamp += 1;
        if self.slots.len() < arena {
            self.slots.resize(arena, 0);
        }
    }

    #[inline]
    fn get(&self, i: Inst) -> Option<(Kind, u32)> {
        let e = *self.slots.get(i.idx())?;
        if e >> 34 != self.stamp {
            return None;
        }
        let kind = match (e >> 32) & 3 {
            1 => Kind::Local,
            2 => Kind::Def,
            _ => Kind::Value,
        };
        Some((kind, e as u32))
    }

    #[inline]
    fn set(&mut self, i: Inst, kind: Kind, n: u32) {
        if let Some(slot) = self.slots.get_mut(i.idx()) {
            *slot = self.stamp << 34 | (kind as u64) << 32 | u64::from(n);
        }
    }
}

/// The bytes hashed, written as spec/backends.md spells them.
struct Stream(Vec<u8>);

impl Stream {
    #[inline]
    fn bytes(&mut self, b: &[u8]) {
        self.0.extend_from_slice(b);
    }

    #[inline]
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }

    #[inline]
    fn u16(&mut self, v: u16) {
        self.bytes(&v.to_le_bytes());
    }

    #[inline]
    fn u32(&mut self, v: u32) {
        self.bytes(&v.to_le_bytes());
    }

    #[inline]
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
struct Hashing<'m, 'n> {
    m: &'m Module,
    /// Every instruction below the function by its position in preorder, each definition
    /// met by its position in [`Hashing::refs`], each type or constant met by its number.
    numbers: &'n mut Numbers,
    /// When locals are numbered.
    locals: Locals,
    /// The number of the next local met ([`Locals::OnTheWay`]).
    next_local: u32,
    /// How many more instructions the walk may hash.
    budget: usize,
    /// Where a placeholder for a local not numbered yet was written, and which local.
    forward: Vec<(usize, Inst)>,
    /// Where a `call_indirect`'s largest callee frame goes, and its type.
    frames: Vec<(u64, Inst)>,
    /// The reference list.
    refs: Vec<Inst>,
    /// How many types and constants were met.
    values: u32,
}

impl Hashing<'_, '_> {
    /// An instruction and everything below it: opcode, payload, type, decorations, operands,
    /// (for `call_indirect`) the largest frame of its type, children.
    /// `local`: `n` is a child of the function or below one (numbered as a local).
    fn node(&mut self, out: &mut Stream, n: Inst, depth: usize, local: bool) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.budget = self.budget.checked_sub(1)?;
        if local && self.locals == Locals::OnTheWay {
            self.numbers.set(n, Kind::Local, self.next_local);
            self.next_local += 1;
        }
        let data = self.m.get(n)?;
        let op = data.opcode();
        out.u16(op.0);
        payload(out, data.payload());
        match data.ty() {
            Some(t) => self.operand(out, t, depth)?,
            None => out.u8(0),
        }
        out.u32(data.decorations().len() as u32);
        for &d in data.decorations() {
            // The function's inlining scopes are locals: its instructions' `loc`s name them.
            let scope = depth == 0 && self.m.opcode(d) == Opcode::INLINE_SCOPE;
            self.node(out, d, depth + 1, scope)?;
        }
        out.u32(data.operands().len() as u32);
        out.0.reserve(5 * data.operands().len());
        for &o in data.operands() {
            self.operand(out, o, depth)?;
        }
        if op == Opcode::CALL_INDIRECT || op == Opcode::TAIL_CALL_INDIRECT {
            // The largest frame of a function of the call's type: filled in by the keyer.
            if let Some(&ty) = data.operands().first() {
                self.frames.push((out.0.len() as u64, ty));
            }
            out.u64(0);
        }
        out.u32(data.children().len() as u32);
        for &c in data.children() {
            self.node(out, c, depth + 1, true)?;
        }
        Some(())
    }

    /// A reference: `1` and a local's number, `2` and a definition's reference-list position,
    /// `3` and a type's or constant's own tree where the function first uses it, `4` and its
    /// number after that.
    #[inline]
    fn operand(&mut self, out: &mut Stream, v: Inst, depth: usize) -> Option<()> {
        let (tag, n) = match self.numbers.get(v) {
            Some((Kind::Local, n)) => (1, n),
            Some((Kind::Def, n)) => (2, n),
            Some((Kind::Value, n)) => (4, n),
            None => return self.first_use(out, v, depth),
        };
        let [a, b, c, d] = n.to_le_bytes();
        out.bytes(&[tag, a, b, c, d]);
        Some(())
    }

    /// [`Hashing::operand`] of a definition, type or constant met for the first time.
    fn first_use(&mut self, out: &mut Stream, v: Inst, depth: usize) -> Option<()> {
        let op = self.m.get(v)?.opcode();
        if self.locals == Locals::OnTheWay && !op.is_definition() && !op.is_hoistable() {
            // A local met later in the walk (a branch to a later block, say).
            out.u8(1);
            self.forward.push((out.0.len(), v));
            out.u32(0);
            return Some(());
        }
        if op.is_definition() {
            let i = self.refs.len() as u32;
            self.refs.push(v);
            self.numbers.set(v, Kind::Def, i);
            out.u8(2);
            out.u32(i);
        } else {
            self.numbers.set(v, Kind::Value, self.values);
            self.values += 1;
            out.u8(3);
            self.node(out, v, depth + 1, false)?;
        }
        Some(())
    }
}

/// What lowering takes from referenced definition `d` (of a verified module).
fn reference<M: ClModule>(ctx: &Ctx<'_, M>, out: &mut Stream, d: Inst) {
    let m = ctx.m;
    out.u16(m.opcode(d).0);
    if let Some(callee) = ctx.funcs.get(&d) {
        out.u8(1);
        out.u8(u8::from(m.entry_block(d).is_some()));
        out.u64(ctx.frames.get(&d).copied().unwrap_or(0));
        out.u8(u8::from(ctx.unchecked.contains(&d)));
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

#[cfg(test)]
mod tests {
    use super::{Kind, Numbers};
    use irkit_core::Inst;

    #[test]
    fn a_function_never_sees_the_numbers_of_the_one_before() {
        let (a, b) = (Inst::from_index(1), Inst::from_index(3));
        let mut n = Numbers::default();
        n.start(4);
        n.set(a, Kind::Local, 7);
        n.set(b, Kind::Value, 0);
        assert_eq!(n.get(a), Some((Kind::Local, 7)));
        assert_eq!(n.get(b), Some((Kind::Value, 0)));
        n.start(4);
        assert_eq!(n.get(a), None);
        n.set(b, Kind::Def, 2);
        assert_eq!(n.get(b), Some((Kind::Def, 2)));
        // When the stamp runs out, the table is cleared and stamps start again.
        n.stamp = Numbers::MAX_STAMP;
        n.set(a, Kind::Local, 1);
        n.start(4);
        assert_eq!(n.stamp, 1);
        assert_eq!((n.get(a), n.get(b)), (None, None));
        // A larger module grows the table; past its end nothing is numbered.
        n.start(8);
        n.set(Inst::from_index(7), Kind::Value, 5);
        assert_eq!(n.get(Inst::from_index(7)), Some((Kind::Value, 5)));
        assert_eq!(n.get(Inst::from_index(9)), None);
    }
}
