//! Translation of a whole module: imports, definitions, exports and the initializer under
//! the name mapping, then every function body (a large module's on every core).

use irkit_core::{Builder, CoreError, Inst, Module, Opcode, Payload};
use rayon::prelude::*;
use wasmparser::{ExternalKind, Operator, TypeRef, ValType};

use crate::env::Libc;
use crate::env::{Env, Func, Global, Memory, Table};
use crate::error::{At, Place, WasmError};
use crate::func::FuncTranslator;
use crate::init::{GlobalInit, ImportLimits, Init, Item};
use crate::memory::{self, MAX_PAGES, NO_MAX_PAGES};
use crate::names;
use crate::parse::{self, Sections};
use crate::table;
use crate::types;

/// The tables translated: 32-bit, of `funcref` or `externref`, of at most
/// [`table::MAX_ENTRIES`] entries initially.
fn check_table(tt: &wasmparser::TableType, place: Place) -> Result<(), WasmError> {
    let kind = tt.element_type;
    let func = kind.is_func_ref() || kind.is_concrete_type_ref();
    if tt.table64 || tt.shared || !(func || kind.is_extern_ref()) {
        return Err(WasmError::unsupported(
            "a table other than a 32-bit funcref or externref table",
            place,
        ));
    }
    if tt.initial > table::MAX_ENTRIES {
        return Err(WasmError::unsupported(
            "a table of more than 2^20 entries",
            place,
        ));
    }
    Ok(())
}

/// Whether a table holds `externref`s (nullable or not).
fn is_extern(tt: &wasmparser::TableType) -> bool {
    tt.element_type.is_extern_ref()
}

/// The WebAssembly features this front end accepts: WebAssembly 2.0: 1.0 (MVP) with
/// mutable-global imports and exports, sign extension, non-trapping float-to-int conversions,
/// multi-value, bulk memory, reference types and fixed-width SIMD; and, of 3.0, extended constant expressions,
/// typed function references, tail calls and multiple memories (spec/wasm.md).
pub fn features() -> wasmparser::WasmFeatures {
    use wasmparser::WasmFeatures as F;
    features_2_0() | F::EXTENDED_CONST | F::FUNCTION_REFERENCES | F::TAIL_CALL | F::MULTI_MEMORY
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
/// module with a table, its entries laid out as a table's (references: function records or
/// null; without a table, `table.init` cannot be used, only `elem.drop`).
fn declare_elem_segments(
    m: &mut Module,
    elements: &[wasmparser::Element<'_>],
    env: &mut Env,
) -> Result<(), WasmError> {
    for (k, e) in elements.iter().enumerate() {
        let place = Place::at(e.range.start);
        let passive = matches!(e.kind, wasmparser::ElementKind::Passive);
        let items = if passive {
            crate::init::segment_items(e, place)?
        } else {
            Vec::new()
        };
        let i64t = m.ty_i64();
        let n = m.const_i64(items.len() as i64);
        let len = Builder::new(m)
            .global_var(&format!("elem_len.{k}"), i64t, Some(n))
            .at(place)?;
        if env.tables.is_empty() || items.is_empty() {
            let entries = m.const_null();
            env.elems.push(crate::env::ElemSegment { len, entries });
            continue;
        }
        let mut entries = Vec::with_capacity(items.len());
        for item in &items {
            entries.push(match *item {
                Item::Func(fi) => table::record(&mut Builder::new(m), env, fi, place)?,
                Item::Null => m.const_null(),
                Item::Global(_) => {
                    return Err(WasmError::unsupported(
                        "`global.get` in a passive element segment",
                        place,
                    ));
                }
            });
        }
        let p = m.ty_ptr();
        let arr = m.ty_array(p, entries.len() as u64).at(place)?;
        let c = m.const_aggregate(arr, &entries).at(place)?;
        let entries = Builder::new(m)
            .global_const(&format!("elem.{k}"), arr, c)
            .at(place)?;
        env.elems.push(crate::env::ElemSegment { len, entries });
    }
    Ok(())
}

/// WebAssembly 2.0's features exactly (the W3C recommendation): what a module of that version
/// may use, and what its testsuite (`wasm-v1`, `wasm-v2`) expects a validator to refuse the
/// rest of (a second memory, for one, is malformed there).
pub fn features_2_0() -> wasmparser::WasmFeatures {
    use wasmparser::WasmFeatures as F;
    F::WASM1
        | F::SIGN_EXTENSION
        | F::SATURATING_FLOAT_TO_INT
        | F::MULTI_VALUE
        | F::REFERENCE_TYPES
        | F::BULK_MEMORY
        | F::SIMD
}

/// How a module is translated ([`translate_with_options`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// What the module is validated with: a subset of [`features`] (the ones this front end
    /// translates), such as [`features_2_0`]; a feature outside them is refused as
    /// [`WasmError::Unsupported`] before anything is validated.
    pub features: wasmparser::WasmFeatures,
    /// The NaNs its float operations return.
    pub nans: Nans,
}

impl Default for Options {
    /// All of [`features`], wasm's own NaNs.
    fn default() -> Self {
        Options {
            features: features(),
            nans: Nans::Wasm,
        }
    }
}

/// The NaNs a translated module's float operations return (spec/wasm.md, "NaNs").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Nans {
    /// Any NaN wasm's rules allow: the functions are `relaxed_nan`, so native code returns
    /// the hardware's NaN, as wasm engines do.
    #[default]
    Wasm,
    /// Always the canonical NaN (the IR's default): the same bits on every back end and host,
    /// for comparing them, at the cost of a check of each float result whose bits the
    /// program may see. Also one of the NaNs wasm allows.
    Canonical,
}

