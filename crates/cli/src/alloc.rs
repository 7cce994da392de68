//! The memory allocator of every irkit tool: jemalloc, asked to back its memory with
//! transparent huge pages.
//!
//! A link of the bench's 1M-instruction program builds about 150 MB of instructions and
//! tables, most of it touched for the first time once: with 4 KiB pages that is about 40,000
//! page faults, each charged to the memory cgroup, about a sixth of the link's CPU time. With
//! huge pages (jemalloc's `thp:always` asks for them with `madvise`, so it also applies where
//! the system's THP setting is `madvise`; where it is `never` nothing changes) there are a few
//! hundred. One arena (`narenas:1`) keeps the peak resident set close to glibc's: per-thread
//! arenas each hold partly used huge pages (measured on the bench at 100 % reach, 2 cores:
//! glibc 385 ms, 153 MB; jemalloc with huge pages 310 ms, 198 MB with an arena per thread,
//! 166 MB with one; the threads' caches keep the one arena's lock cold). The setting can be
//! overridden with the `_RJEM_MALLOC_CONF` environment variable (jemalloc's own syntax).

#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// jemalloc's options, read when it starts: its `const char *malloc_conf` under the prefixed
/// name `tikv-jemalloc-sys` gives jemalloc's symbols (a reference to an array is a plain
/// pointer to its first byte).
#[cfg(not(target_env = "msvc"))]
#[allow(unsafe_code, non_upper_case_globals)]
#[unsafe(export_name = "_rjem_malloc_conf")]
static malloc_conf: &[u8; 43] = b"thp:always,metadata_thp:disabled,narenas:1\0";
