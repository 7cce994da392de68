//! The live program of a script: every module the script instantiates, in one back-end
//! [`Session`], each added by linking it onto what is already live (so imports bind to the live
//! instances, sharing their memory, globals and tables), after a round trip through `.irm`
//! bytes (so separate compilation is exercised for real).

use std::collections::HashMap;

use irkit_backend::{Backend, BackendError, Call, RunOptions, Session, Val};
use irkit_core::{Builder, Inst, Module, Opcode, Payload};
use irkit_link::{Input, LinkOptions, LiveNames};
use irkit_wasm::WasmError;
use irkit_wasm::names::{escape, init_symbol, symbol};

use crate::spectest::{SPECTEST, SPECTEST_WAT};

/// Why a module could not be instantiated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InstantiateError {
    /// The front end refused it as malformed or invalid (wasmparser's or wat's message).
    Invalid(String),
    /// The front end refused it as using what it does not translate yet.
    Unsupported(String),
    /// The linker refused it (a missing import, a type mismatch).
    Unlinkable(String),
    /// Its initializer trapped (a segment that does not fit, a trapping `start`).
    Trapped {
        /// The trap kind.
        kind: String,
    },
    /// Anything else: a translation that does not verify or write, a back-end error.
    Internal(String),
}

impl std::fmt::Display for InstantiateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InstantiateError::Invalid(m) => write!(f, "refused as invalid: {m}"),
            InstantiateError::Unsupported(m) => write!(f, "refused as unsupported: {m}"),
            InstantiateError::Unlinkable(m) => write!(f, "unlinkable: {m}"),
            InstantiateError::Trapped { kind } => write!(f, "instantiation trapped: {kind}"),
            InstantiateError::Internal(m) => write!(f, "internal error: {m}"),
        }
    }
}

/// The prefix an import from a module name that no instance is registered under gets, so it
/// can only fail to link (an import name of the front end never starts with it).
const UNREGISTERED: &str = "wast-unregistered:";

/// The prefix of the getter function of an exported global (`get` in a script).
const GETTER: &str = "wast-get:";

/// The live program of one script on one back end.
pub struct Store {
    session: Box<dyn Session>,
    /// Escaped registered module name → escaped instance name.
    registered: HashMap<String, String>,
    instances: usize,
    link: LinkOptions,
    /// The live program's exports, for the links onto it.
    names: LiveNames,
    stats: StoreStats,
    /// How its modules are translated ([`Store::with_options`]).
    wasm: irkit_wasm::Options,
}

/// What a store did: deterministic counts of its work.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StoreStats {
    /// Modules linked onto the live program and loaded (the spectest module included).
    pub modules: usize,
    /// Instructions the links copied into the live program (each module's own, not the live
    /// program's).
    pub insts_linked: u64,
}

/// The call depth limit of a script's calls when the options give none: the same limit on
/// every back end, so that `assert_exhaustion` (and a differential comparison) sees the same
/// trap at the same call, and soon (spec/wasm.md, "Scripts").
pub const SCRIPT_MAX_DEPTH: usize = 10_000;

impl Store {
    /// A store on `backend` with `spectest` instantiated and registered; its calls are limited
    /// to `opts.max_depth` activations, else [`SCRIPT_MAX_DEPTH`].
    pub fn new(backend: &dyn Backend, opts: &RunOptions) -> Result<Store, InstantiateError> {
        Store::with_features(backend, opts, irkit_wasm::features())
    }

    /// [`Store::new`], its modules validated with `features` (a subset of what the front end
    /// translates: `irkit_wasm::features_2_0()` for the WebAssembly 2.0 testsuite, say).
    pub fn with_features(
        backend: &dyn Backend,
        opts: &RunOptions,
        features: irkit_wasm::WasmFeatures,
    ) -> Result<Store, InstantiateError> {
        let wasm = irkit_wasm::Options {
            features,
            ..irkit_wasm::Options::default()
        };
        Store::with_options(backend, opts, wasm)
    }

