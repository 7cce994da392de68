//! The module: an arena of instructions forming one tree rooted at the `module` instruction.
//!
//! Instructions are created through the module (never constructed freely) so that the arena
//! can keep its invariants:
//!
//! * every live non-hoistable instruction except the root has exactly one parent and appears
//!   exactly once in that parent's child list or decoration list;
//! * every hoistable value (types, constants) is unique for its (opcode, type, operands, payload)
//!   and lives at the outermost scope its operands allow; hoistables are **not** in any child
//!   list: they form the module's *pool*, kept in dependency order (operands first);
//! * instructions are never freed; removing one marks it (and its subtree) dead, and a later
//!   compaction (clone into a fresh module) drops dead slots.

use std::collections::HashMap;

use smallvec::SmallVec;
use thin_vec::ThinVec;

use crate::{CoreError, Inst, Opcode, Payload};

pub(crate) mod checks;
mod edit;

/// An instruction's operand list: up to four inline.
pub(crate) type Operands = SmallVec<[Inst; 4]>;

/// One instruction: opcode, optional type, operands, decorations, children, payload.
#[derive(Clone, Debug)]
pub struct InstData {
    pub(crate) opcode: Opcode,
    pub(crate) ty: Option<Inst>,
    pub(crate) parent: Option<Inst>,
    // Most instructions have a few operands: up to four are held inline (no allocation per
    // instruction); the decorations and the children share one thin vector (one pointer, no
    // allocation when empty), the decorations first: most instructions have neither, and the
    // arena holds every instruction of a program (56 bytes an instruction on a 64-bit
    // target; two vectors and a three-word payload made it 80, a two-word payload held
    // inline 64). The payload is one pointer, null when there is none.
    pub(crate) operands: Operands,
    /// The decorations (`subs[..n_decos]`), then the children.
    pub(crate) subs: ThinVec<Inst>,
    pub(crate) n_decos: u32,
    pub(crate) payload: crate::payload::Stored,
    pub(crate) dead: bool,
}

impl InstData {
    /// The opcode.
    #[inline]
    pub fn opcode(&self) -> Opcode {
        self.opcode
    }
    /// The result type, if any.
    #[inline]
    pub fn ty(&self) -> Option<Inst> {
        self.ty
    }
    /// The parent (for hoistables: the scope they live in).
    #[inline]
    pub fn parent(&self) -> Option<Inst> {
        self.parent
    }
    /// The ordered operands.
    #[inline]
    pub fn operands(&self) -> &[Inst] {
        &self.operands
    }
    /// The decorations, in order.
    #[inline]
    pub fn decorations(&self) -> &[Inst] {
        &self.subs[..self.n_decos as usize]
    }
    /// The children, in order.
    #[inline]
    pub fn children(&self) -> &[Inst] {
        &self.subs[self.n_decos as usize..]
    }
    /// Whether it has neither decorations nor children.
    #[inline]
    pub(crate) fn is_leaf(&self) -> bool {
        self.subs.is_empty()
    }
    /// Appends a child.
    pub(crate) fn push_child(&mut self, c: Inst) {
        self.subs.push(c);
    }
    /// Inserts a child at position `index` of the children (`index <= children().len()`).
    pub(crate) fn insert_child(&mut self, index: usize, c: Inst) {
        self.subs.insert(self.n_decos as usize + index, c);
    }
    /// Appends a decoration.
    pub(crate) fn push_decoration(&mut self, d: Inst) {
        self.insert_decoration(self.n_decos as usize, d);
    }
    /// Inserts a decoration at position `index` of the decorations (`index <=
    /// decorations().len()`).
    pub(crate) fn insert_decoration(&mut self, index: usize, d: Inst) {
        self.subs.insert(index, d);
        self.n_decos += 1;
    }
    /// Removes `i` from the children or, if it is not one, from the decorations (searched
    /// from the end).
    pub(crate) fn remove_sub(&mut self, i: Inst) {
        let n = self.n_decos as usize;
        if let Some(k) = self.subs[n..].iter().rposition(|&c| c == i) {
            self.subs.remove(n + k);
        } else if let Some(k) = self.subs[..n].iter().rposition(|&c| c == i) {
            self.subs.remove(k);
            self.n_decos -= 1;
        }
    }
    /// Keeps the decorations and children `keep` accepts, in order.
    pub(crate) fn retain_subs(&mut self, mut keep: impl FnMut(Inst) -> bool) {
        let n = self.n_decos as usize;
        let mut k = 0;
        let mut decos = 0u32;
        self.subs.retain(|&c| {
            let kept = keep(c);
            if kept && k < n {
                decos += 1;
            }
            k += 1;
            kept
        });
        self.n_decos = decos;
    }
    /// Removes children `at..` and returns them, in order (`at <= children().len()`).
    pub(crate) fn take_children_from(&mut self, at: usize) -> Vec<Inst> {
        self.subs.drain(self.n_decos as usize + at..).collect()
    }
    /// Inserts `moved` as children at position `index`, in order.
    pub(crate) fn insert_children(&mut self, index: usize, moved: Vec<Inst>) {
        let at = self.n_decos as usize + index;
        let tail: Vec<Inst> = self.subs.drain(at..).collect();
        self.subs.extend(moved);
        self.subs.extend(tail);
    }
    /// Sets the decorations and the children (both lists empty before).
    pub(crate) fn set_subs(&mut self, decorations: Vec<Inst>, children: Vec<Inst>) {
        self.n_decos = decorations.len() as u32;
        let mut subs = ThinVec::from(decorations);
        subs.extend(children);
        self.subs = subs;
    }
    /// The literal payload.
    #[inline]
    pub fn payload(&self) -> &Payload {
        &self.payload
    }
    /// Whether it was removed.
    #[inline]
    pub fn is_dead(&self) -> bool {
        self.dead
    }
}

