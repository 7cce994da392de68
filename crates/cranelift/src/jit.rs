//! In-process execution through `cranelift-jit`: the module is compiled into this process's
//! memory and its entry wrapper is called. `extern` functions resolve to the process's C library
//! (`dlsym`); one that is not there is lowered to the interpreter's "unknown extern function"
//! trap instead of failing the whole compilation.
//!
//! Zero-initialized globals are not allocated by `cranelift-jit` (which would write every
//! byte): each is a private anonymous mapping of its own (lazily zeroed by the OS, reserved
//! without swap commitment), which the module imports under a generated symbol. `extern`
//! globals without an initial value are the process's own C data objects (`dlsym`).
//!
//! Once finalized, the code is described to debuggers (GDB's JIT interface,
//! `crate::debug::gdb_jit`) until the [`Compiled`] module is dropped.
//!
//! The program runs *in the calling process*: a trap prints its line to standard error and ends
//! the process with exit code 70 ([`irkit_backend::EXIT_TRAP`]), as `exit(n)` ends it with `n`.

use std::collections::HashMap;
use std::ffi::CString;
use std::mem::ManuallyDrop;
use std::sync::{Arc, Mutex};

use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::Linkage;
use irkit_backend::BackendError;
use irkit_core::Module;

use crate::context::LowerOptions;
use crate::error::cl_err;
use crate::heap::Heap;
use crate::lower::lower_module;

/// C's `fmod`, provided to the JIT directly (the process may not have loaded `libm`).
extern "C" fn irkit_fmod(a: f64, b: f64) -> f64 {
    a % b
}

/// C's `fmodf`.
extern "C" fn irkit_fmodf(a: f32, b: f32) -> f32 {
    a % b
}

/// Whether the process can provide C function `name`.
#[allow(unsafe_code)]
pub(crate) fn in_process(name: &str) -> bool {
    if matches!(name, "fmod" | "fmodf" | "atexit") {
        return true;
    }
    let Ok(c) = CString::new(name) else {
        return false;
    };
    // SAFETY: `dlsym` with RTLD_DEFAULT only looks a NUL-terminated name up in the loaded
    // objects; the pointer is compared with null and never dereferenced here.
    let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c.as_ptr()) };
    !p.is_null()
}

/// The mappings holding a compiled module's zero-initialized globals, by symbol: (address,
/// length). Unmapped when the [`Compiled`] module is dropped.
#[derive(Debug, Default)]
pub(crate) struct ZeroMaps(HashMap<String, (usize, usize)>);

impl ZeroMaps {
    /// Maps `size` zero bytes aligned to `align` for `symbol`, read-only unless `writable`
    /// (a `global_const`'s zeros stay read-only, as its initialized bytes would).
    #[allow(unsafe_code)]
    fn map(&mut self, symbol: &str, size: u64, align: u64, writable: bool) -> Result<(), String> {
        if self.0.contains_key(symbol) {
            // A session's later lowering declares the live globals again: same memory.
            return Ok(());
        }
        let len = usize::try_from(size.max(1)).map_err(|e| e.to_string())?;
        // SAFETY: `sysconf` has no preconditions.
        let page = u64::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096);
        if align > page {
            return Err(format!("an alignment of {align} bytes"));
        }
        #[cfg(target_os = "linux")]
        let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE;
        #[cfg(not(target_os = "linux"))]
        let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS;
        // SAFETY: a new private anonymous mapping at an address the OS chooses; it aliases
        // nothing, and is unmapped only in `Drop`, with the same address and length.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                if writable {
                    libc::PROT_READ | libc::PROT_WRITE
                } else {
                    libc::PROT_READ
                },
                flags,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(format!(
                "cannot map {len} bytes for it: {}",
                std::io::Error::last_os_error()
            ));
        }
        self.0.insert(symbol.to_string(), (p as usize, len));
        Ok(())
    }
}

impl Drop for ZeroMaps {
    #[allow(unsafe_code)]
    fn drop(&mut self) {
        for &(addr, len) in self.0.values() {
            // SAFETY: each entry is a mapping made by `map` and not unmapped before.
            unsafe {
                libc::munmap(addr as *mut libc::c_void, len);
            }
        }
    }
}

