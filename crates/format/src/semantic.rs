//! The semantic content hash (format 2.0, `spec/format.md` §3.2): a definition's hash covers
//! its own code *and everything it reaches privately*, by content, never by name.
//!
//! A reference to another definition means what the linker makes of it (`spec/linking.md`
//! §3): an import, an export or a body-less `extern` is resolved by **name**, so it is hashed
//! as its key; any other definition stands for itself, so it is hashed as *its* semantic hash.
//! Pool values are hashed by structure the same way (an aggregate constant may hold the
//! address of a private function).
//!
//! References between private definitions and pool values form a graph with cycles (mutual
//! recursion, a function-pointer table naming the function that reads it). Each node has a
//! *label* (its own byte stream, references to other nodes left as numbered slots) and an
//! ordered list of successors (the slots' targets). A node's hash describes the part of the
//! graph it reaches: strongly connected components are found with Tarjan's algorithm
//! (iterative: no recursion on input depth); nodes outside the node's component enter by
//! their own hash, and the component's members are numbered in breadth-first order from the
//! node, following slots in order, so two isomorphic graphs give equal hashes whatever the
//! definitions' indices and names. Equal hashes therefore mean equal code at every reachable
//! point: one copy can stand for the other.
//!
//! Numbering a component from each of its members costs members × size; beyond
//! [`SCC_BUDGET`] the members are numbered by index instead (still sound, no longer
//! independent of the order of definitions in the module), so no input makes hashing
//! quadratic without bound.
//!
//! Two [`Scheme`]s share this machinery. Format 2.x and 3.x files store the `v2` hash, whose
//! slots are one per reference: a node's stream names the target of every reference again
//! (33 bytes each), so a function's hash rehashes its types' hashes once per instruction.
//! Format 4.x stores the `v3` hash (`spec/format.md` §3.4): a reference names its target by
//! its rank among the node's *distinct* targets (in first-use order), and the node's stream
//! names each distinct target once. Format 5.x stores the `v4` hash (§3.5): the same, but a
//! definition's label is taken from its compact body's bytes (§2.4) in a few large pieces
//! instead of being re-serialized instruction by instruction: the body's `ext` array already
//! lists its distinct external targets in first-use order, and its small references name them
//! by their place there.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use crate::compact::Compact;
use crate::compact::MaybeCompact;
use crate::feed::Feed;
use crate::flat::{Flat, Rec, Strings};
use crate::hash::DefKey;
use rayon::prelude::*;

use crate::schema::{REF_MAX_INDEX, REF_NONE, TAG_DEF, TAG_LOCAL, TAG_POOL, payload_kind};

/// Largest `members × (members + slots)` of a strongly connected component numbered from
/// each member; larger components are numbered by index (`spec/format.md` §3.2).
pub(crate) const SCC_BUDGET: u64 = 1 << 22;

/// Which semantic hash a graph computes: the one its file's major version stores
/// (`spec/format.md` §3.2 for 2.x and 3.x, §3.4 for 4.x, §3.5 for 5.x).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Scheme {
    /// One slot per reference (2.x, 3.x).
    V2,
    /// One slot per distinct target, references naming it by rank (4.x; also the linking
    /// hash of §3.3, whatever the file's version).
    V3,
    /// V3 with each definition's label taken from its compact body's bytes (5.x,
    /// `spec/format.md` §3.5); pool entries are labelled as in V3.
    V4,
}

impl Scheme {
    /// The scheme of the content hash that files of major version `major` (≥ 2) store.
    pub(crate) fn of_major(major: u16) -> Scheme {
        match major {
            5.. => Scheme::V4,
            4 => Scheme::V3,
            _ => Scheme::V2,
        }
    }

    /// The domain strings the scheme's streams start with.
    fn domains(self) -> &'static Domains {
        match self {
            Scheme::V2 => &Domains {
                def: b"irkit.def.v2\0",
                pool: b"irkit.pool.v2\0",
                node: b"irkit.node.v2\0",
                scc: b"irkit.scc.v2\0",
                scc_member: b"irkit.scc-member.v2\0",
            },
            Scheme::V4 => &Domains {
                def: b"irkit.def.v4\0",
                pool: b"irkit.pool.v3\0",
                node: b"irkit.node.v3\0",
                scc: b"irkit.scc.v3\0",
                scc_member: b"irkit.scc-member.v3\0",
            },
            Scheme::V3 => &Domains {
                def: b"irkit.def.v3\0",
                pool: b"irkit.pool.v3\0",
                node: b"irkit.node.v3\0",
                scc: b"irkit.scc.v3\0",
                scc_member: b"irkit.scc-member.v3\0",
            },
        }
    }
}