/// The key hoistable values are deduplicated on.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub(crate) struct HoistKey {
    pub(crate) opcode: Opcode,
    pub(crate) ty: Option<Inst>,
    pub(crate) operands: Box<[Inst]>,
    pub(crate) payload: Payload,
}

/// A module: the root of one instruction tree and the arena that owns it.
#[derive(Clone, Debug)]
pub struct Module {
    pub(crate) insts: Vec<InstData>,
    pub(crate) root: Inst,
    /// Live hoistable values in dependency order.
    pub(crate) pool: Vec<Inst>,
    /// Hashed with foldhash, seeded at random per process: a hostile file cannot make its
    /// values collide (SipHash, std's, cost a tenth of a front end's translation).
    pub(crate) intern: HashMap<HoistKey, Inst, foldhash::fast::RandomState>,
    /// Hoistables that were merged into another by `replace_all_uses`: stale handle -> live one.
    pub(crate) forward: HashMap<Inst, Inst>,
}

impl Default for Module {
    fn default() -> Self {
        Module::new()
    }
}

impl Module {
    /// An empty module: just the root `module` instruction.
    pub fn new() -> Module {
        let mut m = Module {
            insts: Vec::new(),
            root: Inst::from_index(0),
            pool: Vec::new(),
            intern: HashMap::default(),
            forward: HashMap::new(),
        };
        m.insts.push(InstData::new(
            Opcode::MODULE,
            None,
            Operands::new(),
            Payload::None,
        ));
        m
    }

    /// The root `module` instruction.
    #[inline]
    pub fn root(&self) -> Inst {
        self.root
    }

    /// Number of arena slots (live and dead).
    #[inline]
    pub fn arena_len(&self) -> usize {
        self.insts.len()
    }

    /// Makes room for `additional` more instructions in the arena, so that a builder who
    /// knows about how many it will make does not pay for the arena's regrowth (each doubling
    /// copies every instruction so far).
    pub fn reserve(&mut self, additional: usize) {
        self.insts.reserve(additional);
    }

    /// Number of live instructions.
    pub fn live_count(&self) -> usize {
        self.insts.iter().filter(|d| !d.dead).count()
    }

    /// Whether `inst` names a slot of this arena.
    #[inline]
    pub fn contains(&self, inst: Inst) -> bool {
        inst.idx() < self.insts.len()
    }

    /// Whether `inst` names a live instruction of this module.
    #[inline]
    pub fn is_live(&self, inst: Inst) -> bool {
        self.insts.get(inst.idx()).is_some_and(|d| !d.dead)
    }

    /// The instruction's data. Panics on a handle from another arena (a programming error);
    /// use [`Module::get`] for untrusted handles.
    #[inline]
    pub fn data(&self, inst: Inst) -> &InstData {
        &self.insts[inst.idx()]
    }

    /// The instruction's data, or `None` for a handle outside the arena.
    #[inline]
    pub fn get(&self, inst: Inst) -> Option<&InstData> {
        self.insts.get(inst.idx())
    }