    /// [`Store::new`], its modules translated with `wasm` (its features, as for
    /// [`Store::with_features`], and its NaNs: `irkit_wasm::Nans::Canonical` makes every
    /// back end return the same bits, for comparing them).
    pub fn with_options(
        backend: &dyn Backend,
        opts: &RunOptions,
        wasm: irkit_wasm::Options,
    ) -> Result<Store, InstantiateError> {
        let opts = RunOptions {
            max_depth: opts.max_depth.or(Some(SCRIPT_MAX_DEPTH)),
            ..opts.clone()
        };
        let session = backend
            .session(&opts)
            .map_err(|e| InstantiateError::Internal(e.to_string()))?;
        let link = LinkOptions {
            library: true,
            ..LinkOptions::default()
        };
        let mut store = Store {
            session,
            registered: HashMap::new(),
            instances: 0,
            link,
            names: LiveNames::new(),
            stats: StoreStats::default(),
            wasm: irkit_wasm::Options::default(),
        };
        let spectest = irkit_wasm::to_binary(SPECTEST_WAT.as_bytes()).map_err(|e| {
            InstantiateError::Internal(format!("the spectest module does not assemble: {e}"))
        })?;
        store.instantiate_as(&spectest, SPECTEST)?;
        store.register(SPECTEST, SPECTEST);
        store.wasm = wasm;
        Ok(store)
    }

    /// Instantiates the binary module `wasm` under a fresh instance name, which it returns.
    pub fn instantiate(&mut self, wasm: &[u8]) -> Result<String, InstantiateError> {
        self.instances += 1;
        let name = format!("${}", self.instances);
        self.instantiate_as(wasm, &name)?;
        Ok(name)
    }

    /// Only translates and verifies `wasm` (for `assert_invalid` and `assert_malformed`).
    pub fn check(&self, wasm: &[u8]) -> Result<(), InstantiateError> {
        translate(wasm, "check", &self.wasm).map(drop)
    }

    fn instantiate_as(&mut self, wasm: &[u8], name: &str) -> Result<(), InstantiateError> {
        let mut m = translate(wasm, name, &self.wasm)?;
        self.bind_imports(&mut m, name)?;
        add_getters(&mut m, name).map_err(InstantiateError::Internal)?;
        let bytes = irkit_format::write(&m)
            .map_err(|e| InstantiateError::Internal(format!("writing the module: {e}")))?;
        let input = Input::from_bytes(&format!("{name}.irm"), &bytes).map_err(|e| {
            InstantiateError::Internal(format!("reading it back: {}", one_line(&e)))
        })?;
        // Linked onto the live program in place and loaded: the work is the new module's.
        let mut input = Some(input);
        let mut refused = None;
        let (names, link, stats) = (&mut self.names, &self.link, &mut self.stats);
        let loaded = self
            .session
            .load_in_place(&mut |live| {
                let inputs = input.take().into_iter().collect();
                match irkit_link::extend_live(live, names, inputs, link) {
                    Ok(s) => {
                        stats.insts_linked += s.insts_copied;
                        true
                    }
                    Err(e) => {
                        refused = Some(one_line(&e));
                        false
                    }
                }
            })
            .map_err(|e| InstantiateError::Internal(e.to_string()))?;
        if !loaded {
            return Err(InstantiateError::Unlinkable(refused.unwrap_or_default()));
        }
        stats.modules += 1;
        match self.session.call(&init_symbol(name), &[]) {
            Ok(Call::Returned(_)) => Ok(()),
            // Limits of an imported memory or table are wasm link-time checks that irkit
            // types do not carry; the initializer checks them first (spec/wasm.md).
            Ok(Call::Trapped { kind, .. }) if kind == irkit_wasm::traps::INCOMPATIBLE_IMPORT => {
                Err(InstantiateError::Unlinkable(format!(
                    "{kind} (the limits of an imported memory or table, checked by the initializer)"
                )))
            }
            Ok(Call::Trapped { kind, .. }) => Err(InstantiateError::Trapped { kind }),
            Ok(Call::Exited(c)) => Err(InstantiateError::Internal(format!(
                "the initializer called exit({c})"
            ))),
            Err(e) => Err(InstantiateError::Internal(e.to_string())),
        }
    }