/// The first bytes of each stream of a [`Scheme`]: a definition's label, a pool entry's, a
/// node's hash, an oversized component's and one of its members'.
struct Domains {
    def: &'static [u8],
    pool: &'static [u8],
    node: &'static [u8],
    scc: &'static [u8],
    scc_member: &'static [u8],
}

/// The targets a label's references name, in stream order ([`Scheme::V2`]: one per
/// reference) or distinct in first-use order ([`Scheme::V3`]: each reference names its
/// target's rank here).
struct Slots {
    scheme: Scheme,
    succ: Vec<Node>,
    /// Rank of each distinct target ([`Scheme::V3`]).
    rank: HashMap<Node, u32>,
    /// The ranks of recently named targets, by a few bits of the target ([`Slots::code`]):
    /// most references of a body name a few types, found here without hashing.
    recent: [(u32, u32); RECENT],
}

/// Entries of [`Slots::recent`].
const RECENT: usize = 64;

impl Slots {
    fn new(scheme: Scheme) -> Slots {
        Slots {
            scheme,
            // A function names a dozen or so distinct values.
            succ: Vec::with_capacity(16),
            rank: HashMap::default(),
            recent: [(u32::MAX, 0); RECENT],
        }
    }

    /// `w` as one number (indices are below 2^30, so no node is `u32::MAX`).
    #[inline]
    fn code(w: Node) -> u32 {
        match w {
            Node::Pool(i) => i << 1,
            Node::Def(i) => (i << 1) | 1,
        }
    }

    /// Feeds a reference to `w` under `tag` and records it: the tag and a new slot (V2), or
    /// the tag and the rank of `w` among the distinct targets (V3).
    #[inline]
    fn add(&mut self, h: &mut Feed, tag: u8, w: Node) {
        match self.scheme {
            Scheme::V2 => {
                h.update(&[tag]);
                self.succ.push(w);
            }
            Scheme::V3 | Scheme::V4 => {
                let code = Slots::code(w);
                let at = (code as usize ^ (code as usize >> 6)) % RECENT;
                let rank = match self.recent[at] {
                    (c, rank) if c == code => rank,
                    _ => {
                        let next = self.succ.len() as u32;
                        let rank = *self.rank.entry(w).or_insert(next);
                        if rank == next {
                            self.succ.push(w);
                        }
                        self.recent[at] = (code, rank);
                        rank
                    }
                };
                let [a, b, c, d] = rank.to_le_bytes();
                h.update(&[tag, a, b, c, d]);
            }
        }
    }
}

/// A node of the reference graph: a definition (by index) or a pool entry (by index).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Node {
    Def(u32),
    Pool(u32),
}

/// A node's own stream, hashed, and the targets of its slots in stream order.
pub(crate) struct Label {
    pub hash: [u8; 32],
    pub succ: Vec<Node>,
}

/// A map keyed by node: dense vectors indexed by definition and by pool entry when the
/// graph's size is known up front (a module being written), a hash map otherwise (a file's
/// graph, explored from one definition). A dense map still takes any node: one outside its
/// sizes goes to its hash map.
pub(crate) struct NodeMap<T> {
    defs: Vec<Option<T>>,
    pool: Vec<Option<T>>,
    other: HashMap<Node, T>,
}

impl<T> Default for NodeMap<T> {
    fn default() -> Self {
        NodeMap {
            defs: Vec::new(),
            pool: Vec::new(),
            other: HashMap::default(),
        }
    }
}

impl<T> NodeMap<T> {
    /// A map with dense room for `defs` definitions and `pool` pool entries.
    fn dense(defs: usize, pool: usize) -> Self {
        NodeMap {
            defs: std::iter::repeat_with(|| None).take(defs).collect(),
            pool: std::iter::repeat_with(|| None).take(pool).collect(),
            other: HashMap::default(),
        }
    }

    #[inline]
    fn slot(&self, n: &Node) -> Option<&Option<T>> {
        match *n {
            Node::Def(i) => self.defs.get(i as usize),
            Node::Pool(i) => self.pool.get(i as usize),
        }
    }

