//! The frame of every runtime routine generated in Cranelift IR (`crate::routines`,
//! `crate::memories`): a function of the given signature, its body filled from its entry
//! block, sealed, defined in the module and kept for the debug information. Routines defined
//! together ([`define_together`]: the ones every build has) are compiled on every core, then
//! defined in the order they were built.

use cranelift_codegen::CompiledCode;
use cranelift_codegen::control::ControlPlane;
use cranelift_codegen::ir::{AbiParam, Block};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_module::{FuncId, Module as ClModule};
use irkit_backend::BackendError;
use rayon::prelude::*;

use crate::context::{BuiltRoutine as Built, Ctx};
use crate::error::{cl_err, compile_error};

/// Defines the routine `id` with its parameters and results: `body` fills it from its entry block
/// (current, with the parameters as block parameters) and may make more blocks; all are
/// sealed at the end. `what` names the routine in an error.
pub(crate) fn define_routine<M: ClModule>(
    ctx: &mut Ctx<'_, M>,
    id: FuncId,
    (params, returns): (Vec<AbiParam>, Vec<AbiParam>),
    what: &str,
    body: impl FnOnce(&mut Ctx<'_, M>, &mut FunctionBuilder<'_>, Block) -> Result<(), BackendError>,
) -> Result<(), BackendError> {
    let mut c = ctx.cl.make_context();
    c.func.signature.params = params;
    c.func.signature.returns = returns;
    let mut fctx = FunctionBuilderContext::new();
    {
        let mut b = FunctionBuilder::new(&mut c.func, &mut fctx);
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        body(ctx, &mut b, entry)?;
        b.seal_all_blocks();
        b.finalize(ctx.cl.target_config());
    }
    if let Some(built) = &mut ctx.routines {
        built.push(Built {
            id,
            code: c,
            what: what.to_string(),
        });
        return Ok(());
    }
    ctx.cl
        .define_function(id, &mut c)
        .map_err(|e| cl_err(what, e))?;
    ctx.keep_debug(id, None, c.compiled_code());
    Ok(())
}

/// Runs `define` (calls of [`define_routine`]), then compiles the routines it built on every
/// core and defines them in the order they were built: the same code as `define` alone makes,
/// one routine after the other (in an object file, the data `define` declares comes before
/// the routines' code instead of between them).
pub(crate) fn define_together<M: ClModule>(
    ctx: &mut Ctx<'_, M>,
    define: impl FnOnce(&mut Ctx<'_, M>) -> Result<(), BackendError>,
) -> Result<(), BackendError> {
    let outer = ctx.routines.replace(Vec::new());
    let defined = define(ctx);
    let built = std::mem::replace(&mut ctx.routines, outer).unwrap_or_default();
    defined?;
    let isa = ctx.cl.isa();
    let compiled: Vec<Result<(Built, CompiledCode), BackendError>> = built
        .into_par_iter()
        .map(|mut r| {
            let code = r
                .code
                .compile(isa, &mut ControlPlane::default())
                .map_err(|e| compile_error(&r.what, e.inner))?
                .clone();
            Ok((r, code))
        })
        .collect();
    for r in compiled {
        let (r, code) = r?;
        crate::isa::define_compiled(&mut ctx.cl, (r.id, &r.what), &r.code.func, &code)?;
        ctx.keep_debug(r.id, None, Some(&code));
    }
    Ok(())
}
