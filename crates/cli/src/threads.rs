//! The tools' worker threads: rayon's global pool with the calling (main) thread as one of
//! its workers.
//!
//! rayon's default pool starts one thread per core beside the main thread, which then only
//! waits while the pool works: each parallel step is handed to another thread and handed
//! back, and a two-core machine runs three threads for two cores. With the main thread in the
//! pool, the steps a tool starts from it run partly on it (a link's walk, its verification
//! beside the writer), and one thread fewer is started. The pool's size is rayon's usual one
//! (`RAYON_NUM_THREADS`, else one per core); with one thread, everything runs on the main one.

/// Makes rayon's global pool with the calling thread as its first worker. Call it first
/// thing in `main`, before anything uses rayon; if the pool exists already, nothing changes.
pub fn use_main_thread() {
    // An error only says the global pool was built already: it is used as it is.
    let _ = rayon::ThreadPoolBuilder::new()
        .use_current_thread()
        .build_global();
}