    #[inline]
    fn get(&self, n: &Node) -> Option<&T> {
        match self.slot(n) {
            Some(v) => v.as_ref(),
            None => self.other.get(n),
        }
    }

    #[inline]
    fn contains_key(&self, n: &Node) -> bool {
        self.get(n).is_some()
    }

    /// The entry of `n`, made by `make` if there is none.
    fn get_or_try_insert<E>(
        &mut self,
        n: Node,
        make: impl FnOnce() -> Result<T, E>,
    ) -> Result<&T, E> {
        let slot = match n {
            Node::Def(i) => self.defs.get_mut(i as usize),
            Node::Pool(i) => self.pool.get_mut(i as usize),
        };
        Ok(match slot {
            Some(Some(v)) => v,
            Some(empty) => empty.insert(make()?),
            None => match self.other.entry(n) {
                std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::hash_map::Entry::Vacant(e) => e.insert(make()?),
            },
        })
    }

    fn insert(&mut self, n: Node, v: T) {
        let slot = match n {
            Node::Def(i) => self.defs.get_mut(i as usize),
            Node::Pool(i) => self.pool.get_mut(i as usize),
        };
        match slot {
            Some(s) => *s = Some(v),
            None => {
                self.other.insert(n, v);
            }
        }
    }
}

impl<T> Extend<(Node, T)> for NodeMap<T> {
    fn extend<I: IntoIterator<Item = (Node, T)>>(&mut self, items: I) {
        for (n, v) in items {
            self.insert(n, v);
        }
    }
}

/// Where labels come from: the writer's native records or a file's validated archives.
pub(crate) trait Graph {
    type Error;
    /// The label of `node`.
    fn label(&mut self, node: Node) -> Result<Label, Self::Error>;
    /// The hash this graph's labels are made for.
    fn scheme(&self) -> Scheme;
}

/// The key under which a definition is referred to, when the linker resolves references to
/// it by name: import first, then export, then a body-less extern (the precedence of
/// `spec/linking.md` §3). `None`: the definition stands for itself.
pub(crate) fn def_key(
    flat: &(impl Flat + ?Sized),
    strings: &(impl Strings + ?Sized),
) -> Option<DefKey> {
    use irkit_core::Opcode;
    if flat.count() == 0 {
        return None;
    }
    let root = flat.rec(0);
    let mut first = [None, None, None];
    let mut subs = 0u32;
    let mut i = 1u32;
    while i < root.end && (i as usize) < flat.count() {
        let r = flat.rec(i as usize);
        if subs < root.n_decos && r.payload_kind == payload_kind::STR {
            let slot = match irkit_core::Opcode(r.opcode) {
                Opcode::IMPORT => Some(0),
                Opcode::EXPORT => Some(1),
                Opcode::EXTERN => Some(2),
                _ => None,
            };
            if let Some(k) = slot
                && first[k].is_none()
            {
                first[k] = strings.get_str(r.lo).map(str::to_string);
            }
        }
        subs += 1;
        if subs > root.n_decos {
            // A child: what the key needs of the children (that there is one) is known.
            break;
        }
        i = r.end.max(i + 1);
    }
    let bodyless = subs <= root.n_decos;
    let [import, export, external] = first;
    import
        .map(DefKey::Import)
        .or_else(|| export.map(DefKey::Export))
        .or_else(|| external.filter(|_| bodyless).map(DefKey::Extern))
}

/// Builds labels from flattened records. `key(j)` answers whether definition `j` is named by
/// a key (`Some`) or is a node (`None`).
pub(crate) struct Labeler<'a, S: Strings + ?Sized> {
    pub strings: &'a S,
    pub scheme: Scheme,
}