    /// What the store did so far.
    pub fn stats(&self) -> StoreStats {
        self.stats
    }

    /// Makes `instance`'s exports importable from the module name `as_name`.
    pub fn register(&mut self, as_name: &str, instance: &str) {
        self.registered.insert(escape(as_name), escape(instance));
    }

    /// Calls the function `field` exported by `instance`.
    pub fn invoke(
        &mut self,
        instance: &str,
        field: &str,
        args: &[Val],
    ) -> Result<Call, BackendError> {
        self.session.call(&symbol(instance, field), args)
    }

    /// The functions `instance` exports, by field name (in the live program's order), each
    /// with arguments of its parameter types, all zero; `None` for a function whose parameters
    /// are not all numbers or references (a reference argument is null).
    pub fn exported_functions(&self, instance: &str) -> Vec<(String, Option<Vec<Val>>)> {
        let m = self.session.module();
        let prefix = symbol(instance, "");
        let mut out = Vec::new();
        for &d in m.children(m.root()) {
            if m.opcode(d) != Opcode::FUNC {
                continue;
            }
            let params = m.ty(d).and_then(|t| m.fn_signature(t)).map(|(_, ps)| ps);
            let zeros = params.and_then(|ps| {
                ps.iter()
                    .map(|&p| match m.opcode(p) {
                        Opcode::I32 => Some(Val::I32(0)),
                        Opcode::I64 => Some(Val::I64(0)),
                        Opcode::F32 => Some(Val::F32(0)),
                        Opcode::F64 => Some(Val::F64(0)),
                        Opcode::PTR => Some(Val::Ptr(0)),
                        _ => None,
                    })
                    .collect::<Option<Vec<Val>>>()
            });
            for field in m
                .decoration_strs(d, Opcode::EXPORT)
                .filter_map(|e| e.strip_prefix(&prefix))
                .filter_map(irkit_wasm::names::unescape)
            {
                out.push((field, zeros.clone()));
            }
        }
        out
    }

    /// Reads the global `field` exported by `instance`.
    pub fn get(&mut self, instance: &str, field: &str) -> Result<Call, BackendError> {
        self.session
            .call(&format!("{GETTER}{}", symbol(instance, field)), &[])
    }

    /// Points each import at the instance its module name is registered for (`wasm:M:f`
    /// becomes `wasm:INSTANCE:f`, `wasm-init:M` becomes `wasm-init:INSTANCE`), or at a name
    /// nothing exports if none is; and pins every import declaration to the initializer.
    fn bind_imports(&self, m: &mut Module, name: &str) -> Result<(), InstantiateError> {
        let root = m.root();
        let mut renames = Vec::new();
        for &d in m.children(root) {
            for &dec in m.decorations(d) {
                if m.opcode(dec) != Opcode::IMPORT {
                    continue;
                }
                let Payload::Str(s) = m.payload(dec) else {
                    continue;
                };
                if let Some(new) = self.bound(s) {
                    renames.push((dec, new));
                }
            }
        }
        let internal = |e: irkit_core::CoreError| InstantiateError::Internal(e.to_string());
        let imports: Vec<Inst> = renames.iter().map(|&(dec, _)| dec).collect();
        for (dec, new) in renames {
            m.set_payload(dec, Payload::Str(new.into()))
                .map_err(internal)?;
        }
        // WebAssembly instantiates a module only if every import resolves, used or not; the
        // linker resolves what is reached, so the initializer pins every import declaration.
        let init = m
            .find_export(&init_symbol(name))
            .ok_or_else(|| InstantiateError::Internal("the module has no initializer".into()))?;
        for dec in imports {
            let Some(decl) = m.parent(dec) else { continue };
            if decl != init {
                m.add_decoration(init, Opcode::PIN, vec![decl], Payload::None)
                    .map_err(internal)?;
            }
        }
        Ok(())
    }

