//! The frame of every runtime routine generated in Cranelift IR (`crate::routines`,
//! `crate::memories`): a function of the given signature, its body filled from its entry
//! block, sealed, defined in the module and kept for the debug information.

use cranelift_codegen::ir::{AbiParam, Block};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_module::{FuncId, Module as ClModule};
use irkit_backend::BackendError;

use crate::context::Ctx;
use crate::error::cl_err;

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
    ctx.cl
        .define_function(id, &mut c)
        .map_err(|e| cl_err(what, e))?;
    ctx.keep_debug(id, None, c.compiled_code());
    Ok(())
}