impl<S: Strings + ?Sized> Labeler<'_, S> {
    fn feed_ref<E>(
        &self,
        h: &mut Feed,
        succ: &mut Slots,
        r: u32,
        key: &mut impl FnMut(u32, &mut Feed) -> Result<bool, E>,
    ) -> Result<(), E> {
        if r == REF_NONE {
            h.update(&[0]);
            return Ok(());
        }
        let index = r & REF_MAX_INDEX;
        match r >> 30 {
            TAG_LOCAL => {
                h.update(&[1]);
                h.update(&index.to_le_bytes());
            }
            TAG_POOL => succ.add(h, 2, Node::Pool(index)),
            TAG_DEF => {
                if !key(index, h)? {
                    succ.add(h, 4, Node::Def(index));
                }
            }
            _ => {
                h.update(&[0xff]);
                h.update(&r.to_le_bytes());
            }
        }
        Ok(())
    }

    fn feed_payload(&self, h: &mut Feed, flat: &(impl Flat + ?Sized), r: &Rec) {
        crate::hash::feed_payload(h, self.strings, flat, r);
    }

    fn feed_operands<E>(
        &self,
        h: &mut Feed,
        succ: &mut Slots,
        flat: &(impl Flat + ?Sized),
        r: &Rec,
        key: &mut impl FnMut(u32, &mut Feed) -> Result<bool, E>,
    ) -> Result<(), E> {
        self.feed_ref(h, succ, r.ty, key)?;
        h.update(&r.ops_end.saturating_sub(r.ops_start).to_le_bytes());
        for j in r.ops_start..r.ops_end {
            self.feed_ref(h, succ, flat.operand(j as usize), key)?;
        }
        Ok(())
    }

    /// The label of a definition's body (`h`: a reusable stream).
    pub fn body<E>(
        &self,
        h: &mut Feed,
        body: &(impl MaybeCompact + ?Sized),
        mut key: impl FnMut(u32, &mut Feed) -> Result<bool, E>,
    ) -> Result<Label, E> {
        // Every body of a 5.x file, and every body the writer lays out, is compact. A body
        // without compact bytes (an older layout's, never in a 5.x file) gets the §3.4 label,
        // under §3.4's own domain: the compact label's domain names its grammar alone.
        let scheme = match self.scheme {
            Scheme::V4 => match body.compact() {
                Some(c) => return self.compact_body(h, &c, key),
                None => Scheme::V3,
            },
            s => s,
        };
        let mut succ = Slots::new(scheme);
        h.update(scheme.domains().def);
        h.update(&(body.count() as u64).to_le_bytes());
        for (i, r) in body.recs().enumerate() {
            h.update(&r.opcode.to_le_bytes());
            self.feed_payload(h, body, &r);
            h.update(&r.n_decos.to_le_bytes());
            h.update(&r.end.saturating_sub(i as u32).to_le_bytes());
            self.feed_operands(h, &mut succ, body, &r, &mut key)?;
        }
        Ok(Label {
            hash: h.finish(),
            succ: succ.succ,
        })
    }

    /// The v4 label of a compact body (`spec/format.md` §3.5): its bytes but `ext` (string
    /// indices as zero), then what each `ext` entry names (`02` a pool entry, `03` and the
    /// key of a definition with one, `04` a definition without), then the text of each string
    /// payload. Its slots are the `ext` entries naming pool entries and definitions without a
    /// key, in `ext` order: the body's small references name every target by its place in
    /// `ext`, so the bytes say which reference names which slot.
    fn compact_body<E>(
        &self,
        h: &mut Feed,
        c: &Compact<'_>,
        mut key: impl FnMut(u32, &mut Feed) -> Result<bool, E>,
    ) -> Result<Label, E> {
        let mut succ = Vec::with_capacity(16);
        h.update(self.scheme.domains().def);
        c.feed_label_bytes(h);
        for e in c.ext() {
            let index = e & REF_MAX_INDEX;
            match e >> 30 {
                TAG_POOL => {
                    h.update(&[2]);
                    succ.push(Node::Pool(index));
                }
                TAG_DEF => {
                    if !key(index, h)? {
                        h.update(&[4]);
                        succ.push(Node::Def(index));
                    }
                }
                // Refused by the body's check: fed raw, as the other schemes feed it.
                _ => {
                    h.update(&[0xff]);
                    h.update(&e.to_le_bytes());
                }
            }
        }
        for lo in c.string_rows() {
            crate::hash::feed_bytes(h, self.strings.get_str(lo).unwrap_or("").as_bytes());
        }
        Ok(Label {
            hash: h.finish(),
            succ,
        })
    }

    /// The label of pool entry `i` (`h`: a reusable stream).
    pub fn pool_entry<E>(
        &self,
        h: &mut Feed,
        pool: &(impl Flat + ?Sized),
        i: usize,
        mut key: impl FnMut(u32, &mut Feed) -> Result<bool, E>,
    ) -> Result<Label, E> {
        let mut succ = Slots::new(self.scheme);
        let r = pool.rec(i);
        h.update(self.scheme.domains().pool);
        h.update(&r.opcode.to_le_bytes());
        self.feed_payload(h, pool, &r);
        self.feed_operands(h, &mut succ, pool, &r, &mut key)?;
        Ok(Label {
            hash: h.finish(),
            succ: succ.succ,
        })
    }
}

