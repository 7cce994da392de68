//! Random WebAssembly modules for the front end's differential tests: `wasm-smith` modules of
//! the feature set `irkit-wasm` translates (spec/wasm.md: 1.0 with mutable-global imports,
//! sign extension, non-trapping float-to-int, multi-value, bulk memory, reference types and
//! extended constant expressions),
//! without imports, exporting everything, with a small memory and up to two tables, and made to terminate (wasm-smith's
//! fuel global, so a random loop ends in a trap instead of running for ever).

use wasm_smith::{Config, Module};

/// The generator's configuration.
pub fn config() -> Config {
    Config {
        bulk_memory_enabled: true,
        reference_types_enabled: true,
        simd_enabled: false,
        relaxed_simd_enabled: false,
        exceptions_enabled: false,
        gc_enabled: false,
        tail_call_enabled: false,
        threads_enabled: false,
        shared_everything_threads_enabled: false,
        memory64_enabled: false,
        custom_page_sizes_enabled: false,
        wide_arithmetic_enabled: false,
        extended_const_enabled: true,
        custom_descriptors_enabled: false,
        compact_imports_enabled: false,
        multi_value_enabled: true,
        sign_extension_ops_enabled: true,
        saturating_float_to_int_enabled: true,
        max_imports: 0,
        max_memories: 1,
        max_tables: 2,
        max_table_elements: 64,
        max_memory32_bytes: 4 << 16,
        // A memory without a maximum grows until allocation fails, which happens at different
        // sizes in the interpreter (its memory limit) and in native code (malloc): both are
        // wasm, but not comparable.
        memory_max_size_required: true,
        min_types: 1,
        min_funcs: 2,
        max_funcs: 12,
        max_instructions: 200,
        max_data_segments: 4,
        max_element_segments: 4,
        export_everything: true,
        allow_start_export: true,
        ..Config::default()
    }
}

/// The binary of a random module drawn from `bytes` (`None` if they do not make one).
pub fn module(bytes: &[u8]) -> Option<Vec<u8>> {
    let mut u = arbitrary::Unstructured::new(bytes);
    let mut m = Module::new(config(), &mut u).ok()?;
    m.ensure_termination(1000).ok()?;
    Some(m.to_bytes())
}