/// Translates the binary module `wasm`, compiled under the name `name` (the module name other
/// modules import it by), into an irkit module, validated with [`features`].
pub fn translate(wasm: &[u8], name: &str) -> Result<Module, WasmError> {
    translate_with_options(wasm, name, &Options::default())
}

/// [`translate`], validating with `features` instead (see [`Options::features`]).
pub fn translate_with(
    wasm: &[u8],
    name: &str,
    features: wasmparser::WasmFeatures,
) -> Result<Module, WasmError> {
    let opts = Options {
        features,
        ..Options::default()
    };
    translate_with_options(wasm, name, &opts)
}

/// [`translate`] with `opts`.
pub fn translate_with_options(
    wasm: &[u8],
    name: &str,
    opts: &Options,
) -> Result<Module, WasmError> {
    translate_sharded(wasm, name, opts, None)
}

/// [`translate_with`], the function bodies split into `shards` contiguous shards translated
/// on every core whatever their size (by default, bodies get at most one shard per thread,
/// each of at least 8 KiB: a small module is translated on one thread). The module, its file
/// and its errors are the same for every number of shards: what the tests and the `wasm`
/// fuzz target check.
pub fn translate_in_shards(
    wasm: &[u8],
    name: &str,
    features: wasmparser::WasmFeatures,
    shards: usize,
) -> Result<Module, WasmError> {
    let opts = Options {
        features,
        ..Options::default()
    };
    translate_sharded(wasm, name, &opts, Some(shards))
}

fn translate_sharded(
    wasm: &[u8],
    name: &str,
    opts: &Options,
    shards: Option<usize>,
) -> Result<Module, WasmError> {
    let features = opts.features;
    let extra = features.difference(self::features());
    if !extra.is_empty() {
        return Err(WasmError::unsupported(
            format!("validation with features this front end does not translate ({extra:?})"),
            Place::at(0),
        ));
    }
    // The bodies are checked on every core while the module's declarations are made (from
    // sections already valid); nothing is translated unless they are valid.
    let bodies = crate::validate::sections(wasm, features).map_err(|e| WasmError::invalid(&e))?;
    let mut m = Module::new();
    let (checked, declared) = rayon::join(
        || bodies.check(),
        || -> Result<_, WasmError> {
            let s = parse::sections(wasm)?;
            let env = declare(&mut m, &s, name, opts.nans)?;
            Ok((s, env))
        },
    );
    checked.map_err(|e| WasmError::invalid(&e))?;
    let (s, env) = declared?;
    bodies_on_every_core(&mut m, env, &s, shards)?;
    Ok(m)
}

/// The fewest bytes of function bodies a shard gets: a branch costs a copy of the module's
/// declarations (their data shared, `irkit_core::Blob`) and its adoption, so bodies of fewer
/// than twice this are translated on one thread, and more threads than shards of this size
/// get no shard.
const SHARD_BYTES: usize = 8 * 1024;