    /// The opcode.
    #[inline]
    pub fn opcode(&self, inst: Inst) -> Opcode {
        self.data(inst).opcode
    }
    /// The result type.
    #[inline]
    pub fn ty(&self, inst: Inst) -> Option<Inst> {
        self.data(inst).ty
    }
    /// The parent.
    #[inline]
    pub fn parent(&self, inst: Inst) -> Option<Inst> {
        self.data(inst).parent
    }
    /// The operands.
    #[inline]
    pub fn operands(&self, inst: Inst) -> &[Inst] {
        &self.data(inst).operands
    }
    /// The decorations.
    #[inline]
    pub fn decorations(&self, inst: Inst) -> &[Inst] {
        self.data(inst).decorations()
    }
    /// The children.
    #[inline]
    pub fn children(&self, inst: Inst) -> &[Inst] {
        self.data(inst).children()
    }
    /// The payload.
    #[inline]
    pub fn payload(&self, inst: Inst) -> &Payload {
        &self.data(inst).payload
    }

    /// The live hoistable values, in dependency order (every operand and type before its users).
    pub fn pool(&self) -> &[Inst] {
        &self.pool
    }

    /// The live instruction a possibly stale handle stands for: a hoistable merged away by
    /// [`Module::replace_all_uses`] forwards to the value that replaced it (Slang's caveat:
    /// local references may go stale after a replacement).
    #[inline]
    pub fn resolve(&self, inst: Inst) -> Inst {
        checks::follow(&self.forward, inst)
    }

    /// The module-level definitions and other top-level instructions, in order.
    pub fn top_level(&self) -> &[Inst] {
        self.children(self.root)
    }

    pub(crate) fn check_live(&self, inst: Inst) -> Result<(), CoreError> {
        if self.is_live(inst) {
            Ok(())
        } else {
            Err(CoreError::BadHandle(inst))
        }
    }

    pub(crate) fn alloc(&mut self, data: InstData) -> Result<Inst, CoreError> {
        let index = u32::try_from(self.insts.len()).map_err(|_| CoreError::TooManyInstructions)?;
        if index > Inst::MAX_INDEX {
            return Err(CoreError::TooManyInstructions);
        }
        self.insts.push(data);
        Ok(Inst::from_index(index))
    }

    /// Creates a detached (parentless) non-hoistable instruction. Attach it with
    /// [`Module::append_child`], [`Module::insert_child`] or [`Module::attach_decoration`].
    /// Operands may be any live instruction (or, while a tree is being built, any slot), given
    /// as any slice-like list (a `Vec`, an array): they are copied.
    pub fn new_inst(
        &mut self,
        opcode: Opcode,
        ty: Option<Inst>,
        operands: impl AsRef<[Inst]>,
        payload: Payload,
    ) -> Result<Inst, CoreError> {
        let operands = operands.as_ref();
        Module::check_creatable(opcode)?;
        checks::check_refs(ty, operands, |i| self.contains(i))?;
        let ty = ty.map(|t| self.resolve(t));
        let operands = checks::followed(&self.forward, operands);
        self.alloc(InstData::new(opcode, ty, operands, payload))
    }

    /// The name hint of an instruction (its `name_hint` decoration), if any.
    pub fn name(&self, inst: Inst) -> Option<&str> {
        self.decorations(inst)
            .iter()
            .find(|&&d| self.opcode(d) == Opcode::NAME_HINT)
            .and_then(|&d| self.payload(d).as_str())
    }

    /// Sets (or replaces) the name hint of a non-hoistable instruction.
    pub fn set_name(&mut self, inst: Inst, name: &str) -> Result<(), CoreError> {
        let existing = self
            .decorations(inst)
            .iter()
            .copied()
            .find(|&d| self.opcode(d) == Opcode::NAME_HINT);
        match existing {
            Some(d) => {
                self.insts[d.idx()].payload = Payload::Str(name.into()).into();
                Ok(())
            }
            None => self
                .add_decoration(
                    inst,
                    Opcode::NAME_HINT,
                    Vec::new(),
                    Payload::Str(name.into()),
                )
                .map(|_| ()),
        }
    }

    /// The first decoration of `owner` with this opcode.
    pub fn find_decoration(&self, owner: Inst, opcode: Opcode) -> Option<Inst> {
        self.decorations(owner)
            .iter()
            .copied()
            .find(|&d| self.opcode(d) == opcode)
    }

    /// The string payload of the first decoration of `owner` with this opcode (e.g. `export`).
    pub fn decoration_str(&self, owner: Inst, opcode: Opcode) -> Option<&str> {
        self.find_decoration(owner, opcode)
            .and_then(|d| self.payload(d).as_str())
    }

    /// The string payloads of every decoration of `owner` with this opcode, in order (a
    /// definition may be exported under several names).
    pub fn decoration_strs(&self, owner: Inst, opcode: Opcode) -> impl Iterator<Item = &str> {
        self.decorations(owner)
            .iter()
            .copied()
            .filter(move |&d| self.opcode(d) == opcode)
            .filter_map(|d| self.payload(d).as_str())
    }