/// The stack of the thread a JIT-compiled program runs on: what an executable's main thread
/// has (`ulimit -s`: `RLIMIT_STACK`, 8 MiB if unreadable, at most 1 GiB), so the JIT and an
/// executable reach the same depth; with call depth limit `max_depth`, at least 4 KiB per
/// activation, 64 MiB to 1 GiB, so the limit is met first (address space reserved, not memory:
/// untouched pages cost nothing).
pub fn stack_size(max_depth: Option<usize>) -> usize {
    let main = usize::try_from(crate::thread::main_stack()).unwrap_or(usize::MAX);
    match max_depth {
        None => main.max(1 << 20),
        Some(d) => main.max(d.saturating_mul(4096).clamp(64 << 20, 1 << 30)),
    }
}

/// The functions a program registered with C's `atexit` in the JIT, run in reverse order
/// when its entry function returns ([`Compiled::run`]) or when it calls `exit` (from the
/// process's own `atexit` list, while the code is still there): as in an executable.
static AT_EXIT: Mutex<Vec<extern "C" fn()>> = Mutex::new(Vec::new());

/// C's `atexit` for JIT code: `dlsym` does not find glibc's (it lives in `libc_nonshared.a`).
#[allow(unsafe_code)]
extern "C" fn irkit_atexit(f: extern "C" fn()) -> libc::c_int {
    static HOOKED: std::sync::Once = std::sync::Once::new();
    HOOKED.call_once(|| {
        // SAFETY: `run_at_exit` is a plain `extern "C" fn()`.
        unsafe { libc::atexit(run_at_exit) };
    });
    match AT_EXIT.lock() {
        Ok(mut fs) => {
            fs.push(f);
            0
        }
        Err(_) => -1,
    }
}

/// Runs (and forgets) the functions registered with [`irkit_atexit`], last first.
extern "C" fn run_at_exit() {
    loop {
        let next = AT_EXIT.lock().ok().and_then(|mut fs| fs.pop());
        match next {
            Some(f) => f(),
            None => break,
        }
    }
}

/// The zero-initialized globals' mappings, shared by a JIT module's symbol lookup and its
/// lowering.
pub(crate) type SharedZero = Arc<Mutex<ZeroMaps>>;

/// A new JIT module for the host, with the symbols every program may use (`fmod`, `fmodf`,
/// the C heap's functions bound to the running program's [`Heap`], the
/// zero-initialized globals of `ZeroMaps`).
pub(crate) fn new_jit_module() -> Result<(JITModule, SharedZero), BackendError> {
    let isa = crate::isa::host(false)?;
    let mut builder = JITBuilder::with_isa(isa, cranelift_module::default_libcall_names());
    builder.symbol("fmod", irkit_fmod as *const u8);
    builder.symbol("fmodf", irkit_fmodf as *const u8);
    builder.symbol("atexit", irkit_atexit as *const u8);
    builder.symbol("irkit.rt.thread", crate::thread::thread_state as *const u8);
    builder.symbol(
        "irkit.rt.stack_slow",
        crate::thread::stack_slow as *const u8,
    );
    for (name, wrapper) in crate::heap::symbols() {
        builder.symbol(name, wrapper);
    }
    let zero = Arc::new(Mutex::new(ZeroMaps::default()));
    let lookup = Arc::clone(&zero);
    builder.symbol_lookup_fn(Box::new(move |name| {
        let maps = lookup.lock().ok()?;
        maps.0.get(name).map(|&(addr, _)| addr as *const u8)
    }));
    Ok((JITModule::new(builder), zero))
}

/// The `zero_data` callback of [`LowerOptions`] mapping into `zero`.
pub(crate) fn place_zero(
    zero: &SharedZero,
) -> impl Fn(&str, u64, u64, bool) -> Result<(), String> + '_ {
    move |symbol: &str, size: u64, align: u64, writable: bool| {
        zero.lock()
            .map_err(|_| "the JIT's data is unavailable".to_string())?
            .map(symbol, size, align, writable)
    }
}