    fn bound(&self, import: &str) -> Option<String> {
        let (prefix, module, field) = if let Some(rest) = import.strip_prefix("wasm:") {
            let (module, field) = rest.split_once(':')?;
            ("wasm:", module, Some(field))
        } else {
            ("wasm-init:", import.strip_prefix("wasm-init:")?, None)
        };
        let target = match self.registered.get(module) {
            Some(instance) => format!("{prefix}{instance}"),
            None => format!("{UNREGISTERED}{prefix}{module}"),
        };
        Some(match field {
            Some(f) => format!("{target}:{f}"),
            None => target,
        })
    }
}

fn translate(
    wasm: &[u8],
    name: &str,
    opts: &irkit_wasm::Options,
) -> Result<Module, InstantiateError> {
    let m = irkit_wasm::translate_with_options(wasm, name, opts).map_err(|e| match e {
        WasmError::Invalid { .. } | WasmError::Text(_) => InstantiateError::Invalid(e.to_string()),
        WasmError::Unsupported { .. } => InstantiateError::Unsupported(e.to_string()),
        other => InstantiateError::Internal(other.to_string()),
    })?;
    irkit_core::verify::verify(&m).map_err(|errs| {
        let first = errs.first().map(|e| e.to_string()).unwrap_or_default();
        InstantiateError::Internal(format!("the translation does not verify: {first}"))
    })?;
    Ok(m)
}

/// Adds, for every exported global of a scalar type (a number or a reference; an `externref`
/// is the field of a `struct {ptr}`, spec/wasm.md), a function exported as `wast-get:`
/// followed by the global's export name, which returns its value.
fn add_getters(m: &mut Module, instance: &str) -> Result<(), String> {
    let prefix = symbol(instance, "");
    let root = m.root();
    let mut globals = Vec::new();
    for &d in m.children(root) {
        let op = m.opcode(d);
        if op != Opcode::GLOBAL_VAR && op != Opcode::GLOBAL_CONST {
            continue;
        }
        let Some(ty) = m.ty(d) else { continue };
        let scalar = |t: Inst| {
            matches!(
                m.opcode(t),
                Opcode::I32 | Opcode::I64 | Opcode::F32 | Opcode::F64 | Opcode::PTR
            )
        };
        // The value's type, and whether it is the one field of a `struct`.
        let value = if scalar(ty) {
            Some((ty, false))
        } else {
            match m.operands(ty) {
                [f] if m.opcode(ty) == Opcode::STRUCT && m.opcode(*f) == Opcode::PTR => {
                    Some((*f, true))
                }
                _ => None,
            }
        };
        let Some((vty, boxed)) = value else { continue };
        for export in m.decoration_strs(d, Opcode::EXPORT) {
            if export.starts_with(&prefix) {
                globals.push((d, ty, vty, boxed, format!("{GETTER}{export}")));
            }
        }
    }
    let mut b = Builder::new(m);
    for (g, ty, vty, boxed, name) in globals {
        let e = |e: irkit_core::CoreError| e.to_string();
        let sig = b.module().ty_fn(vty, &[]).map_err(e)?;
        let f = b.func("", sig).map_err(e)?;
        b.export(f, &name).map_err(e)?;
        let (entry, _) = b.block(f, &[]).map_err(e)?;
        b.position_at_end(entry);
        let a = if boxed {
            let zero = b.module().const_i64(0);
            let k = b.module().const_i32(0);
            b.elem(ty, g, &[zero, k]).map_err(e)?
        } else {
            g
        };
        let v = b.load(vty, a).map_err(e)?;
        b.ret(Some(v)).map_err(e)?;
    }
    Ok(())
}

/// Every problem of a failed link on one line.
fn one_line(e: &irkit_link::LinkErrors) -> String {
    let lines: Vec<String> = e.errors().iter().map(|e| e.to_string()).collect();
    lines.join("; ")
}
