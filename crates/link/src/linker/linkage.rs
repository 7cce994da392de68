//! A definition's linkage, read from the decorations of its validated archive (`export`,
//! `import`, `extern`, `weak`, `linkonce`, `stub`), and the index of export candidates by name.

use std::collections::HashMap;

use irkit_core::Opcode;
use irkit_format::{DefView, ModuleView, PayloadView};

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

pub(super) fn linkage_of(view: &ModuleView, def: u32) -> Result<Linkage, irkit_format::ReadError> {
    Ok(linkage(&view.def(def)?))
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

/// Export name -> (input, definition, opcode) of every export of that name.
pub(super) type ExportIndex<'a> = HashMap<&'a str, Vec<Candidate>>;

/// One export candidate, as a symbol record gives it: (input, definition).
pub(super) type Candidate = (u32, u32);