/// Per-node state of the Tarjan walk.
struct Visit {
    index: u32,
    low: u32,
    on_stack: bool,
}

/// Memoized semantic hashes over one graph.
pub(crate) struct Hasher<G: Graph> {
    pub graph: G,
    feed: Feed,
    done: NodeMap<[u8; 32]>,
    labels: NodeMap<Label>,
}

impl<G: Graph> Hasher<G> {
    pub fn new(graph: G) -> Hasher<G> {
        Hasher {
            graph,
            feed: Feed::new(),
            done: NodeMap::default(),
            labels: NodeMap::default(),
        }
    }

    /// A hasher whose definitions' labels are already known (`labels[i]` is `Def(i)`'s), of a
    /// graph with `pool` pool entries.
    pub fn with_def_labels(graph: G, labels: Vec<Label>, pool: usize) -> Hasher<G> {
        let mut h = Hasher::new(graph);
        h.done = NodeMap::dense(labels.len(), pool);
        h.labels = NodeMap::dense(0, pool);
        h.labels.defs = labels.into_iter().map(Some).collect();
        h
    }

    /// Hashes the definitions `0..defs` that form a component alone with nothing left to
    /// hash behind them, on every core: first (serially, memoized) every pool entry a
    /// definition's slots name, then each definition whose every slot names itself or
    /// something hashed. That is every definition that refers to others only by key (an
    /// exported or imported name), the common case. Their hashes are what [`Hasher::hash`]
    /// gives (the same stream, `component_stream` over the one member); the others are left
    /// to it. Needs the definitions' labels ([`Hasher::with_def_labels`]).
    pub fn hash_lone_defs(&mut self, defs: u32) -> Result<(), G::Error> {
        let mut named = Vec::<bool>::new();
        let mut pool: Vec<Node> = Vec::new();
        for d in 0..defs {
            for &w in self.labels.get(&Node::Def(d)).map_or(&[][..], |l| &l.succ) {
                if let Node::Pool(p) = w {
                    let p = p as usize;
                    if p >= named.len() {
                        named.resize(p + 1, false);
                    }
                    if !std::mem::replace(&mut named[p], true) {
                        pool.push(w);
                    }
                }
            }
        }
        for p in pool {
            self.hash(p)?;
        }
        let (labels, done) = (&self.labels, &self.done);
        let domain = self.graph.scheme().domains().node;
        let lone: Vec<u32> = (0..defs)
            .into_par_iter()
            .filter(|&d| {
                let me = Node::Def(d);
                !done.contains_key(&me)
                    && labels
                        .get(&me)
                        .is_some_and(|l| l.succ.iter().all(|w| *w == me || done.contains_key(w)))
            })
            .collect();
        let hashes: Vec<[u8; 32]> = lone
            .par_iter()
            .map_init(Feed::new, |feed, &d| {
                component_stream(feed, labels, done, &[Node::Def(d)], domain)
            })
            .collect();
        self.done
            .extend(lone.into_iter().map(Node::Def).zip(hashes));
        Ok(())
    }

    fn label(&mut self, n: Node) -> Result<&Label, G::Error> {
        let graph = &mut self.graph;
        self.labels.get_or_try_insert(n, || graph.label(n))
    }