    /// The top-level definition exported under `name` (any of its `export`s), if any. A
    /// re-export (an import declaration with `export`s) is found too: the linker resolves it
    /// to what its import names.
    pub fn find_export(&self, name: &str) -> Option<Inst> {
        self.top_level()
            .iter()
            .copied()
            .find(|&d| self.decoration_strs(d, Opcode::EXPORT).any(|n| n == name))
    }

    /// The top-level instruction whose name hint is `name`, if any.
    pub fn find_named(&self, name: &str) -> Option<Inst> {
        self.top_level()
            .iter()
            .copied()
            .find(|&d| self.name(d) == Some(name))
    }

    /// Every live instruction of the tree (root, definitions, blocks, …, decorations included,
    /// hoistables excluded) in pre-order: an instruction, its decorations, then its children.
    pub fn walk(&self) -> Vec<Inst> {
        self.walk_from(self.root)
    }

    /// Like [`Module::walk`], below `start` (included).
    pub fn walk_from(&self, start: Inst) -> Vec<Inst> {
        let mut out = Vec::new();
        let mut stack = vec![start];
        while let Some(i) = stack.pop() {
            out.push(i);
            let d = self.data(i);
            // Decorations first, then children, each in order.
            stack.extend(d.subs.iter().rev().copied());
        }
        out
    }

    /// Calls `found` with each top-level definition value `v` names: `v` itself if it is one,
    /// else those its pool values name, following their operands and types. `seen` (one flag
    /// per instruction, [`Module::arena_len`] long) marks the pool values followed, so that a
    /// reachability walk sharing it over many calls follows each once; `found` may be called
    /// more than once for a definition.
    pub fn definitions_named(&self, v: Inst, seen: &mut [bool], mut found: impl FnMut(Inst)) {
        let root = self.root();
        let mut values = vec![v];
        while let Some(v) = values.pop() {
            if self.parent(v) == Some(root) {
                found(v);
            } else if self.opcode(v).is_hoistable()
                && seen
                    .get_mut(v.idx())
                    .is_some_and(|s| !std::mem::replace(s, true))
            {
                values.extend(self.operands(v).iter().copied());
                values.extend(self.ty(v));
            }
        }
    }

    /// The function (a `func` ancestor) containing `inst`, if any.
    pub fn enclosing_func(&self, inst: Inst) -> Option<Inst> {
        self.enclosing(inst, Opcode::FUNC)
    }

    /// The block containing `inst`, if any.
    pub fn enclosing_block(&self, inst: Inst) -> Option<Inst> {
        self.enclosing(inst, Opcode::BLOCK)
    }

    fn enclosing(&self, inst: Inst, opcode: Opcode) -> Option<Inst> {
        let mut cur = self.parent(inst);
        for _ in 0..=self.insts.len() {
            let c = cur?;
            if self.opcode(c) == opcode {
                return Some(c);
            }
            cur = self.parent(c);
        }
        None
    }

    /// The parameters of a block: its leading `param` children.
    pub fn block_params(&self, block: Inst) -> &[Inst] {
        let ch = self.children(block);
        let n = ch
            .iter()
            .take_while(|&&c| self.opcode(c) == Opcode::PARAM)
            .count();
        &ch[..n]
    }

    /// The blocks of a function (its `block` children), in order. The first is the entry.
    pub fn blocks(&self, func: Inst) -> impl Iterator<Item = Inst> + '_ {
        self.children(func)
            .iter()
            .copied()
            .filter(|&c| self.opcode(c) == Opcode::BLOCK)
    }

    /// The entry block of a function; `None` for a declaration (no body).
    pub fn entry_block(&self, func: Inst) -> Option<Inst> {
        self.blocks(func).next()
    }

    /// The type of `v` used as an operand value: a definition (function, global) stands for its
    /// address, so its value type is `ptr` (looked up, `None` if the module has no `ptr` type
    /// yet); every other instruction's value type is its result type.
    pub fn value_type(&self, v: Inst) -> Option<Inst> {
        if self.opcode(v).is_definition() {
            self.lookup(Opcode::PTR, None, &[], &Payload::None)
        } else {
            self.ty(v)
        }
    }
}

