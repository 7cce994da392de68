//! The host target and the Cranelift settings every compilation uses.

use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_codegen::settings::{self, Configurable};
use irkit_backend::BackendError;

/// The host ISA with irkit's settings: optimizing, position-independent code for object files
/// (executables are linked as PIE by default), and aggregates returned in as many registers as
/// needed (`enable_multi_ret_implicit_sret`).
pub(crate) fn host(pic: bool) -> Result<OwnedTargetIsa, BackendError> {
    let err = |e: &dyn std::fmt::Display| BackendError::Codegen(format!("target setup: {e}"));
    let mut flags = settings::builder();
    let set = |f: &mut settings::Builder, k: &str, v: &str| f.set(k, v).map_err(|e| err(&e));
    set(&mut flags, "opt_level", "speed")?;
    set(&mut flags, "is_pic", if pic { "true" } else { "false" })?;
    set(&mut flags, "enable_multi_ret_implicit_sret", "true")?;
    // Cranelift's own verifier: debug builds only (tests catch lowering bugs; release is fast).
    set(
        &mut flags,
        "enable_verifier",
        if cfg!(debug_assertions) {
            "true"
        } else {
            "false"
        },
    )?;
    if !pic {
        // The JIT places code anywhere in the address space: no short-range libcalls.
        set(&mut flags, "use_colocated_libcalls", "false")?;
    }
    let isa = cranelift_native::builder().map_err(|e| err(&e))?;
    isa.finish(settings::Flags::new(flags)).map_err(|e| err(&e))
}
