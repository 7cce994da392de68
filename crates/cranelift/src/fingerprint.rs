//! The code cache's key of a function: a BLAKE3 hash of everything its machine code depends
//! on (spec/backends.md, "The code cache"):
//!
//! * the cache format version, irkit's version and the Cranelift version it is built with;
//! * the target: the ISA's name, its triple, its shared flags and its ISA-specific flags (all
//!   as Cranelift prints them);
//! * the function's Cranelift IR **without its name table** (Cranelift's `FunctionStencil`):
//!   its signature, stack slots, instructions, constants, the signatures of what it calls and
//!   how each callee and data object is reached (near or far), but not *which* symbol each
//!   external reference denotes: that goes into the relocations, which the cache stores by
//!   name-table entry and resolves again in every build (`crate::code`).
//!
//! The lowering options (call depth limit, entry, session mode, data reach) and everything of
//! the irkit module the body uses (constants, callees' frame sizes, trap locations…) are
//! reflected in the Cranelift IR, so the key covers them without naming them; symbols the code
//! only refers to are not covered, so renumbering or renaming other definitions (an edit
//! elsewhere) keeps a function's entry valid.

use std::hash::{Hash, Hasher};

use cranelift_codegen::ir::Function;
use cranelift_codegen::isa::TargetIsa;

/// The version of the cache's entry format and key; a change makes every entry foreign.
pub(crate) const FORMAT_VERSION: u32 = 1;

/// The Cranelift version irkit compiles with (the crate pins it exactly).
const CRANELIFT: &str = "cranelift-codegen 0.135.8";

/// A cache key.
pub(crate) type Key = [u8; 32];

/// What every key of one build starts with: the versions and the target.
#[derive(Clone, Debug)]
pub(crate) struct KeyPrefix(Vec<u8>);

impl KeyPrefix {
    /// The prefix for code compiled by `isa`.
    pub(crate) fn new(isa: &dyn TargetIsa) -> KeyPrefix {
        let mut out = Vec::new();
        let mut put = |s: &str| {
            out.extend_from_slice(&(s.len() as u64).to_le_bytes());
            out.extend_from_slice(s.as_bytes());
        };
        put("irkit code cache");
        put(&FORMAT_VERSION.to_string());
        put(env!("CARGO_PKG_VERSION"));
        put(CRANELIFT);
        put(isa.name());
        put(&isa.triple().to_string());
        put(&isa.flags().to_string());
        for f in isa.isa_flags() {
            put(&f.to_string());
        }
        KeyPrefix(out)
    }
}

/// The key of `func` compiled with the target `prefix` describes.
pub(crate) fn key(prefix: &KeyPrefix, func: &Function) -> Key {
    let mut h = Buffered(Vec::with_capacity(4096));
    h.0.extend_from_slice(&prefix.0);
    func.stencil.hash(&mut h);
    *blake3::hash(&h.0).as_bytes()
}

/// A [`Hasher`] that only collects the bytes (hashed at once: `Hash` writes many small
/// pieces).
struct Buffered(Vec<u8>);

impl Hasher for Buffered {
    fn finish(&self) -> u64 {
        // Never used: the key is the BLAKE3 hash of the bytes.
        0
    }

    fn write(&mut self, bytes: &[u8]) {
        self.0.extend_from_slice(bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cranelift_codegen::ir::{AbiParam, InstBuilder, UserExternalName, types};
    use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};

    /// `fn(i64) -> i64 { callee(x + k) }`, the callee named `(0, callee)`.
    fn func(k: i64, callee: u32) -> Function {
        let isa = crate::isa::host(true).unwrap();
        let mut f = Function::new();
        f.signature.params.push(AbiParam::new(types::I64));
        f.signature.returns.push(AbiParam::new(types::I64));
        let mut fctx = FunctionBuilderContext::new();
        let mut b = FunctionBuilder::new(&mut f, &mut fctx);
        let sig = b.import_signature(b.func.signature.clone());
        let name = b
            .func
            .declare_imported_user_function(UserExternalName::new(0, callee));
        let callee = b.import_function(cranelift_codegen::ir::ExtFuncData {
            name: cranelift_codegen::ir::ExternalName::User(name),
            signature: sig,
            colocated: true,
            patchable: false,
        });
        let blk = b.create_block();
        b.append_block_params_for_function_params(blk);
        b.switch_to_block(blk);
        let x = b.block_params(blk)[0];
        let y = b.ins().iadd_imm_s(x, k);
        let call = b.ins().call(callee, &[y]);
        let r = b.inst_results(call)[0];
        b.ins().return_(&[r]);
        b.seal_all_blocks();
        b.finalize(isa.frontend_config());
        f
    }

    #[test]
    fn the_key_follows_the_body_not_the_symbols() {
        let isa = crate::isa::host(true).unwrap();
        let p = KeyPrefix::new(&*isa);
        assert_eq!(key(&p, &func(1, 7)), key(&p, &func(1, 7)));
        assert_ne!(key(&p, &func(1, 7)), key(&p, &func(2, 7)));
        // Another callee id is the same code (the relocation is resolved at definition).
        assert_eq!(key(&p, &func(1, 7)), key(&p, &func(1, 9)));
        // Another target is another key.
        let other = crate::isa::host(false).unwrap();
        assert_ne!(
            key(&p, &func(1, 7)),
            key(&KeyPrefix::new(&*other), &func(1, 7))
        );
    }
}
