//! A definition's linkage, read from the decorations of its validated archive (`export`,
//! `import`, `extern`, `weak`, `linkonce`, `stub`), and the table of what the walk reads of
//! each definition ([`FactTable`]), filled by the walk or ahead of it.

use std::sync::OnceLock;

use irkit_core::Opcode;
use irkit_format::{DefView, ModuleView, PayloadView, Ref};

use super::index::{DefIndex, SrcDef};
use crate::input::Input;

/// Linkage decorations of a definition, read from its validated archive.
#[derive(Default)]
pub(super) struct Linkage {
    /// Every `export` name, in order (one definition may be exported under several names;
    /// on an import declaration they are re-exports).
    pub(super) export: Vec<String>,
    pub(super) import: Option<String>,
    pub(super) external: Option<String>,
    pub(super) weak: bool,
    pub(super) linkonce: bool,
    pub(super) stub: bool,
    pub(super) bodyless: bool,
}

pub(super) fn linkage_of(
    view: &ModuleView,
    def: DefIndex,
) -> Result<Linkage, irkit_format::ReadError> {
    Ok(linkage(&view.def(def.index())?))
}

/// What the walk reads of a definition before it copies it: its linkage (its decorations
/// checked against its file's symbol index first) and its own type.
pub(super) struct Facts {
    pub(super) linkage: Linkage,
    pub(super) ty: Option<Ref>,
}

impl Facts {
    /// Definition `d` of `view`'s facts, once its symbol records are checked
    /// (`ModuleView::check_def_symbols`, which validates it); the error otherwise.
    pub(super) fn read(view: &ModuleView, d: DefIndex) -> Result<Facts, irkit_format::ReadError> {
        view.check_def_symbols(d.index())?;
        let def = view.def(d.index())?;
        Ok(Facts {
            linkage: linkage(&def),
            ty: def.root().ty(),
        })
    }
}

/// [`Facts`] of [`GROUP`] consecutive definitions of one input.
type Group = [OnceLock<Box<Facts>>; GROUP];

/// Definitions per group of a [`FactTable`]: a link that reads a few definitions of each input
/// makes room for a few groups, not for every definition of every input.
const GROUP: usize = 64;

/// Per input, per definition: its [`Facts`], once read, by the walk or ahead of it by the
/// spare thread (spec/linking.md §4, "Validation ahead"), whoever first; only facts that read
/// are kept (the walk reads a refused definition again, to report why, when it acts on it).
/// Room is made a group of definitions at a time, on first use.
pub(super) struct FactTable {
    /// Per input, its groups.
    inputs: Vec<Box<[OnceLock<Box<Group>>]>>,
}

impl FactTable {
    pub(super) fn new(inputs: &[Input]) -> FactTable {
        FactTable {
            inputs: inputs
                .iter()
                .map(|i| {
                    (0..(i.view.def_count() as usize).div_ceil(GROUP))
                        .map(|_| OnceLock::new())
                        .collect()
                })
                .collect(),
        }
    }

    fn entry(&self, src: SrcDef) -> Option<&OnceLock<Box<Facts>>> {
        let d = src.def.idx();
        let group = self
            .inputs
            .get(src.input.idx())?
            .get(d / GROUP)?
            .get_or_init(|| Box::new(std::array::from_fn(|_| OnceLock::new())));
        group.get(d % GROUP)
    }

    /// Definition `src`'s facts, read from `view` (its input's) unless they were; the error
    /// of a definition whose facts do not read.
    pub(super) fn get(
        &self,
        view: &ModuleView,
        src: SrcDef,
    ) -> Result<&Facts, irkit_format::ReadError> {
        let d = src.def;
        let Some(entry) = self.entry(src) else {
            // Out of range: reading says so (as a definition past the count is refused).
            return Err(Facts::read(view, d)
                .err()
                .unwrap_or_else(|| irkit_format::ReadError {
                    file: view.file().into(),
                    location: irkit_format::Location::Definition(d.index()),
                    cause: irkit_format::ReadCause::IndexOutOfRange {
                        what: "definition index",
                        index: u64::from(d.index()),
                        len: u64::from(view.def_count()),
                    },
                }));
        };
        if let Some(f) = entry.get() {
            return Ok(f);
        }
        let f = Facts::read(view, d)?;
        Ok(entry.get_or_init(|| Box::new(f)))
    }

    /// Definition `src`'s facts if they were read already (nothing is read here).
    pub(super) fn known(&self, src: SrcDef) -> Option<&Facts> {
        let d = src.def.idx();
        let group = self.inputs.get(src.input.idx())?.get(d / GROUP)?.get()?;
        group.get(d % GROUP)?.get().map(|f| &**f)
    }

    /// Reads definition `src`'s facts from `view` (its input's) ahead of the walk (errors
    /// are left for the walk to meet).
    pub(super) fn prefetch(&self, view: &ModuleView, src: SrcDef) {
        if let Some(entry) = self.entry(src)
            && entry.get().is_none()
            && let Ok(f) = Facts::read(view, src.def)
        {
            let _ = entry.set(Box::new(f));
        }
    }
}

pub(super) fn linkage(d: &DefView<'_>) -> Linkage {
    let root = d.root();
    let mut l = Linkage {
        bodyless: !root.has_children(),
        ..Linkage::default()
    };
    for deco in root.decorations() {
        let s = match deco.payload() {
            PayloadView::Str(s) => Some(s.to_string()),
            _ => None,
        };
        match deco.opcode() {
            Opcode::EXPORT => l.export.extend(s),
            Opcode::IMPORT if l.import.is_none() => l.import = s,
            Opcode::EXTERN if l.external.is_none() => l.external = s,
            Opcode::WEAK => l.weak = true,
            Opcode::LINKONCE => l.linkonce = true,
            Opcode::STUB => l.stub = true,
            _ => {}
        }
    }
    l
}