/// Bytes of function body per instruction reserved ahead in the arena ([`Module::reserve`]):
/// a body makes about one instruction per 3 bytes (one per 2.5 in the smallest modules).
const BYTES_PER_INSTRUCTION: usize = 2;

/// Translates every function body of `s` into `m`, whose declarations `env` holds: in
/// contiguous shards of about equal bytes (`shards` of them, else one per thread for bodies
/// of at least [`SHARD_BYTES`] each), the first in `m` itself and each
/// other in a branch of `m` (`irkit_core::branch`) adopted once all are done, in order. A
/// definition a body makes on first use (a signature id, a function record: `crate::table`)
/// and an earlier shard made too is the earlier one's. The module is the one a serial
/// translation makes (the same tree, so the same file), and an error is the first one in
/// function order.
fn bodies_on_every_core(
    m: &mut Module,
    env: Env,
    s: &Sections<'_>,
    shards: Option<usize>,
) -> Result<(), WasmError> {
    let imported = env.funcs.len() - s.bodies.len();
    // With DWARF (`clang -g`): each operator's arena mark and offset, for its source line.
    let lines = crate::lines::LineTable::read(&s.debug);
    let sizes: Vec<usize> = s
        .bodies
        .iter()
        .map(|b| (b.range().end - b.range().start) as usize)
        .collect();
    let total: usize = sizes.iter().sum();
    let n = shards.unwrap_or_else(|| (total / SHARD_BYTES).clamp(1, rayon::current_num_threads()));
    let shards = split(&sizes, n);
    let shard = |m: &mut Module, env: &Env, range: std::ops::Range<usize>| {
        m.reserve(sizes[range.clone()].iter().sum::<usize>() / BYTES_PER_INSTRUCTION);
        let mut marks = Vec::new();
        for i in range {
            let index = (imported + i) as u32;
            let f = func_of(env, index)?;
            let marking = (!lines.is_empty()).then_some(&mut marks);
            FuncTranslator::translate(Builder::new(m), env, (index, f), &s.bodies[i], marking)?;
            if !lines.is_empty() {
                crate::lines::annotate(m, f, &marks, s.code_start, &lines)
                    .map_err(|e| WasmError::unsupported(e.to_string(), Place::in_func(index, 0)))?;
                marks.clear();
            }
        }
        Ok::<(), WasmError>(())
    };
    let Some((first, rest)) = shards.split_first() else {
        return Ok(());
    };
    if rest.is_empty() {
        return shard(m, &env, first.clone());
    }
    let at = m.branch_point();
    // Room for every shard's instructions: the branches' are adopted into `m`.
    m.reserve(total / BYTES_PER_INSTRUCTION);
    let mut branches: Vec<(Module, Env)> = rest.iter().map(|_| (m.clone(), env.clone())).collect();
    // Each thread its own `Env`: what bodies make on first use is cached in it.
    let shard = &shard;
    let (done, others) = rayon::join(
        move || {
            let done = shard(m, &env, first.clone());
            (done, env, m)
        },
        || {
            branches
                .par_iter_mut()
                .zip(rest)
                .map(|((bm, benv), r)| shard(bm, benv, r.clone()))
                .collect::<Vec<_>>()
        },
    );
    let (done, mut main_env, m) = done;
    done?;
    others.into_iter().collect::<Result<Vec<()>, WasmError>>()?;
    for ((branch, made), range) in branches.into_iter().zip(rest) {
        let owners = range
            .clone()
            .map(|i| func_of(&main_env, (imported + i) as u32))
            .collect::<Result<Vec<Inst>, WasmError>>()?;
        let same = main_env.same_made(&made, at);
        let place = Place::in_func((imported + range.start) as u32, 0);
        let adopted = m.adopt(branch, at, &owners, &same).at(place)?;
        main_env.take_made(&made, &adopted);
    }
    Ok(())
}

