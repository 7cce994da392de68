//! Reading a validated binary module into the pieces translation needs, in wasm's order.

use wasmparser::{
    Data, Element, Export, FuncType, FunctionBody, Global, Import, MemoryType, Parser, Payload,
    TableType,
};

use crate::error::{Place, WasmError};

/// The sections of a module, read (not yet translated).
#[derive(Default)]
pub struct Sections<'a> {
    /// The function types.
    pub types: Vec<FuncType>,
    /// The imports, with their offsets.
    pub imports: Vec<(Import<'a>, u64)>,
    /// The type index of each defined function.
    pub funcs: Vec<u32>,
    /// The defined memories (WebAssembly 3.0's multiple memories), with their section's
    /// offset.
    pub memories: Vec<(MemoryType, u64)>,
    /// The defined tables, with the offset of their section and their initializer expression
    /// (typed function references; `None`: null entries).
    pub tables: Vec<(TableType, u64, Option<wasmparser::ConstExpr<'a>>)>,
    /// The element segments.
    pub elements: Vec<Element<'a>>,
    /// The defined globals, with their offsets.
    pub globals: Vec<(Global<'a>, u64)>,
    /// The exports, with their offsets.
    pub exports: Vec<(Export<'a>, u64)>,
    /// The start function, with the section's offset.
    pub start: Option<(u32, u64)>,
    /// The data segments.
    pub data: Vec<Data<'a>>,
    /// Whether the module has a data count section (required by `memory.init` and
    /// `data.drop`).
    pub data_count: bool,
    /// Function names from the `name` custom section (name hints only; a malformed name
    /// section is ignored, as wasm requires).
    pub func_names: std::collections::HashMap<u32, String>,
    /// The function bodies, in order.
    pub bodies: Vec<FunctionBody<'a>>,
    /// The DWARF custom sections (`.debug_line`, `.debug_info`, …), by name.
    pub debug: Vec<(&'a str, &'a [u8])>,
    /// Where the code section's contents start (DWARF's code addresses are offsets from it).
    pub code_start: u64,
}

fn invalid(e: wasmparser::BinaryReaderError) -> WasmError {
    WasmError::invalid(&e)
}

/// Reads the sections of `wasm` (already validated).
pub fn sections(wasm: &[u8]) -> Result<Sections<'_>, WasmError> {
    let mut s = Sections::default();
    for payload in Parser::new(0).parse_all(wasm) {
        match payload.map_err(invalid)? {
            Payload::TypeSection(r) => {
                for t in r.into_iter_err_on_gc_types() {
                    s.types.push(t.map_err(invalid)?);
                }
            }
            Payload::ImportSection(r) => {
                let offset = r.range().start;
                for i in r.into_imports() {
                    s.imports.push((i.map_err(invalid)?, offset));
                }
            }
            Payload::FunctionSection(r) => {
                for t in r {
                    s.funcs.push(t.map_err(invalid)?);
                }
            }
            Payload::TableSection(r) => {
                let offset = r.range().start;
                for t in r {
                    let t = t.map_err(invalid)?;
                    let init = match t.init {
                        wasmparser::TableInit::RefNull => None,
                        wasmparser::TableInit::Expr(e) => Some(e),
                    };
                    s.tables.push((t.ty, offset, init));
                }
            }
            Payload::MemorySection(r) => {
                let offset = r.range().start;
                for mt in r {
                    s.memories.push((mt.map_err(invalid)?, offset));
                }
            }
            Payload::TagSection(r) => {
                return Err(WasmError::unsupported(
                    "an exception tag",
                    Place::at(r.range().start),
                ));
            }
            Payload::GlobalSection(r) => {
                for g in r.into_iter_with_offsets() {
                    let (offset, g) = g.map_err(invalid)?;
                    s.globals.push((g, offset));
                }
            }
            Payload::ExportSection(r) => {
                for e in r.into_iter_with_offsets() {
                    let (offset, e) = e.map_err(invalid)?;
                    s.exports.push((e, offset));
                }
            }
            Payload::StartSection { func, range } => s.start = Some((func, range.start)),
            Payload::ElementSection(r) => {
                for e in r {
                    s.elements.push(e.map_err(invalid)?);
                }
            }
            Payload::DataSection(r) => {
                for d in r {
                    s.data.push(d.map_err(invalid)?);
                }
            }
            Payload::DataCountSection { .. } => s.data_count = true,
            Payload::CodeSectionStart {
                unchecked_range, ..
            } => s.code_start = unchecked_range.start,
            Payload::CodeSectionEntry(body) => s.bodies.push(body),
            Payload::CustomSection(c) => {
                if let wasmparser::KnownCustom::Name(r) = c.as_known() {
                    read_names(r, &mut s.func_names);
                } else if c.name().starts_with(".debug_") {
                    s.debug.push((c.name(), c.data()));
                }
            }
            _ => {}
        }
    }
    Ok(s)
}

/// Collects the function names of a `name` section, stopping at the first malformed entry.
fn read_names(
    r: wasmparser::NameSectionReader<'_>,
    out: &mut std::collections::HashMap<u32, String>,
) {
    for name in r {
        let Ok(wasmparser::Name::Function(map)) = name else {
            continue;
        };
        for naming in map {
            match naming {
                Ok(n) => {
                    out.insert(n.index, n.name.to_string());
                }
                Err(_) => return,
            }
        }
    }
}
