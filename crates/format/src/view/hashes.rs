//! Content hashes recomputed from the file: the semantic hash of a definition
//! ([`ModuleView::semantic_hash`]) over the file's reference graph ([`ViewGraph`], validating
//! each archive as it is reached), and the check that every recorded hash is the recomputed one.

use irkit_core::Opcode;
use rustc_hash::FxHashMap as HashMap;

use super::ModuleView;
use crate::defview::{PayloadView, PoolView};
use crate::error::{Location, ReadCause, ReadError};
use crate::feed::Feed;
use crate::flat::FileStrings;
use crate::hash::{DefKey, HashCtx};
use crate::header::SectionKind;
use crate::semantic::{Graph, Hasher, Label, Labeler, Node, Scheme, def_key, feed_key_reference};

impl ModuleView {
    /// The semantic hash of definition `i` (`spec/format.md` §3.5 in a 5.x file, §3.4 in 4.x,
    /// §3.2 in 2.x and 3.x: the one the file's version stores), recomputed from the file:
    /// its code and, by content, every definition and pool value it reaches privately
    /// (validating each definition it reads). Equal semantic hashes mean that one definition
    /// can stand for the other; unlike [`DefInfo::content_hash`](crate::DefInfo::content_hash), nothing here is taken on
    /// trust from the file.
    pub fn semantic_hash(&self, i: u32) -> Result<[u8; 32], ReadError> {
        let mut h = Hasher::new(ViewGraph::new(self, Keys::Stored));
        h.hash(Node::Def(i))
    }

    /// The *linking hash* of definition `i` (`spec/format.md` §3.3): its §3.4 semantic hash
    /// (whatever the file's version) with every reference that resolves by a name it imports
    /// or exports keyed by that name alone, whichever decoration gives it. The linker compares
    /// `linkonce` copies by it: a copy calling `g` through an `import("g")` and one calling
    /// the definition it exports as `g` call the same function once linked, so they are the
    /// same code.
    pub fn linking_hash(&self, i: u32) -> Result<[u8; 32], ReadError> {
        let mut h = Hasher::new(ViewGraph::new(self, Keys::Resolved));
        h.hash(Node::Def(i))
    }

    /// Recomputes every definition's content hash and compares it with the directory and the
    /// symbol table.
    pub(crate) fn check_content_hashes(&self) -> Result<(), ReadError> {
        let view = self;
        let recomputed: Vec<[u8; 32]> = if view.version().0 >= 2 {
            // 2.x and 3.x store the semantic hash of spec/format.md §3.2, 4.x that of §3.4,
            // 5.x that of §3.5.
            let mut h = Hasher::new(ViewGraph::new(view, Keys::Stored));
            (0..view.def_count())
                .map(|i| h.hash(Node::Def(i)))
                .collect::<Result<_, _>>()?
        } else {
            // 1.x stores the v1 content hash (spec/format.md §3.1).
            let keys = def_keys(view)?;
            let strings = view.file_strings();
            let pool = view.pool()?;
            let pool_hashes = HashCtx::pool_hashes(&strings, &pool.archived(), &keys);
            let ctx = HashCtx {
                strings: &strings,
                pool_hashes: &pool_hashes,
                def_keys: &keys,
            };
            (0..view.def_count())
                .map(|i| Ok(ctx.body_hash(&view.def(i)?.archived())))
                .collect::<Result<_, ReadError>>()?
        };
        for (i, hash) in (0..view.def_count()).zip(recomputed) {
            let d = view.def(i)?;
            if hash != d.content_hash() {
                return Err(ReadError::new(
                    &view.file().into(),
                    Location::Definition(i),
                    ReadCause::Malformed("content hash mismatch".into()),
                ));
            }
        }
        // Every `export`/`import`/`extern` decoration of a definition has its record, and no
        // record more.
        for i in 0..view.def_count() {
            view.check_def_symbols(i)?;
        }
        // (Each symbol's opcode was compared with its definition's by `check_def_symbols`.)
        for s in view.symbols() {
            if view.def_meta(s.def).map(|d| d.content_hash) != Some(s.hash) {
                let section = if view.version().0 >= 3 {
                    SectionKind::SYMBOL_INDEX
                } else {
                    SectionKind::SYMBOLS
                };
                return Err(view.cx(section).bad(format!(
                    "symbol `{}`: hash differs from its definition's",
                    s.name
                )));
            }
        }
        Ok(())
    }
}