impl InstData {
    pub(crate) fn new(
        opcode: Opcode,
        ty: Option<Inst>,
        operands: Operands,
        payload: Payload,
    ) -> InstData {
        InstData {
            opcode,
            ty,
            parent: None,
            operands,
            subs: ThinVec::new(),
            n_decos: 0,
            payload: payload.into(),
            dead: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Payload;
    use crate::module::checks::Fill;

    /// The arena's record is seven words on a 64-bit target (the arena holds every
    /// instruction of a program, and its memory is written once per link).
    #[test]
    #[cfg(target_pointer_width = "64")]
    fn an_instruction_is_56_bytes() {
        assert_eq!(std::mem::size_of::<InstData>(), 56);
        assert_eq!(std::mem::size_of::<crate::payload::Stored>(), 8);
    }

    /// Decorations and children share one list: inserting, removing and moving either keeps
    /// the other as it was.
    #[test]
    fn decorations_and_children_stay_apart() {
        let mut m = Module::new();
        let root = m.root();
        let f = m
            .append_new_child(root, Opcode::FUNC, Payload::None)
            .unwrap();
        let b0 = m.append_new_child(f, Opcode::BLOCK, Payload::None).unwrap();
        let x = m
            .add_decoration(f, Opcode::EXPORT, vec![], Payload::Str("x".into()))
            .unwrap();
        let b1 = m.append_new_child(f, Opcode::BLOCK, Payload::None).unwrap();
        let h = m
            .new_inst(Opcode::NAME_HINT, None, vec![], Payload::Str("f".into()))
            .unwrap();
        m.insert_decoration(f, 0, h).unwrap();
        assert_eq!(m.decorations(f), &[h, x]);
        assert_eq!(m.children(f), &[b0, b1]);
        assert_eq!(m.walk_from(f), vec![f, h, x, b0, b1]);
        m.detach(x).unwrap();
        assert_eq!((m.decorations(f), m.children(f)), (&[h][..], &[b0, b1][..]));
        let g = m
            .append_new_child(root, Opcode::FUNC, Payload::None)
            .unwrap();
        let y = m
            .add_decoration(g, Opcode::EXPORT, vec![], Payload::Str("y".into()))
            .unwrap();
        m.move_children(f, 1, g, 0).unwrap();
        assert_eq!((m.decorations(f), m.children(f)), (&[h][..], &[b0][..]));
        assert_eq!((m.decorations(g), m.children(g)), (&[y][..], &[b1][..]));
        m.remove_all(&[h, b1]).unwrap();
        assert_eq!((m.decorations(f), m.children(f)), (&[][..], &[b0][..]));
        assert_eq!((m.decorations(g), m.children(g)), (&[y][..], &[][..]));
    }

    fn block(m: &mut Module, n: usize) -> (Inst, Vec<Inst>) {
        let b = m
            .new_inst(Opcode::BLOCK, None, vec![], Payload::None)
            .unwrap();
        let kids = (0..n)
            .map(|_| {
                let i = m
                    .new_inst(Opcode::UNREACHABLE, None, vec![], Payload::None)
                    .unwrap();
                m.append_child(b, i).unwrap();
                i
            })
            .collect();
        (b, kids)
    }

    #[test]
    fn move_children_splices_a_tail_in_order() {
        let mut m = Module::new();
        let (a, ak) = block(&mut m, 4);
        let (b, bk) = block(&mut m, 2);
        m.move_children(a, 2, b, 1).unwrap();
        assert_eq!(m.children(a), &ak[..2]);
        assert_eq!(m.children(b), &[bk[0], ak[2], ak[3], bk[1]]);
        assert_eq!(m.parent(ak[3]), Some(b));
        // Out of range, or into one of the moved instructions: refused, nothing changes.
        assert!(m.move_children(a, 3, b, 0).is_err());
        assert!(m.move_children(b, 0, b, 5).is_err());
        assert!(m.move_children(b, 1, ak[2], 0).is_err());
        assert_eq!(m.children(b), &[bk[0], ak[2], ak[3], bk[1]]);
        // Within one parent: the tail goes back in at `index`.
        m.move_children(b, 2, b, 0).unwrap();
        assert_eq!(m.children(b), &[ak[3], bk[1], bk[0], ak[2]]);
    }

    #[test]
    fn remove_all_removes_each_with_its_subtree() {
        let mut m = Module::new();
        let (a, ak) = block(&mut m, 5);
        let (b, _) = block(&mut m, 2);
        m.append_child(a, b).unwrap();
        m.remove_all(&[ak[1], ak[3], b]).unwrap();
        assert_eq!(m.children(a), &[ak[0], ak[2], ak[4]]);
        assert!(!m.is_live(ak[1]) && !m.is_live(b));
        assert!(m.remove_all(&[ak[1]]).is_err());
        m.detach(ak[4]).unwrap();
        assert_eq!(m.children(a), &[ak[0], ak[2]]);
    }
}
