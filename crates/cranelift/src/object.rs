//! Object files through `cranelift-object`: the whole module, plus the runtime and a C `main`.

use cranelift_module::Linkage;
use cranelift_object::{ObjectBuilder, ObjectModule};
use irkit_backend::BackendError;
use irkit_core::Module;

use crate::context::LowerOptions;
use crate::error::cl_err;
use crate::lower::lower_module;

/// Compiles `m` to the bytes of a relocatable object file for the host. If `m` exports a `main`
/// function, the object's global symbol `main` (C's `int main(void)`) runs it and returns its
/// exit code; without one (a library) there is no `main` symbol. `extern` functions without a
/// body are undefined symbols for the system linker to resolve; those with a body are global
/// symbols under their C names; everything else is local.
pub fn emit_object(m: &Module) -> Result<Vec<u8>, BackendError> {
    emit_object_with_entry(m, "main")
}

/// Like [`emit_object`], with the C `main` running the function exported as `entry` (the
/// linker's `--entry NAME`); without such an export there is no `main` symbol.
pub fn emit_object_with_entry(m: &Module, entry: &str) -> Result<Vec<u8>, BackendError> {
    emit_object_with(m, entry, irkit_backend::DEFAULT_MAX_DEPTH)
}

/// Like [`emit_object_with_entry`], with call depth limit `max_depth` (at least 1): a call made
/// while that many IR activations are live is the `stack overflow` trap, as in the interpreter.
/// The program may use three quarters of the main thread's stack limit (`ulimit -s`, at most
/// 1 GiB) less a 256 KiB margin.
pub fn emit_object_with(
    m: &Module,
    entry: &str,
    max_depth: usize,
) -> Result<Vec<u8>, BackendError> {
    let isa = crate::isa::host(true)?;
    let builder = ObjectBuilder::new(isa, "irkit", cranelift_module::default_libcall_names())
        .map_err(|e| cl_err("object", e))?;
    let opts = LowerOptions {
        entry_symbol: "main",
        entry_linkage: Linkage::Export,
        entry_export: m.find_export(entry).map(|_| entry),
        flush_on_return: false,
        extern_available: &|_| true,
        zero_data: None,
        far_data: false,
        max_depth: max_depth as u64,
        session: None,
        stack_budget: crate::runtime::StackBudget::MainThread,
    };
    let (obj, _) = lower_module(m, ObjectModule::new(builder), &opts)?;
    obj.finish()
        .emit()
        .map_err(|e| cl_err("writing the object file", e))
}
