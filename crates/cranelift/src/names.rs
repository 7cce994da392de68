//! What each entry of a function's external-name table denotes, apart from the ids of one
//! build: a definition of the function's reference list ([`crate::fingerprint`]), one of the
//! runtime's symbols, or one of the function's own trap messages. A lowered function's table
//! is read back into these ([`names_of`]); the code cache stores them beside the code; every
//! build resolves them to its own symbols ([`resolve`]) when the code is defined.
//!
//! A function's trap messages are one read-only data object, its **message table**: the texts
//! concatenated in first-use order (the trap routine takes a pointer and a length), declared
//! in the Cranelift module in the order functions are defined, not lowered (so that lowering
//! needs only read-only shared state and runs on any thread). While lowering, the table is
//! the placeholder name [`MESSAGE_NS`]`:0` and a message an offset from it
//! ([`message_in_func`]); when the function is defined, [`declare_messages`] declares the
//! table and the placeholder becomes its symbol ([`bind_messages`], [`bind_message_relocs`]).
//! (The offset is in the code, not in a relocation: position-independent code loads a data
//! address from the GOT and adds the offset, so tables cannot share a symbol.)

use std::collections::HashMap;

use cranelift_codegen::ir::{self, Function, UserExternalName};
use cranelift_module::{DataId, FuncId, Module as ClModule, ModuleReloc, ModuleRelocTarget};
use irkit_backend::BackendError;
use irkit_core::Inst;

use crate::context::{Callee, Ctx};
use crate::runtime::Runtime;

/// The external-name namespace of functions (`cranelift-module`'s).
const FUNC_NS: u32 = 0;

/// The namespace of data objects (`cranelift-module`'s).
const DATA_NS: u32 = 1;

/// The namespace of the placeholder of a function's message table (index 0).
pub(crate) const MESSAGE_NS: u32 = 2;

/// What one name-table entry denotes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Name {
    /// Entry `i` of the function's reference list (a function or a global).
    Ref(u32),
    /// Runtime symbol `k` ([`runtime_symbols`]).
    Runtime(u32),
    /// The function's message table (the value is 0: a function has one).
    Message(u32),
    /// A symbol of this build only (no symbolic form; such code is not cached).
    Raw(UserExternalName),
}

/// A symbol of the Cranelift module: a function or a data object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Symbol {
    Func(FuncId),
    Data(DataId),
}

/// The runtime's symbols in their fixed order (what [`Name::Runtime`] numbers).
fn runtime_symbols(rt: &Runtime) -> [Symbol; 23] {
    [
        Symbol::Func(rt.trap),
        Symbol::Func(rt.write),
        Symbol::Func(rt.exit),
        Symbol::Func(rt.fflush),
        Symbol::Func(rt.fmod),
        Symbol::Func(rt.fmodf),
        Symbol::Func(rt.getrlimit),
        Symbol::Func(rt.signal),
        Symbol::Func(rt.exit_now),
        Symbol::Func(rt.fault),
        Symbol::Data(rt.state),
        Symbol::Func(rt.sigaction),
        Symbol::Func(rt.raise),
        Symbol::Func(rt.pthread_self),
        Symbol::Func(rt.pthread_getattr_np),
        Symbol::Func(rt.pthread_attr_getstack),
        Symbol::Func(rt.pthread_attr_destroy),
        match rt.thread {
            crate::runtime::ThreadState::Tls(id) => Symbol::Data(id),
            crate::runtime::ThreadState::Host(id) => Symbol::Func(id),
        },
        Symbol::Func(rt.stack_slow),
        Symbol::Func(rt.mem_grow),
        Symbol::Func(rt.calloc),
        Symbol::Func(rt.memcpy),
        Symbol::Func(rt.free),
    ]
}

/// The symbol definition `d` denotes in `ctx`, if it has one.
fn symbol_of<M: ClModule>(ctx: &Ctx<'_, M>, d: Inst) -> Option<Symbol> {
    match ctx.funcs.get(&d) {
        Some(Callee::Func(id) | Callee::Abort(id)) => Some(Symbol::Func(*id)),
        Some(_) => None,
        None => ctx.globals.get(&d).map(|&id| Symbol::Data(id)),
    }
}

/// A reference to the trap message at `offset` in the message table of `func` (near unless
/// `far`, as [`Ctx::data_in_func`] makes a reference to data the module defines).
pub(crate) fn message_in_func(func: &mut Function, offset: i64, far: bool) -> ir::GlobalValue {
    let name = func.declare_imported_user_function(UserExternalName::new(MESSAGE_NS, 0));
    func.create_global_value(ir::GlobalValueData::Symbol {
        name: ir::ExternalName::user(name),
        offset: ir::immediates::Imm64::new(offset),
        colocated: !far,
        tls: false,
    })
}

