//! The wasm trap messages this front end's traps carry (`trap_msg`, spec/ir.md): the texts of
//! the WebAssembly specification's test suite (`assert_trap`), so a program's trap line names
//! what wasm would report.

/// A load or store beyond the memory's size, or an active data segment that does not fit.
pub const OUT_OF_BOUNDS_MEMORY: &str = "out of bounds memory access";
/// An active element segment that does not fit its table, or a table index or range beyond
/// the table's length (`table.get`, `table.set`, `table.fill`, `table.copy`, `table.init`).
pub const OUT_OF_BOUNDS_TABLE: &str = "out of bounds table access";
/// `call_indirect` with an index beyond the table's length.
pub const UNDEFINED_ELEMENT: &str = "undefined element";
/// `call_indirect` of a null table entry.
pub const UNINITIALIZED_ELEMENT: &str = "uninitialized element";
/// `call_ref` of a null function reference.
pub const NULL_FUNCTION_REFERENCE: &str = "null function reference";
/// `ref.as_non_null` of null.
pub const NULL_REFERENCE: &str = "null reference";
/// `call_indirect` of a function whose type is not the expected one.
pub const INDIRECT_CALL_TYPE_MISMATCH: &str = "indirect call type mismatch";
/// A trapping float-to-integer conversion of a NaN.
pub const INVALID_CONVERSION: &str = "invalid conversion to integer";
/// A trapping float-to-integer conversion of a number out of the integer type's range.
pub const INTEGER_OVERFLOW: &str = "integer overflow";
/// An imported memory or table whose limits do not match the import's (checked when the
/// importer is initialized).
pub const INCOMPATIBLE_IMPORT: &str = "incompatible import type";

#[cfg(test)]
mod tests {
    /// Every message is a valid `trap_msg` kind.
    #[test]
    fn messages_are_valid_trap_kinds() {
        for m in [
            super::OUT_OF_BOUNDS_MEMORY,
            super::OUT_OF_BOUNDS_TABLE,
            super::UNDEFINED_ELEMENT,
            super::UNINITIALIZED_ELEMENT,
            super::INDIRECT_CALL_TYPE_MISMATCH,
            super::INVALID_CONVERSION,
            super::INTEGER_OVERFLOW,
            super::INCOMPATIBLE_IMPORT,
        ] {
            assert_eq!(irkit_core::trap_kind_problem(m), None, "{m}");
        }
    }
}
