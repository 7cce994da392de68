//! # irkit-cli: the command-line tools
//!
//! This crate owns the `ir-*` binaries and only what they share: reading inputs (files or
//! stdin, by format), reporting problems one line each, choosing exit codes, and writing
//! outputs atomically (files, each using only those before it: `report`, `input`, `link`,
//! `output`, `backends`, `signals`), and the worker threads (`threads`). Every real job is done by a library crate (`irkit-core`,
//! `irkit-text`); a binary is argument parsing plus calls into them. `alloc` chooses the
//! tools' memory allocator (jemalloc with transparent huge pages).
//!
//! Exit codes, the same for every tool: `0` success, `1` the input has problems (each reported
//! on its own line, naming the file and the place), `2` usage errors (clap's own). A tool never
//! exits by panicking.

mod alloc;
pub mod backends;
pub mod input;
pub mod link;
pub mod output;
pub mod report;
pub mod signals;
pub mod threads;

/// Exit code: success.
pub const EXIT_OK: u8 = 0;
/// Exit code: the input has problems.
pub const EXIT_PROBLEMS: u8 = 1;
/// Exit code: usage error.
pub const EXIT_USAGE: u8 = 2;

/// Every tool's first steps, in order: rayon's pool made with the main thread as its first
/// worker ([`threads::use_main_thread`]), the signal handling ([`signals::install`]), and the
/// arguments parsed (a usage error exits 2 with clap's message).
pub fn start<A: clap::Parser>() -> A {
    threads::use_main_thread();
    signals::install();
    A::parse()
}

/// [`start`], each argument exactly `from` read as `to` (a compiler's spelling such as
/// `-g0` that clap's short options cannot take beside `-g`).
pub fn start_spelling<A: clap::Parser>(from: &str, to: &str) -> A {
    threads::use_main_thread();
    signals::install();
    A::parse_from(std::env::args_os().map(|a| if a == from { to.into() } else { a }))
}