/// Runs `f` (JIT-compiled code, or a call into it) on a new thread with a `stack`-byte stack
/// whose C heap is `heap`, with memory faults reported as traps (`crate::fault`), and returns
/// its result once the thread has ended.
pub(crate) fn on_program_thread<T: Send + 'static>(
    stack: usize,
    heap: &Arc<Heap>,
    tables: Option<crate::fault::FaultTables>,
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, BackendError> {
    // A memory fault in the program is a trap line and exit 70, not a signal.
    #[cfg(unix)]
    let _faults = crate::fault::Guard::install(tables);
    let heap = Arc::clone(heap);
    let thread = std::thread::Builder::new()
        .name("irkit-jit".into())
        .stack_size(stack)
        .spawn(move || {
            let _heap = Heap::enter(&heap);
            let r = f();
            // `main` returned: the program's `atexit` functions run, on its thread, and what
            // they print is flushed.
            run_at_exit();
            // SAFETY: `fflush(NULL)` flushes every C stream.
            #[allow(unsafe_code)]
            unsafe {
                libc::fflush(std::ptr::null_mut());
            }
            r
        })
        .map_err(|e| {
            BackendError::Codegen(format!(
                "JIT: cannot start a thread with a {} MiB stack: {e}",
                stack >> 20
            ))
        })?;
    thread
        .join()
        .map_err(|_| BackendError::Codegen("JIT: the program's thread failed".into()))
}

/// Where the finalized `module` keeps what the fault handler reads: its guarded memories'
/// table (`crate::memories`) and its trap sites (`crate::sites`).
fn fault_tables(module: &JITModule) -> crate::fault::FaultTables {
    use cranelift_module::{FuncOrDataId, Module as _};
    let data = |name: &str| match module.get_name(name) {
        Some(FuncOrDataId::Data(id)) => Some(module.get_finalized_data(id)),
        _ => None,
    };
    let (memories, size) = data("irkit.rt.memories").unwrap_or((std::ptr::null(), 0));
    let sites = data("irkit.rt.sites").map_or(0, |(p, _)| p as usize);
    crate::fault::FaultTables {
        memories: memories as usize,
        count: size / 8,
        sites,
    }
}

/// A module compiled into memory, ready to run. Dropping it frees its code, its data, the
/// address space of its linear memories and what its runs left allocated on the C heap.
pub struct Compiled {
    /// What the fault handler reads of it: its guarded linear memories and its trap sites.
    tables: Option<crate::fault::FaultTables>,
    module: ManuallyDrop<JITModule>,
    entry: *const u8,
    /// The stack size of the thread [`Compiled::run`] runs the program on.
    stack: usize,
    /// The zero-initialized globals the code refers to (kept alive with it).
    _zero: Arc<Mutex<ZeroMaps>>,
    /// The program's C heap.
    heap: Arc<Heap>,
    /// The code's description registered with GDB (`crate::debug::gdb_jit`), if built.
    gdb: Option<crate::debug::gdb_jit::Registration>,
}

impl Drop for Compiled {
    #[allow(unsafe_code)]
    fn drop(&mut self) {
        // GDB forgets the code before it goes.
        drop(self.gdb.take());
        if let Some(t) = self.tables {
            for k in 0..t.count {
                // SAFETY: the table has `count` words; a nonzero one is the base of a
                // reservation of `RESERVATION` bytes its run made, used by nothing now (every
                // run joined its thread).
                unsafe {
                    let base = (t.memories as *const usize).add(k).read();
                    if base != 0 {
                        libc::munmap(
                            base as *mut libc::c_void,
                            crate::guard::RESERVATION as usize,
                        );
                    }
                }
            }
        }
        // SAFETY: taken once, here; `run` joins the thread running the code before it
        // returns, so none of it is executing, and `entry`, the only address into it, goes
        // with `self`.
        let module = unsafe { ManuallyDrop::take(&mut self.module) };
        // SAFETY: as above: nothing runs or calls into the module's memory any more.
        unsafe { module.free_memory() };
    }
}

impl std::fmt::Debug for Compiled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Compiled")
            .field("entry", &self.entry)
            .finish()
    }
}

/// Compiles `m` into this process; `entry` is the export name of the function to run. No call
/// depth limit: each thread's stack is the limit.
pub fn compile(m: &Module, entry: &str) -> Result<Compiled, BackendError> {
    compile_with_depth(m, entry, None)
}

/// Like [`compile`], with call depth limit `max_depth` (at least 1): a call made while that
/// many IR activations are live is the `stack overflow` trap, as in the interpreter.
pub fn compile_with_depth(
    m: &Module,
    entry: &str,
    max_depth: Option<usize>,
) -> Result<Compiled, BackendError> {
    let opts = irkit_backend::RunOptions {
        entry: entry.to_string(),
        max_depth,
        ..irkit_backend::RunOptions::default()
    };
    compile_with(m, &opts)
}

