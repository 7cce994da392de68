//! What irkit's tests and benchmarks measure with, in one place, so that every scale test
//! states its bound the same way (issue 37, "Size": every tool linear or n log n in its input,
//! checked by ratio, never by absolute time):
//!
//! - [`growth`]: the best of a few timings, and the check that a cost grew at most n log n
//!   between two input sizes;
//! - [`heap`]: a counting global allocator (bytes allocated, live and peak) for a test binary
//!   that installs it;
//! - [`process`]: a child process's wall time, CPU time and peak resident set size, read from
//!   the kernel's accounting of that one child;
//! - [`servers`]: real cache servers (nginx with WebDAV, redis-server) on 127.0.0.1 for the
//!   remote code cache's tests.
//!
//! It depends on nothing of irkit, so every crate's tests can use it.

pub mod growth;
pub mod heap;
pub mod process;
pub mod servers;

pub use growth::{assert_grows_at_most_n_log_n, best_cpu_of, best_of, best_of_both};
pub use heap::{Counting, Heap};
pub use process::{Run, run};
