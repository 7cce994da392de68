//! Validation as wasmparser's `Validator::validate_all` does it, the function bodies checked
//! on every core, as wasmtime checks them, while the caller goes on with the module's
//! declarations ([`crate::translate`](mod@crate::translate)).
//!
//! The first problem found is `validate_all`'s: every section but the bodies is checked first,
//! in order ([`sections`]), then the bodies ([`Bodies::check`]), whose first invalid one in
//! module order is the one reported, whichever core found it first.

use rayon::prelude::*;
use wasmparser::{
    BinaryReaderError, FuncToValidate, FuncValidatorAllocations, FunctionBody, Parser,
    ValidPayload, Validator, ValidatorResources, WasmFeatures,
};

/// The function bodies of a module whose other sections are valid, still to be checked.
pub struct Bodies<'a>(Vec<(FuncToValidate<ValidatorResources>, FunctionBody<'a>)>);

/// Checks every section of `wasm` with `features` but the function bodies, which it returns.
pub fn sections(wasm: &[u8], features: WasmFeatures) -> Result<Bodies<'_>, BinaryReaderError> {
    let mut validator = Validator::new_with_features(features);
    let mut parser = Parser::new(0);
    parser.set_features(features);
    let mut bodies = Vec::new();
    for payload in parser.parse_all(wasm) {
        if let ValidPayload::Func(f, body) = validator.payload(&payload?)? {
            bodies.push((f, body));
        }
    }
    Ok(Bodies(bodies))
}

impl Bodies<'_> {
    /// Checks the bodies on every core: the error of the first invalid one, in module order.
    pub fn check(self) -> Result<(), BinaryReaderError> {
        let checked: Vec<Result<(), BinaryReaderError>> = self
            .0
            .into_par_iter()
            .map_init(FuncValidatorAllocations::default, |allocs, (f, body)| {
                let mut v = f.into_validator(std::mem::take(allocs));
                let r = v.validate(&body);
                *allocs = v.into_allocations();
                r
            })
            .collect();
        checked.into_iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This module's verdict and `validate_all`'s on `wat`: the same first problem (message
    /// and offset), or both none.
    fn same_verdict(wat: &str) -> Option<String> {
        let wasm = wat::parse_str(wat).unwrap();
        let features = crate::features();
        let ours = sections(&wasm, features).and_then(Bodies::check);
        let theirs = Validator::new_with_features(features).validate_all(&wasm);
        let show = |e: &BinaryReaderError| format!("{} at {:#x}", e.message(), e.offset());
        assert_eq!(
            ours.as_ref().err().map(show),
            theirs.as_ref().err().map(show)
        );
        ours.err().map(|e| show(&e))
    }

    #[test]
    fn the_first_invalid_body_in_module_order_is_reported() {
        // 200 bodies, those of functions 150 and 170 ill-typed: whichever core checks 170
        // first, 150 is the one reported.
        let mut wat = String::from("(module");
        for k in 0..200 {
            let body = match k {
                150 => "(i64.const 0)",
                170 => "(f32.const 0)",
                _ => "(i32.const 0)",
            };
            wat.push_str(&format!(" (func (result i32) {body})"));
        }
        wat.push(')');
        let e = same_verdict(&wat).expect("invalid");
        assert!(e.contains("type mismatch"), "{e}");
    }

    #[test]
    fn a_problem_outside_the_bodies_comes_before_an_invalid_body() {
        // The data segment names a memory the module does not have: found with the
        // sections, before any body is checked.
        let e =
            same_verdict(r#"(module (func (result i32) (i64.const 0)) (data (i32.const 0) "x"))"#)
                .expect("invalid");
        assert!(e.contains("memory"), "{e}");
        assert_eq!(
            same_verdict("(module (func (result i32) (i32.const 0)))"),
            None
        );
    }
}