/// Like [`compile`], as `opts` says: its entry, its call depth limit (see
/// [`compile_with_depth`]), and with `perf_map` the compiled functions appended to this
/// process's perf map ([`crate::perf_map`]).
pub fn compile_with(
    m: &Module,
    opts: &irkit_backend::RunOptions,
) -> Result<Compiled, BackendError> {
    let (entry, max_depth) = (opts.entry.as_str(), opts.max_depth);
    let stack = stack_size(max_depth);
    let (jit, zero) = new_jit_module()?;
    let shared = Arc::clone(&zero);
    let place_zero = place_zero(&shared);
    let perf_map = opts.perf_map;
    let opts = LowerOptions {
        entry_symbol: "irkit.entry",
        entry_linkage: Linkage::Local,
        entry_export: Some(entry),
        flush_on_return: true,
        extern_available: &in_process,
        zero_data: Some(&place_zero),
        far_data: true,
        max_depth: max_depth.map(|d| d as u64),
        session: None,
        threads: crate::runtime::Threads::Host,
        install_fault_handler: false,
        guard_memories: true,
        // What the image for debuggers needs (see `gdb_registration`).
        debug_info: true,
    };
    let (mut module, id, sizes, defined) = lower_module(m, jit, &opts)?;
    let id = id.ok_or_else(|| BackendError::Entry("no entry wrapper".into()))?;
    module
        .finalize_definitions()
        .map_err(|e| cl_err("JIT", e))?;
    let gdb = gdb_registration(m, &module, &defined)?;
    if perf_map {
        crate::perf_map::append(sizes.iter().map(|&(f, id, size)| {
            let addr = module.get_finalized_function(id) as usize;
            (addr, size, irkit_core::place::verified_def_label(m, f))
        }))?;
    }
    let entry = module.get_finalized_function(id);
    let tables = Some(fault_tables(&module));
    Ok(Compiled {
        tables,
        module: ManuallyDrop::new(module),
        entry,
        stack,
        _zero: zero,
        heap: Arc::new(Heap::default()),
        gdb,
    })
}

/// The description of `module`'s finalized code (the functions of `m` in `defined`)
/// registered with GDB (spec/backends.md, "Debugging JIT code"); none for a target the image
/// does not describe.
pub(crate) fn gdb_registration(
    m: &Module,
    module: &JITModule,
    defined: &[(crate::debug::Defined, String)],
) -> Result<Option<crate::debug::gdb_jit::Registration>, BackendError> {
    let image = crate::debug::jit_image::image(
        m,
        defined,
        |id| Some(module.get_finalized_function(id) as u64),
        cranelift_module::Module::isa(module),
    )
    .map_err(|e| BackendError::Codegen(format!("JIT: describing the code to debuggers: {e}")))?;
    Ok(image.map(crate::debug::gdb_jit::Registration::new))
}

impl Compiled {
    /// Runs the entry function on a new thread whose stack is [`stack_size`] (so that the
    /// stack limit the code checks is sound) and returns its exit code. The code is the
    /// program's own, run in this process unchecked for memory errors: see
    /// [`Jit`](crate::Jit), "Trust". A trap or `exit` ends
    /// the process. A thread that cannot be started is an error.
    #[allow(unsafe_code)]
    pub fn run(&self) -> Result<i32, BackendError> {
        // SAFETY: `entry` is the finalized code of the wrapper generated by
        // `runtime::define_entry_wrapper`, whose signature is `extern "C" fn() -> i32` in the
        // host's default calling convention, and `self.module` (which owns the code) outlives
        // the thread: it is joined before this returns.
        let f: extern "C" fn() -> i32 = unsafe { std::mem::transmute(self.entry) };
        on_program_thread(self.stack, &self.heap, self.tables, move || f())
    }

    /// The image describing the code to debuggers, if one was built.
    #[cfg(test)]
    pub(crate) fn gdb_image(&self) -> Option<&[u8]> {
        self.gdb
            .as_ref()
            .map(crate::debug::gdb_jit::Registration::image)
    }

    /// The JIT module (for inspection).
    pub fn module(&self) -> &JITModule {
        &self.module
    }

    /// How many blocks the program's runs allocated on the C heap and did not free (freed
    /// when this is dropped).
    pub fn heap_blocks(&self) -> usize {
        self.heap.live_blocks()
    }
}
