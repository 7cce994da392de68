//! The tools' output, as files: each `tests/cmd/*.toml` is one invocation (`bin.name`, `args`,
//! the exit `status.code`, run in `tests/cmd/`), with its standard input, output and error
//! beside it (`.stdin`, `.stdout`, `.stderr`), compared exactly (the `trycmd` harness). Inputs
//! the cases read are in `tests/cmd/inputs/`. `IRKIT_BLESS=1` rewrites the `.stdout` and
//! `.stderr` files from the actual runs.
//!
//! What a file cannot say (temporary files, pipes closed early, devices, signals, permissions)
//! is tested in Rust beside this (`cli.rs`, `link_cli.rs`).

#[test]
fn every_case_gives_its_expected_output() {
    if irkit_tests::blessing() {
        // trycmd rewrites the expectations when `TRYCMD=overwrite`: this is how the one bless
        // switch reaches it.
        #[allow(unsafe_code)]
        // SAFETY: this is the only test of this binary and it reads no environment concurrently;
        // the variable is set before trycmd starts any thread or child process.
        unsafe {
            std::env::set_var("TRYCMD", "overwrite");
        }
    }
    trycmd::TestCases::new().case("tests/cmd/*.toml");
}