    /// The semantic hash of `root` (and, as a by-product, of everything it reaches).
    pub fn hash(&mut self, root: Node) -> Result<[u8; 32], G::Error> {
        if let Some(h) = self.done.get(&root) {
            return Ok(*h);
        }
        let mut visits: HashMap<Node, Visit> = HashMap::default();
        let mut stack: Vec<Node> = Vec::new();
        // The walk: (node, next successor to look at).
        let mut walk: Vec<(Node, usize)> = Vec::new();
        let mut counter = 0u32;
        let mut enter = |n: Node, visits: &mut HashMap<Node, Visit>, stack: &mut Vec<Node>| {
            visits.insert(
                n,
                Visit {
                    index: counter,
                    low: counter,
                    on_stack: true,
                },
            );
            counter += 1;
            stack.push(n);
        };
        enter(root, &mut visits, &mut stack);
        walk.push((root, 0));
        while let Some(&(v, next)) = walk.last() {
            let succ = self.label(v)?.succ.get(next).copied();
            if let Some(w) = succ {
                if let Some(top) = walk.last_mut() {
                    top.1 += 1;
                }
                if self.done.contains_key(&w) {
                    continue;
                }
                match visits.get(&w) {
                    None => {
                        enter(w, &mut visits, &mut stack);
                        walk.push((w, 0));
                    }
                    Some(vw) if vw.on_stack => {
                        let wi = vw.index;
                        if let Some(vv) = visits.get_mut(&v) {
                            vv.low = vv.low.min(wi);
                        }
                    }
                    Some(_) => {}
                }
                continue;
            }
            walk.pop();
            let (vi, vl) = visits.get(&v).map_or((0, 0), |x| (x.index, x.low));
            if let Some(&(parent, _)) = walk.last()
                && let Some(p) = visits.get_mut(&parent)
            {
                p.low = p.low.min(vl);
            }
            if vi == vl {
                let at = stack.iter().rposition(|&n| n == v).unwrap_or(0);
                let members: Vec<Node> = stack.drain(at..).collect();
                for m in &members {
                    if let Some(x) = visits.get_mut(m) {
                        x.on_stack = false;
                    }
                }
                self.finish_component(&members);
            }
        }
        Ok(self.done.get(&root).copied().unwrap_or([0; 32]))
    }

    /// Hashes every member of a finished component (all its successors outside it are done).
    fn finish_component(&mut self, members: &[Node]) {
        let scheme = self.graph.scheme();
        let Hasher {
            feed, done, labels, ..
        } = self;
        if let [only] = members {
            let h = component_stream(feed, labels, done, &[*only], scheme.domains().node);
            done.insert(*only, h);
            return;
        }
        let slots: u64 = members
            .iter()
            .map(|m| labels.get(m).map_or(0, |l| l.succ.len() as u64))
            .sum();
        let n = members.len() as u64;
        if n.saturating_mul(n.saturating_add(slots)) <= SCC_BUDGET {
            let mut hashes = Vec::with_capacity(members.len());
            for &m in members {
                let order = bfs_order(labels, m, members);
                hashes.push(component_stream(
                    feed,
                    labels,
                    done,
                    &order,
                    scheme.domains().node,
                ));
            }
            done.extend(members.iter().copied().zip(hashes));
        } else {
            let mut order = members.to_vec();
            order.sort_unstable();
            let whole = component_stream(feed, labels, done, &order, scheme.domains().scc);
            for (rank, &m) in order.iter().enumerate() {
                feed.update(scheme.domains().scc_member);
                feed.update(&whole);
                feed.update(&(rank as u32).to_le_bytes());
                done.insert(m, feed.finish());
            }
        }
    }
}

/// The members of `members` reachable from `start` inside the component, breadth-first,
/// following slots in order.
fn bfs_order(labels: &NodeMap<Label>, start: Node, members: &[Node]) -> Vec<Node> {
    let inside: HashSet<Node> = members.iter().copied().collect();
    let mut order = vec![start];
    let mut seen: HashSet<Node> = [start].into_iter().collect();
    let mut k = 0;
    while let Some(&v) = order.get(k) {
        k += 1;
        if let Some(l) = labels.get(&v) {
            for &w in &l.succ {
                if inside.contains(&w) && seen.insert(w) {
                    order.push(w);
                }
            }
        }
    }
    order
}

/// blake3(domain, u32 count, per node in `order`: label hash, u32 slot count, per slot `00` +
/// u32 position in `order` or `01` + the target's hash).
fn component_stream(
    h: &mut Feed,
    labels: &NodeMap<Label>,
    done: &NodeMap<[u8; 32]>,
    order: &[Node],
    domain: &[u8],
) -> [u8; 32] {
    let pos: HashMap<Node, u32> = if order.len() > 1 {
        order
            .iter()
            .enumerate()
            .map(|(i, &n)| (n, i as u32))
            .collect()
    } else {
        HashMap::default()
    };
    let position = |w: &Node| match order {
        [only] => (only == w).then_some(0),
        _ => pos.get(w).copied(),
    };
    h.update(domain);
    h.update(&(order.len() as u32).to_le_bytes());
    for n in order {
        let Some(l) = labels.get(n) else {
            continue;
        };
        h.update(&l.hash);
        h.update(&(l.succ.len() as u32).to_le_bytes());
        for w in &l.succ {
            if let Some(p) = position(w) {
                h.update(&[0]);
                h.update(&p.to_le_bytes());
            } else {
                h.update(&[1]);
                h.update(done.get(w).unwrap_or(&[0; 32]));
            }
        }
    }
    h.finish()
}