/// Splits bodies of `sizes` bytes into at most `n` contiguous ranges of about equal bytes
/// (none empty).
fn split(sizes: &[usize], n: usize) -> Vec<std::ops::Range<usize>> {
    let total: usize = sizes.iter().sum();
    let n = n.clamp(1, sizes.len().max(1));
    let mut out = Vec::with_capacity(n);
    let (mut start, mut sum) = (0, 0);
    for (i, &size) in sizes.iter().enumerate() {
        sum += size;
        // Shard k ends once the bytes so far reach k+1 n-ths of the total.
        if out.len() + 1 < n && sum * n >= total * (out.len() + 1) {
            out.push(start..i + 1);
            start = i + 1;
        }
    }
    if start < sizes.len() {
        out.push(start..sizes.len());
    }
    out
}

/// The irkit function of wasm function `index`.
fn func_of(env: &Env, index: u32) -> Result<Inst, WasmError> {
    env.funcs
        .get(index as usize)
        .map(|f| f.inst)
        .ok_or_else(|| WasmError::unsupported(format!("function {index}"), Place::at(0)))
}

/// A function that runs wasm code: decorated `relaxed_nan` with [`Nans::Wasm`], since wasm
/// lets a float operation return any NaN its rules allow where the IR's default is the
/// canonical NaN (spec/wasm.md, "NaNs"), so native code need not canonicalize them.
pub(crate) fn wasm_func(
    b: &mut Builder<'_>,
    name: &str,
    sig: Inst,
    nans: Nans,
) -> Result<Inst, CoreError> {
    let f = b.func(name, sig)?;
    if nans == Nans::Wasm {
        b.decorate(f, Opcode::RELAXED_NAN, Vec::new(), Payload::None)?;
    }
    Ok(f)
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
fn declare(m: &mut Module, s: &Sections<'_>, name: &str, nans: Nans) -> Result<Env, WasmError> {
    let mut env = Env {
        types: s.types.clone(),
        ..Env::default()
    };
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
                let (gty, boxed) = crate::env::global_type(m, gt.content_type, ty).at(place)?;
                let g = global_decl(m, &hint("import_", imp.name), gty, gt.mutable, place)?;
                Builder::new(m).import(g, &sym).at(place)?;
                import_syms.insert(g, sym.clone());
                env.globals.push(Global {
                    inst: g,
                    ty,
                    wasm_ty: gt.content_type,
                    boxed,
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
                env.memories.push(Memory { global: g, ty });
                import_limits.push(ImportLimits {
                    global: g,
                    unit_shift: 16,
                    min: mt.initial,
                    max: mt.maximum,
                    max_is_i32: true,
                });
            }
            TypeRef::Table(tt) => {
                check_table(&tt, place)?;
                let ty = table::table_type(m, is_extern(&tt)).at(place)?;
                let g = global_decl(m, &hint("import_", imp.name), ty, true, place)?;
                Builder::new(m).import(g, &sym).at(place)?;
                import_syms.insert(g, sym.clone());
                import_limits.push(ImportLimits {
                    global: g,
                    unit_shift: 0,
                    min: tt.initial,
                    max: tt.maximum,
                    max_is_i32: false,
                });
                env.tables.push(Table { global: g, ty });
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
        let f = wasm_func(
            &mut Builder::new(m),
            &func_hint(s, n_imported_funcs + i),
            sig,
            nans,
        )
        .at(place)?;
        let ty = func_type(&env, t, place)?.clone();
        env.funcs.push(Func { inst: f, ty });
    }
    // The defined memories, after the imported ones.
    let mut mem_initial = Vec::new();
    for (mt, offset) in &s.memories {
        let place = Place::at(*offset);
        if mt.memory64 || mt.shared {
            return Err(WasmError::unsupported("a 64-bit or shared memory", place));
        }
        let ty = memory::memory_type(m).at(place)?;
        let max = mt.maximum.map_or(NO_MAX_PAGES, |x| x.min(MAX_PAGES));
        let null = m.const_null();
        let zero = m.const_i64(0);
        let maxc = m.const_i32(max as i32);
        let init = m.const_aggregate(ty, &[null, zero, maxc, zero]).at(place)?;
        let g = Builder::new(m)
            .global_var("memory", ty, Some(init))
            .at(place)?;
        let mem = Memory { global: g, ty };
        env.memories.push(mem);
        mem_initial.push((mem, mt.initial));
    }
    let mut libc = None;
    if !env.memories.is_empty() {
        let place = s
            .memories
            .first()
            .map_or(Place::at(0), |(_, o)| Place::at(*o));
        let l = Libc::declare(&mut Builder::new(m), place)?;
        env.libc = Some(l);
        libc = Some(l);
    }
    if s.data_count {
        declare_data_segments(m, &s.data, &mut env)?;
    }
    // The tables (their entries allocated by the initializer) and their helpers.
    let mut table_initial = Vec::new();
    for (tt, offset, entry) in &s.tables {
        let place = Place::at(*offset);
        check_table(tt, place)?;
        let ty = table::table_type(m, is_extern(tt)).at(place)?;
        let mut fields = vec![
            m.const_null(),
            m.const_i64(0),
            m.const_i64(tt.maximum.unwrap_or(table::NO_MAX_ENTRIES) as i64),
            m.const_i64(0),
        ];
        if is_extern(tt) {
            let i8t = m.ty_i8();
            fields.push(m.const_zero(i8t).at(place)?);
        }
        let init = m.const_aggregate(ty, &fields).at(place)?;
        let g = Builder::new(m)
            .global_var("table", ty, Some(init))
            .at(place)?;
        let t = Table { global: g, ty };
        env.tables.push(t);
        table_initial.push((t, tt.initial, entry.clone()));
    }
    if !env.tables.is_empty() {
        let mut b = Builder::new(m);
        let l = match env.libc {
            Some(l) => l,
            None => Libc::declare(&mut b, Place::at(0))?,
        };
        env.libc = Some(l);
        env.table_helpers = Some(table::build_helpers(&mut b, &l, Place::at(0))?);
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
        // A `global.get`, or more than one operator (extended constant expressions): computed
        // by the initializer.
        let computed =
            matches!(op, Operator::GlobalGet { .. }) || !matches!(ops.read(), Ok(Operator::End));
        let c = match op {
            _ if computed => {
                global_inits.push(GlobalInit {
                    dst: index as u32,
                    expr: g.init_expr.clone(),
                });
                None
            }
            Operator::I32Const { value } => Some(m.const_i32(value)),
            Operator::I64Const { value } => Some(m.const_i64(value)),
            Operator::F32Const { value } => {
                Some(m.const_float_bits(ty, u64::from(value.bits())).at(place)?)
            }
            Operator::F64Const { value } => Some(m.const_float_bits(ty, value.bits()).at(place)?),
            Operator::V128Const { value } => {
                let lanes: Vec<Inst> = value
                    .bytes()
                    .chunks_exact(4)
                    .map(|c| m.const_i32(i32::from_le_bytes([c[0], c[1], c[2], c[3]])))
                    .collect();
                Some(m.const_aggregate(ty, &lanes).at(place)?)
            }
            Operator::RefNull { .. } => Some(m.const_null()),
            Operator::RefFunc { function_index } => Some(table::record(
                &mut Builder::new(m),
                &env,
                function_index,
                place,
            )?),
            other => {
                return Err(crate::init::not_translated(
                    "constant expression",
                    &other,
                    place,
                ));
            }
        };
        let gname = format!("g{index}");
        let (gty, boxed) = crate::env::global_type(m, g.ty.content_type, ty).at(place)?;
        let c = match (c, boxed) {
            (Some(c), Some(bt)) => Some(m.const_aggregate(bt, &[c]).at(place)?),
            (c, _) => c,
        };
        let inst = match c {
            Some(c) if g.ty.mutable => {
                Builder::new(m).global_var(&gname, gty, Some(c)).at(place)?
            }
            Some(c) => Builder::new(m).global_const(&gname, gty, c).at(place)?,
            // Set by the initializer, so a variable even when wasm says immutable.
            None => global_decl(m, &gname, gty, true, place)?,
        };
        env.globals.push(Global {
            inst,
            ty,
            wasm_ty: g.ty.content_type,
            boxed,
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
            ExternalKind::Memory => {
                env.memories
                    .get(e.index as usize)
                    .ok_or_else(|| WasmError::unsupported(format!("memory {}", e.index), place))?
                    .global
            }
            ExternalKind::Table => {
                env.tables
                    .get(e.index as usize)
                    .ok_or_else(|| WasmError::unsupported(format!("table {}", e.index), place))?
                    .global
            }
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
        memories: mem_initial,
        tables: table_initial,
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
