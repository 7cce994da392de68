//! Translation of a whole module: imports, definitions and exports under the name mapping,
//! then every function body, then the initializer.

use irkit_core::{Builder, Inst, Module};
use wasmparser::{ExternalKind, Operator, TypeRef, ValType};

use crate::env::Libc;
use crate::env::{Env, Func, Global, Memory, Table};
use crate::error::{At, Place, WasmError};
use crate::func::FuncTranslator;
use crate::init::{GlobalInit, ImportLimits, Init};
use crate::memory::{self, MAX_PAGES, NO_MAX_PAGES};
use crate::names;
use crate::parse::{self, Sections};
use crate::table;
use crate::types;

/// The tables translated: 32-bit, of `funcref`, of at most 2^20 entries.
fn check_table(tt: &wasmparser::TableType, place: Place) -> Result<(), WasmError> {
    if tt.table64 || tt.shared || tt.element_type != wasmparser::RefType::FUNCREF {
        return Err(WasmError::unsupported(
            "a table other than a 32-bit funcref table",
            place,
        ));
    }
    if tt.initial > 1 << 20 {
        return Err(WasmError::unsupported(
            "a table of more than 2^20 entries",
            place,
        ));
    }
    Ok(())
}

/// The WebAssembly features this front end accepts: 1.0 (MVP) with mutable-global imports
/// and exports, sign extension, non-trapping float-to-int conversions, multi-value and the
/// encoding of reference types (what clang 19 emits by default: `call_indirect`'s table index
/// as a LEB of any length). Of reference types themselves, a module may hold one `funcref`
/// table, element segments of any kind (passive and declarative ones are not applied), and
/// `ref.func`/`ref.null` in element segments; reference values, their instructions and a
/// second table are refused as unsupported (spec/wasm.md).
pub fn features() -> wasmparser::WasmFeatures {
    use wasmparser::WasmFeatures as F;
    F::WASM1
        | F::SIGN_EXTENSION
        | F::SATURATING_FLOAT_TO_INT
        | F::MULTI_VALUE
        | F::REFERENCE_TYPES
        | F::BULK_MEMORY
}