/// The name table of lowered function `func`: a symbol found in `refs` (the reference list,
/// if known) is its first position there, then a runtime symbol, a message placeholder; any
/// other is [`Name::Raw`].
pub(crate) fn names_of<M: ClModule>(
    ctx: &Ctx<'_, M>,
    func: &Function,
    refs: Option<&[Inst]>,
) -> Vec<Name> {
    let mut by_symbol: HashMap<Symbol, Name> = HashMap::new();
    for (i, &d) in refs.unwrap_or(&[]).iter().enumerate() {
        if let Some(s) = symbol_of(ctx, d) {
            by_symbol.entry(s).or_insert(Name::Ref(i as u32));
        }
    }
    if refs.is_some() {
        for (k, s) in runtime_symbols(&ctx.rt).into_iter().enumerate() {
            by_symbol.entry(s).or_insert(Name::Runtime(k as u32));
        }
    }
    func.params
        .user_named_funcs()
        .values()
        .map(|n| {
            let s = match n.namespace {
                FUNC_NS => Symbol::Func(FuncId::from_u32(n.index)),
                DATA_NS => Symbol::Data(DataId::from_u32(n.index)),
                MESSAGE_NS => return Name::Message(n.index),
                _ => return Name::Raw(n.clone()),
            };
            by_symbol.get(&s).cloned().unwrap_or(Name::Raw(n.clone()))
        })
        .collect()
}

/// The relocation targets of `names` in `ctx`'s build: `refs` is the function's reference
/// list, `tables` how many message tables it has ([`message_tables`]; its table is left at
/// the placeholder [`MESSAGE_NS`]`:0`, for [`bind_message_relocs`]). `None` if a name points
/// outside them or a reference has no symbol of its kind (an entry that is not this
/// function's).
pub(crate) fn resolve<M: ClModule>(
    ctx: &Ctx<'_, M>,
    names: &[Name],
    refs: &[Inst],
    tables: usize,
) -> Option<Vec<ModuleRelocTarget>> {
    let runtime = runtime_symbols(&ctx.rt);
    names
        .iter()
        .map(|n| {
            let s = match *n {
                Name::Ref(i) => symbol_of(ctx, *refs.get(i as usize)?)?,
                Name::Runtime(k) => *runtime.get(k as usize)?,
                Name::Message(j) if (j as usize) < tables => {
                    return Some(ModuleRelocTarget::user(MESSAGE_NS, 0));
                }
                Name::Message(_) => return None,
                Name::Raw(ref n) => return Some(ModuleRelocTarget::user(n.namespace, n.index)),
            };
            Some(match s {
                Symbol::Func(id) => ModuleRelocTarget::user(FUNC_NS, id.as_u32()),
                Symbol::Data(id) => ModuleRelocTarget::user(DATA_NS, id.as_u32()),
            })
        })
        .collect()
}

/// How many message tables a function with trap messages `texts` has: one, or none without
/// messages (what [`Name::Message`] may number).
pub(crate) fn message_tables(texts: &[String]) -> usize {
    usize::from(!texts.is_empty())
}

/// Declares a function's message table (`texts` concatenated) in the order code using it is
/// defined: its data object, if it has messages.
pub(crate) fn declare_messages<M: ClModule>(
    ctx: &mut Ctx<'_, M>,
    texts: &[String],
) -> Result<Option<DataId>, BackendError> {
    if message_tables(texts) == 0 {
        return Ok(None);
    }
    ctx.message(&texts.concat()).map(Some)
}

/// Points the message placeholder of `func` at its message table `table` (declared), for
/// code compiled by `cranelift-module` itself (the JIT, a serial build).
pub(crate) fn bind_messages(func: &mut Function, table: Option<DataId>) {
    let Some(id) = table else {
        return;
    };
    let placeholder = func
        .params
        .user_named_funcs()
        .iter()
        .find(|(_, n)| n.namespace == MESSAGE_NS)
        .map(|(r, _)| r);
    if let Some(r) = placeholder {
        func.params
            .reset_user_func_name(r, UserExternalName::new(DATA_NS, id.as_u32()));
    }
}

/// Points the relocations of compiled code that [`resolve`] left at the message placeholder
/// at the function's message table `table` (declared).
pub(crate) fn bind_message_relocs(relocs: &mut [ModuleReloc], table: Option<DataId>) {
    let Some(id) = table else {
        return;
    };
    for r in relocs.iter_mut() {
        if let ModuleRelocTarget::User {
            namespace: MESSAGE_NS,
            index: 0,
        } = r.name
        {
            r.name = ModuleRelocTarget::user(DATA_NS, id.as_u32());
        }
    }
}