/// The key each definition is referred to by in content hashes, from the file.
fn def_keys(view: &ModuleView) -> Result<Vec<DefKey>, ReadError> {
    let n = view.def_count();
    let mut keys = Vec::with_capacity(n as usize);
    let debug = view.debug()?;
    for i in 0..n {
        let d = view.def(i)?;
        let root = d.root();
        let first = |op: Opcode| {
            root.decorations()
                .find_map(|x| match (x.opcode() == op, x.payload()) {
                    (true, PayloadView::Str(s)) => Some(s.to_string()),
                    _ => None,
                })
        };
        let name = || debug?.def_name(i).map(str::to_string);
        keys.push(
            first(Opcode::EXPORT)
                .map(DefKey::Export)
                .or_else(|| first(Opcode::IMPORT).map(DefKey::Import))
                .or_else(|| first(Opcode::EXTERN).map(DefKey::Extern))
                .or_else(|| name().map(DefKey::Name))
                .unwrap_or(DefKey::Index(i)),
        );
    }
    Ok(keys)
}

/// How a graph keys the definitions that resolve by name.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Keys {
    /// As the stored content hash does (`spec/format.md` §3.2): the name and its role.
    Stored,
    /// As resolution does (§3.3): an imported or exported name by the name alone.
    Resolved,
}

/// The reference graph of a file, read through its validated archives (each definition is
/// validated when its label is first needed).
struct ViewGraph<'v> {
    view: &'v ModuleView,
    strings: FileStrings<'v>,
    pool: Option<PoolView<'v>>,
    keys: HashMap<u32, Option<DefKey>>,
    mode: Keys,
    feed: Feed,
    scheme: Scheme,
}

impl<'v> ViewGraph<'v> {
    fn new(view: &'v ModuleView, mode: Keys) -> ViewGraph<'v> {
        ViewGraph {
            view,
            strings: view.file_strings(),
            pool: None,
            keys: HashMap::default(),
            mode,
            feed: Feed::new(),
            // The stored hash is the file's version's; the linking hash is one scheme for
            // every version, so that copies from files of different versions compare.
            scheme: match mode {
                Keys::Stored => Scheme::of_major(view.version().0),
                Keys::Resolved => Scheme::V3,
            },
        }
    }
}

/// Feeds the reference to definition `j` of `view` by its key, if it has one (keys memoized
/// in `keys`).
fn view_key(
    view: &ModuleView,
    strings: FileStrings<'_>,
    keys: &mut HashMap<u32, Option<DefKey>>,
    mode: Keys,
    j: u32,
    h: &mut Feed,
) -> Result<bool, ReadError> {
    let k = match keys.entry(j) {
        std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
        std::collections::hash_map::Entry::Vacant(e) => {
            e.insert(match def_key(&view.def(j)?.archived(), &strings) {
                // An export is keyed as an import of the same name: both resolve by it.
                Some(DefKey::Export(name)) if mode == Keys::Resolved => Some(DefKey::Import(name)),
                k => k,
            })
        }
    };
    Ok(feed_key_reference(k.as_ref(), h))
}

impl Graph for ViewGraph<'_> {
    type Error = ReadError;

    fn scheme(&self) -> Scheme {
        self.scheme
    }

    fn label(&mut self, node: Node) -> Result<Label, ReadError> {
        let (view, strings, mode) = (self.view, self.strings, self.mode);
        let keys = &mut self.keys;
        let labeler = Labeler {
            strings: &strings,
            scheme: self.scheme,
        };
        match node {
            Node::Def(i) => {
                let body = view.def(i)?.archived();
                labeler.body(&mut self.feed, &body, |j, h| {
                    view_key(view, strings, keys, mode, j, h)
                })
            }
            Node::Pool(i) => {
                if self.pool.is_none() {
                    self.pool = Some(view.pool()?);
                }
                let pool = self.pool.as_ref().map(|p| p.archived());
                let Some(pool) = pool else {
                    return Err(view.cx(SectionKind::POOL).bad("no pool".into()));
                };
                labeler.pool_entry(&mut self.feed, &pool, i as usize, |j, h| {
                    view_key(view, strings, keys, mode, j, h)
                })
            }
        }
    }
}
