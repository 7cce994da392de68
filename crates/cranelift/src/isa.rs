//! The host target and the Cranelift settings every compilation uses.

use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_codegen::settings::{self, Configurable};
use irkit_backend::BackendError;

/// How much work code generation puts into the code (`ir-link --codegen`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CodegenLevel {
    /// Cranelift's optimizations (`opt_level = speed`) and its backtracking register
    /// allocator: the default.
    #[default]
    Optimized,
    /// Compile quickly: no Cranelift optimizations (`opt_level = none`) and the single-pass
    /// register allocator; the same behaviour, slower code (more spills and moves). The
    /// counterpart of `llc -O0`.
    Fast,
}

/// The host ISA with irkit's settings: optimizing, position-independent code for object files
/// (executables are linked as PIE by default), and aggregates returned in as many registers as
/// needed (`enable_multi_ret_implicit_sret`).
pub(crate) fn host(pic: bool) -> Result<OwnedTargetIsa, BackendError> {
    host_at(pic, CodegenLevel::Optimized)
}

/// [`host`] at code generation level `level`.
pub(crate) fn host_at(pic: bool, level: CodegenLevel) -> Result<OwnedTargetIsa, BackendError> {
    let err = |e: &dyn std::fmt::Display| BackendError::Codegen(format!("target setup: {e}"));
    let mut flags = settings::builder();
    let set = |f: &mut settings::Builder, k: &str, v: &str| f.set(k, v).map_err(|e| err(&e));
    match level {
        CodegenLevel::Optimized => set(&mut flags, "opt_level", "speed")?,
        CodegenLevel::Fast => {
            set(&mut flags, "opt_level", "none")?;
            set(&mut flags, "regalloc_algorithm", "single_pass")?;
        }
    }
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
    if pic {
        // Object files keep each thread's state in thread-local data (`runtime::Threads`);
        // an executable's linker turns the general-dynamic access into a thread-pointer load.
        let tls = if cfg!(target_os = "macos") {
            "macho"
        } else {
            "elf_gd"
        };
        set(&mut flags, "tls_model", tls)?;
    }
    if !pic {
        // The JIT places code anywhere in the address space: no short-range libcalls.
        set(&mut flags, "use_colocated_libcalls", "false")?;
    }
    let isa = cranelift_native::builder().map_err(|e| err(&e))?;
    isa.finish(settings::Flags::new(flags)).map_err(|e| err(&e))
}