/// Feeds a reference to a definition with `key` (`03`, then the key, `spec/format.md` §3.2),
/// if it has one: what a [`Labeler`]'s key closure does. `false` for a definition without a
/// key (a node: the labeler gives it a slot).
pub(crate) fn feed_key_reference(key: Option<&DefKey>, h: &mut Feed) -> bool {
    match key {
        Some(k) => {
            h.update(&[3]);
            k.feed(h);
            true
        }
        None => false,
    }
}

/// [`feed_key_reference`] for definition `j` of a module being written (`keys[j]`).
fn feed_known_key(keys: &[Option<DefKey>], j: u32, h: &mut Feed) -> bool {
    feed_key_reference(keys.get(j as usize).and_then(Option::as_ref), h)
}

/// The reference graph of a module being written: its flattened bodies and pool.
pub(crate) struct FlatGraph<'a, S: Strings + ?Sized, B: MaybeCompact, P: Flat + ?Sized> {
    strings: &'a S,
    bodies: Vec<&'a B>,
    pool: &'a P,
    keys: Vec<Option<DefKey>>,
    feed: Feed,
    scheme: Scheme,
}

impl<'a, S, B, P> FlatGraph<'a, S, B, P>
where
    S: Strings + Sync + ?Sized,
    B: MaybeCompact + Sync,
    P: Flat + Sync + ?Sized,
{
    /// The graph of `bodies` and `pool`, labelled for `scheme` (each definition's key read
    /// on every core).
    pub fn new(strings: &'a S, bodies: Vec<&'a B>, pool: &'a P, scheme: Scheme) -> Self {
        let keys = bodies.par_iter().map(|b| def_key(*b, strings)).collect();
        FlatGraph {
            strings,
            bodies,
            pool,
            keys,
            feed: Feed::new(),
            scheme,
        }
    }

    /// Every definition's label, in definition order, computed on every core (a label is a
    /// function of its own body alone).
    pub fn def_labels(&self) -> Vec<Label> {
        let labeler = Labeler {
            strings: self.strings,
            scheme: self.scheme,
        };
        let keys = &self.keys;
        // A group of bodies at a time: their streams are hashed together (`Feed::capturing`).
        self.bodies
            .par_chunks(crate::batch::LANES)
            .flat_map_iter(|group| {
                let mut feed = Feed::capturing();
                let mut labels: Vec<Label> = group
                    .iter()
                    .map(|b| {
                        let key = |j: u32, h: &mut Feed| {
                            Ok::<_, std::convert::Infallible>(feed_known_key(keys, j, h))
                        };
                        match labeler.body(&mut feed, *b, key) {
                            Ok(l) => l,
                            Err(never) => match never {},
                        }
                    })
                    .collect();
                for (l, h) in labels.iter_mut().zip(feed.captured_digests()) {
                    l.hash = h;
                }
                labels
            })
            .collect()
    }
}

impl<S: Strings + ?Sized, B: MaybeCompact, P: Flat + ?Sized> Graph for FlatGraph<'_, S, B, P> {
    type Error = std::convert::Infallible;

    fn scheme(&self) -> Scheme {
        self.scheme
    }

    fn label(&mut self, node: Node) -> Result<Label, Self::Error> {
        let labeler = Labeler {
            strings: self.strings,
            scheme: self.scheme,
        };
        let keys = &self.keys;
        let key = |j: u32, h: &mut Feed| Ok(feed_known_key(keys, j, h));
        match node {
            Node::Def(i) => match self.bodies.get(i as usize) {
                Some(b) => labeler.body(&mut self.feed, *b, key),
                None => Ok(Label {
                    hash: [0; 32],
                    succ: Vec::new(),
                }),
            },
            Node::Pool(i) => labeler.pool_entry(&mut self.feed, self.pool, i as usize, key),
        }
    }
}
