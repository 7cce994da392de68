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

mod graph;
mod hasher;
mod labels;

pub(crate) use graph::FlatGraph;
pub(crate) use hasher::Hasher;
pub(crate) use labels::Labeler;

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