/// The globals `memory.init` and `data.drop` use for each data segment: its length (0 for an
/// active segment, which instantiation drops) and, for a passive one, its bytes.
fn declare_data_segments(
    m: &mut Module,
    data: &[wasmparser::Data<'_>],
    env: &mut Env,
) -> Result<(), WasmError> {
    let mut b = Builder::new(m);
    for (k, d) in data.iter().enumerate() {
        let place = Place::at(d.range.start);
        let passive = matches!(d.kind, wasmparser::DataKind::Passive);
        let i64t = b.module().ty_i64();
        let n = b
            .module()
            .const_i64(if passive { d.data.len() as i64 } else { 0 });
        let len = b
            .global_var(&format!("data_len.{k}"), i64t, Some(n))
            .at(place)?;
        let bytes = if passive && !d.data.is_empty() {
            let c = b.module().const_bytes(d.data);
            let ty = b
                .module()
                .ty(c)
                .ok_or_else(|| WasmError::unsupported("an untyped constant", place))?;
            b.global_const(&format!("data.{k}"), ty, c).at(place)?
        } else {
            b.module().const_null()
        };
        env.data.push(crate::env::DataSegment { len, bytes });
    }
    Ok(())
}

/// The globals `table.init` and `elem.drop` use for each element segment: its length (0 for
/// an active or declarative segment, which instantiation drops) and, for a passive one of a
/// module with a table, its entries laid out as the table's (without a table, `table.init`
/// cannot be used, only `elem.drop`).
fn declare_elem_segments(
    m: &mut Module,
    elements: &[wasmparser::Element<'_>],
    env: &mut Env,
) -> Result<(), WasmError> {
    for (k, e) in elements.iter().enumerate() {
        let place = Place::at(e.range.start);
        let passive = matches!(e.kind, wasmparser::ElementKind::Passive);
        let funcs = if passive {
            crate::init::segment_funcs(e, place)?
        } else {
            Vec::new()
        };
        let i64t = m.ty_i64();
        let n = m.const_i64(funcs.len() as i64);
        let len = Builder::new(m)
            .global_var(&format!("elem_len.{k}"), i64t, Some(n))
            .at(place)?;
        let Some(t) = env.table.filter(|_| !funcs.is_empty()) else {
            let entries = m.const_null();
            env.elems.push(crate::env::ElemSegment { len, entries });
            continue;
        };
        let mut entries = Vec::with_capacity(funcs.len());
        for f in &funcs {
            let entry = match f {
                Some(fi) => {
                    let (fp, sig) = table::func_entry(env, *fi, place)?;
                    m.const_aggregate(t.entry_ty, &[fp, sig]).at(place)?
                }
                None => m.const_zero(t.entry_ty).at(place)?,
            };
            entries.push(entry);
        }
        let arr = m.ty_array(t.entry_ty, entries.len() as u64).at(place)?;
        let c = m.const_aggregate(arr, &entries).at(place)?;
        let entries = Builder::new(m)
            .global_const(&format!("elem.{k}"), arr, c)
            .at(place)?;
        env.elems.push(crate::env::ElemSegment { len, entries });
    }
    Ok(())
}

/// Translates the binary module `wasm`, compiled under the name `name` (the module name other
/// modules import it by), into an irkit module.
pub fn translate(wasm: &[u8], name: &str) -> Result<Module, WasmError> {
    wasmparser::Validator::new_with_features(features())
        .validate_all(wasm)
        .map_err(|e| WasmError::invalid(&e))?;
    let s = parse::sections(wasm)?;
    let mut m = Module::new();
    let env = declare(&mut m, &s, name)?;
    let imported = env.funcs.len() - s.bodies.len();
    for (i, body) in s.bodies.iter().enumerate() {
        let index = (imported + i) as u32;
        let f = env
            .funcs
            .get(index as usize)
            .ok_or_else(|| WasmError::unsupported(format!("function {index}"), Place::at(0)))?
            .inst;
        FuncTranslator::translate(Builder::new(&mut m), &env, index, f, body)?;
    }
    Ok(m)
}

/// The name hint of defined function `index`: its name from the name section, else `f<index>`.
fn func_hint(s: &Sections<'_>, index: usize) -> String {
    match s.func_names.get(&(index as u32)) {
        Some(n) if !n.is_empty() => hint("", n),
        _ => format!("f{index}"),
    }
}

/// A name hint for a definition: `prefix` and the wasm name, kept to identifier characters.
fn hint(prefix: &str, name: &str) -> String {
    let clean: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{prefix}{clean}")
}

fn value_type(m: &mut Module, t: ValType, place: Place) -> Result<Inst, WasmError> {
    types::val_type(m, t).ok_or_else(|| {
        WasmError::unsupported(format!("value type {}", types::val_type_name(t)), place)
    })
}

fn signature(m: &mut Module, env: &Env, ty: u32, place: Place) -> Result<Inst, WasmError> {
    types::signature(m, func_type(env, ty, place)?)
        .map_err(|t| {
            WasmError::unsupported(format!("value type {}", types::val_type_name(t)), place)
        })?
        .at(place)
}

/// Function type `ty` of the module.
fn func_type(env: &Env, ty: u32, place: Place) -> Result<&wasmparser::FuncType, WasmError> {
    env.types
        .get(ty as usize)
        .ok_or_else(|| WasmError::unsupported(format!("type {ty}"), place))
}

/// A global definition without an initial value (an import, or one set by the initializer).
fn global_decl(
    m: &mut Module,
    name: &str,
    ty: Inst,
    mutable: bool,
    place: Place,
) -> Result<Inst, WasmError> {
    Builder::new(m).global_decl(name, ty, mutable).at(place)
}

/// Declares every import and definition, exports them, builds the memory helper and the
/// initializer; returns the environment function bodies are translated in.
fn declare(m: &mut Module, s: &Sections<'_>, name: &str) -> Result<Env, WasmError> {
    let mut env = Env {
        types: s.types.clone(),
        ..Env::default()
    };
    let mut mem_import = None;
    let mut table_import = None;
    let mut import_limits = Vec::new();
    let mut init_modules: Vec<String> = Vec::new();
    // The symbol each import declaration imports (a re-export may not be its own import).
    let mut import_syms: std::collections::HashMap<Inst, String> = Default::default();
    for (imp, offset) in &s.imports {
        let place = Place::at(*offset);
        let sym = names::symbol(imp.module, imp.name);
        if imp.module != name && !init_modules.iter().any(|x| x == imp.module) {
            init_modules.push(imp.module.to_string());
        }
        match imp.ty {
            TypeRef::Func(t) | TypeRef::FuncExact(t) => {
                let sig = signature(m, &env, t, place)?;
                let f = Builder::new(m)
                    .import_func(&hint("import_", imp.name), sig, &sym)
                    .at(place)?;
                import_syms.insert(f, sym.clone());
                let ty = func_type(&env, t, place)?.clone();
                env.funcs.push(Func { inst: f, ty });
            }
            TypeRef::Global(gt) => {
                let ty = value_type(m, gt.content_type, place)?;
                let g = global_decl(m, &hint("import_", imp.name), ty, gt.mutable, place)?;
                Builder::new(m).import(g, &sym).at(place)?;
                import_syms.insert(g, sym.clone());
                env.globals.push(Global {
                    inst: g,
                    ty,
                    wasm_ty: gt.content_type,
                });
            }
            TypeRef::Memory(mt) => {
                if mt.memory64 || mt.shared {
                    return Err(WasmError::unsupported("a 64-bit or shared memory", place));
                }
                let ty = memory::memory_type(m).at(place)?;
                let g = global_decl(m, &hint("import_", imp.name), ty, true, place)?;
                Builder::new(m).import(g, &sym).at(place)?;
                import_syms.insert(g, sym.clone());
                mem_import = Some(g);
                import_limits.push(ImportLimits {
                    global: g,
                    unit_shift: 16,
                    min: mt.initial,
                    max: mt.maximum,
                    max_is_i32: true,
                });
            }
            TypeRef::Table(tt) => {
                if table_import.is_some() || s.table.is_some() {
                    return Err(WasmError::unsupported("more than one table", place));
                }
                check_table(&tt, place)?;
                let (ty, entry_ty) = table::table_types(m).at(place)?;
                let g = global_decl(m, &hint("import_", imp.name), ty, true, place)?;
                Builder::new(m).import(g, &sym).at(place)?;
                import_syms.insert(g, sym.clone());
                table_import = Some(g);
                import_limits.push(ImportLimits {
                    global: g,
                    unit_shift: 0,
                    min: tt.initial,
                    max: tt.maximum,
                    max_is_i32: false,
                });
                env.table = Some(Table {
                    global: g,
                    ty,
                    entry_ty,
                });
            }
            TypeRef::Tag(_) => return Err(WasmError::unsupported("a tag import", place)),
        }
    }
    let n_imported_funcs = env.funcs.len();
    let n_imported_globals = env.globals.len();
    let code_offset = s.bodies.first().map_or(0, |b| b.range().start);
    for (i, &t) in s.funcs.iter().enumerate() {
        let place = Place::at(code_offset);
        let sig = signature(m, &env, t, place)?;
        let f = Builder::new(m)
            .func(&func_hint(s, n_imported_funcs + i), sig)
            .at(place)?;
        let ty = func_type(&env, t, place)?.clone();
        env.funcs.push(Func { inst: f, ty });
    }
    // The memory.
    let mut mem_initial = None;
    let mem_global = match (&s.memory, mem_import) {
        (Some((mt, offset)), _) => {
            let place = Place::at(*offset);
            if mt.memory64 || mt.shared {
                return Err(WasmError::unsupported("a 64-bit or shared memory", place));
            }
            let ty = memory::memory_type(m).at(place)?;
            let max = mt.maximum.map_or(NO_MAX_PAGES, |x| x.min(MAX_PAGES));
            let null = m.const_null();
            let zero = m.const_i64(0);
            let maxc = m.const_i32(max as i32);
            let init = m.const_aggregate(ty, &[null, zero, maxc]).at(place)?;
            let g = Builder::new(m)
                .global_var("memory", ty, Some(init))
                .at(place)?;
            mem_initial = Some(mt.initial);
            Some((g, place))
        }
        (None, Some(g)) => Some((g, Place::at(0))),
        (None, None) => None,
    };
    let mut libc = None;
    if let Some((g, place)) = mem_global {
        let mut b = Builder::new(m);
        let l = Libc::declare(&mut b, place)?;
        let ty = memory::memory_type(b.module()).at(place)?;
        let i32t = b.module().ty_i32();
        let sig = b.module().ty_fn(i32t, &[i32t]).at(place)?;
        let grow = b.func("memory.grow", sig).at(place)?;
        let mem = Memory {
            global: g,
            ty,
            grow,
        };
        memory::build_grow(&mut b, &mem, &l, place)?;
        env.memory = Some(mem);
        env.libc = Some(l);
        libc = Some(l);
    }
    if s.data_count {
        declare_data_segments(m, &s.data, &mut env)?;
    }
    // The table, and the signature ids `call_indirect` compares.
    if let Some((tt, offset)) = &s.table {
        let place = Place::at(*offset);
        check_table(tt, place)?;
        let (ty, entry_ty) = table::table_types(m).at(place)?;
        let arr = m.ty_array(entry_ty, tt.initial).at(place)?;
        let entries = Builder::new(m)
            .global_var("table_entries", arr, None)
            .at(place)?;
        let len = m.const_i64(tt.initial as i64);
        let max = m.const_i64(tt.maximum.unwrap_or(table::NO_MAX_ENTRIES) as i64);
        let init = m.const_aggregate(ty, &[entries, len, max]).at(place)?;
        let g = Builder::new(m)
            .global_var("table", ty, Some(init))
            .at(place)?;
        env.table = Some(Table {
            global: g,
            ty,
            entry_ty,
        });
    }
    if env.table.is_some() {
        for ft in s.types.clone() {
            table::sig_id(&mut Builder::new(m), &mut env, &ft, Place::at(0))?;
        }
        if env.libc.is_none() {
            env.libc = Some(Libc::declare(&mut Builder::new(m), Place::at(0))?);
        }
    }
    declare_elem_segments(m, &s.elements, &mut env)?;
    // Globals.
    let mut global_inits = Vec::new();
    for (i, (g, offset)) in s.globals.iter().enumerate() {
        let place = Place::at(*offset);
        let index = n_imported_globals + i;
        let ty = value_type(m, g.ty.content_type, place)?;
        let mut ops = g.init_expr.get_operators_reader();
        let op = ops.read().map_err(|e| WasmError::invalid(&e))?;
        let c = match op {
            Operator::I32Const { value } => Some(m.const_i32(value)),
            Operator::I64Const { value } => Some(m.const_i64(value)),
            Operator::F32Const { value } => {
                Some(m.const_float_bits(ty, u64::from(value.bits())).at(place)?)
            }
            Operator::F64Const { value } => Some(m.const_float_bits(ty, value.bits()).at(place)?),
            Operator::GlobalGet { global_index } => {
                global_inits.push(GlobalInit {
                    dst: index as u32,
                    src: global_index,
                });
                None
            }
            other => {
                return Err(WasmError::unsupported(
                    format!(
                        "constant expression `{}`",
                        crate::func::operator_name(&other)
                    ),
                    place,
                ));
            }
        };
        let gname = format!("g{index}");
        let inst = match c {
            Some(c) if g.ty.mutable => Builder::new(m).global_var(&gname, ty, Some(c)).at(place)?,
            Some(c) => Builder::new(m).global_const(&gname, ty, c).at(place)?,
            // Set by the initializer, so a variable even when wasm says immutable.
            None => global_decl(m, &gname, ty, true, place)?,
        };
        env.globals.push(Global {
            inst,
            ty,
            wasm_ty: g.ty.content_type,
        });
    }
    // Exports: every export name of a definition is an `export` of it (a definition exported
    // several times carries several); an exported import is a re-export, its declaration
    // carrying both `import` and `export`, so the name resolves to the imported definition
    // itself (spec/linking.md §3), whatever its kind.
    for (e, offset) in &s.exports {
        let place = Place::at(*offset);
        let sym = names::symbol(name, e.name);
        let def = match e.kind {
            ExternalKind::Func | ExternalKind::FuncExact => {
                env.funcs
                    .get(e.index as usize)
                    .ok_or_else(|| WasmError::unsupported(format!("function {}", e.index), place))?
                    .inst
            }
            ExternalKind::Global => {
                env.globals
                    .get(e.index as usize)
                    .ok_or_else(|| WasmError::unsupported(format!("global {}", e.index), place))?
                    .inst
            }
            ExternalKind::Memory => match (mem_import, &env.memory) {
                (Some(g), _) => g,
                (None, Some(mem)) => mem.global,
                (None, None) => {
                    return Err(WasmError::unsupported("exporting a missing memory", place));
                }
            },
            ExternalKind::Table => match (table_import, &env.table) {
                (Some(g), _) => g,
                (None, Some(t)) => t.global,
                (None, None) => {
                    return Err(WasmError::unsupported("exporting a missing table", place));
                }
            },
            ExternalKind::Tag => return Err(WasmError::unsupported("a tag export", place)),
        };
        if import_syms.get(&def) == Some(&sym) {
            // `(import "N" "f")` exported as `f` by module `N` itself: it would stand for
            // itself (a re-export cycle).
            return Err(WasmError::unsupported(
                "exporting an import of the module's own name under its own field (a cycle)",
                place,
            ));
        }
        Builder::new(m).export(def, &sym).at(place)?;
    }
    Init {
        name,
        init_modules,
        memory: env.memory.zip(mem_initial),
        import_limits,
        libc,
        global_inits,
        data: &s.data,
        elements: &s.elements,
        start: s.start,
    }
    .build(m, &env)?;
    Ok(env)
}
