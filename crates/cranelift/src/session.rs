//! The JIT's [`Session`] (spec/backends.md, "Sessions"): native code compiled into this
//! process once, its exports called many times, and extending modules compiled into the same
//! Cranelift JIT module, so that the live code and data keep their addresses.
//!
//! Session-mode code never ends the process on a trap or `exit`, and never unwinds or jumps
//! over frames: the trap routine records the trap (its line) in the runtime state and
//! *returns*, the trapping function returns zeros, and every call site checks the state's
//! stop word after the call and returns at once when it is set, up to the host-callable
//! wrapper, after which the host reads the state. `exit(n)` is lowered to the same: record,
//! return. Only session-mode code has these checks (`LowerOptions::session`).
//!
//! Each call runs on a new thread with the stack [`crate::jit::stack_size`] gives (as
//! [`crate::jit::Compiled::run`] does), whose first check finds that thread's stack limit, and
//! whose wrapper starts the call depth afresh. A memory fault in native code still ends the process, as in a run.

#![allow(unsafe_code)]

use std::collections::HashMap;
use std::sync::Arc;

use cranelift_jit::JITModule;
use cranelift_module::{DataId, FuncOrDataId, Linkage, Module as ClModule};
use irkit_backend::extension::{self, Grows, new_exports};
use irkit_backend::{BackendError, Call, RunOptions, Session, Val};
use irkit_core::{Inst, Module, Opcode};

use crate::context::{Carried, LowerOptions, SessionLower};
use crate::error::cl_err;
use crate::heap::Heap;
use crate::jit::{SharedZero, in_process, new_jit_module, place_zero, stack_size};
use crate::runtime::{STOP, STOP_ARG, STOP_MSG, STOPPED_EXIT, STOPPED_TRAP};
use crate::types::Scalar;

/// A callable export: its wrapper's address and its parameters and result leaves.
#[derive(Clone)]
struct Entry {
    addr: usize,
    params: Vec<Scalar>,
    results: Vec<Scalar>,
}

/// A live program in native code ([`crate::Jit`]'s session). The same trust as a run: see
/// [`crate::Jit`], "Trust".
pub struct JitSession {
    module: Module,
    /// The Cranelift module holding the live code (`None` before the first load).
    jit: Option<JITModule>,
    /// Why the session cannot go on (a later load that failed to compile).
    broken: Option<String>,
    zero: Option<SharedZero>,
    state: Option<DataId>,
    entries: HashMap<String, Entry>,
    max_depth: Option<usize>,
    /// The program's C heap (freed with the session).
    heap: Arc<Heap>,
    /// For each `fn` type of a `call_indirect` in the compiled code: the stack its call sites
    /// reserve for the callee's `stackalloc` objects (the largest frame of a function of that
    /// type when the first of them was compiled; see [`JitSession::check_frames`]).
    reserved: HashMap<Inst, u64>,
    /// The declarations and frames of the compiled definitions (for the next load's lowering).
    carried: Carried,
    /// The arena slots of the module compiled so far (the live program's).
    prepared: usize,
    /// Each load's code registered with GDB (`crate::debug::gdb_jit`), unregistered before
    /// the code is freed.
    gdb: Vec<crate::debug::gdb_jit::Registration>,
}

impl JitSession {
    /// A session with `opts`' call depth limit, before any load (fuel is the interpreter's).
    pub fn new(opts: &RunOptions) -> JitSession {
        JitSession {
            module: Module::new(),
            jit: None,
            broken: None,
            zero: None,
            state: None,
            entries: HashMap::new(),
            max_depth: opts.max_depth.map(|d| d.max(1)),
            heap: Arc::new(Heap::default()),
            reserved: HashMap::new(),
            carried: Carried::default(),
            prepared: 0,
            gdb: Vec::new(),
        }
    }

    /// Indirect call sites check, before the call, that the largest frame of a function of the
    /// call's type fits (spec/backends.md, "Call depth and the native stack"); those compiled
    /// already reserve what that largest frame was then. A new function of such a type with a
    /// larger frame could be called from them with too little room: it is refused. Returns
    /// the reservations after the load (new types of indirect calls added). Measures the new
    /// definitions `new` only (the live ones' largest frames by type are carried).
    fn check_frames(&self, m: &Module, new: &[Inst]) -> Result<HashMap<Inst, u64>, BackendError> {
        let layouts = crate::types::Layouts::new(m);
        let crate::lower::Frames {
            frames,
            mut max_frame,
            ..
        } = crate::lower::frames(m, &layouts, new);
        for (ty, &most) in &self.carried.max_frame {
            let m = max_frame.entry(*ty).or_insert(0);
            *m = (*m).max(most);
        }
        for &f in new {
            if let (Some(ty), Some(&frame)) = (m.ty(f), frames.get(&f))
                && let Some(&room) = self.reserved.get(&ty)
                && frame > room
            {
                return Err(BackendError::Unsupported {
                    backend: "cranelift",
                    place: irkit_core::place::def_label(m, f),
                    what: format!(
                        "in a session, stack objects of {frame} bytes in a function of a type \
                         whose indirect calls in the live code reserve {room}"
                    ),
                });
            }
        }
        let mut added = HashMap::new();
        for &f in new {
            if m.opcode(f) != Opcode::FUNC {
                continue;
            }
            for blk in m.blocks(f) {
                for &i in m.children(blk) {
                    if matches!(
                        m.opcode(i),
                        Opcode::CALL_INDIRECT | Opcode::TAIL_CALL_INDIRECT
                    ) && let Some(&ty) = m.operands(i).first()
                        && !self.reserved.contains_key(&ty)
                    {
                        added.entry(ty).or_insert_with(|| {
                            max_frame
                                .get(&ty)
                                .copied()
                                .unwrap_or(0)
                                .max(crate::runtime::SESSION_INDIRECT_RESERVE)
                        });
                    }
                }
            }
        }
        Ok(added)
    }

    /// Compiles what the module holds beyond its first `live` top-level definitions (all of
    /// it at the first load) and the slots compiled so far: the work is the additions'. On an
    /// error nothing is loaded (and after a failed lowering of a later load the session is
    /// broken, see the module's documentation).
    fn prepare(&mut self, live: usize) -> Result<(), BackendError> {
        let first = self.jit.is_none();
        let module = &self.module;
        // Refused before the Cranelift module is touched (lowering would refuse it midway).
        if let Some(&p) = module.top_level()[live.min(module.top_level().len())..]
            .iter()
            .find(|&&d| module.opcode(d) == Opcode::PROC)
        {
            return Err(BackendError::Unsupported {
                backend: "cranelift",
                place: irkit_core::place::def_label(module, p),
                what: "a NOIR `proc`: lower procs to functions first (irkit_noir::lower_procs)"
                    .into(),
            });
        }
        let new = &module.top_level()[live.min(module.top_level().len())..];
        let reserved = self.check_frames(module, new)?;
        let (jit, zero) = match (self.jit.take(), &self.zero) {
            (Some(j), Some(z)) => (j, z.clone()),
            _ => new_jit_module()?,
        };
        let shared = zero.clone();
        let place = place_zero(&shared);
        let opts = LowerOptions {
            entry_symbol: "irkit.entry",
            entry_linkage: Linkage::Local,
            entry_export: None,
            flush_on_return: true,
            extern_available: &in_process,
            zero_data: Some(&place),
            far_data: true,
            max_depth: self.max_depth.map(|d| d as u64),
            threads: crate::runtime::Threads::Host,
            install_fault_handler: false,
            guard_memories: false,
            debug_info: true,
            session: Some(SessionLower { live, first }),
        };
        let carried = std::mem::take(&mut self.carried);
        let lowered = crate::lower::lower_session(module, jit, &opts, carried).and_then(
            |(mut jit, ws, carried, defined)| {
                jit.finalize_definitions()
                    .map_err(|e| cl_err("JIT", e))
                    .map(|()| (jit, ws, carried, defined))
            },
        );
        let (jit, wrappers, carried, defined) = match lowered {
            Ok(x) => x,
            Err(e) => {
                if !first {
                    // The live code is in the Cranelift module the failed lowering consumed.
                    self.broken = Some(format!("an earlier load failed: {e}"));
                }
                return Err(e);
            }
        };
        let state = match jit.declarations().get_name("irkit.rt.state") {
            Some(FuncOrDataId::Data(id)) => id,
            _ => return Err(BackendError::Codegen("JIT: no runtime state".into())),
        };
        for w in wrappers {
            let addr = jit.get_finalized_function(w.id) as usize;
            self.entries.insert(
                w.export,
                Entry {
                    addr,
                    params: w.params,
                    results: w.results,
                },
            );
        }
        // A function's wrapper is made once, under its first name; every other name of it
        // (several exports, or a later module's re-export of a live function) calls the same.
        // Those names are the `export`s among the new instructions.
        for (name, d) in new_exports(module, self.prepared) {
            let Some(first) = module.decoration_strs(d, Opcode::EXPORT).next() else {
                continue;
            };
            let Some(e) = self.entries.get(first).cloned() else {
                continue;
            };
            self.entries.entry(name).or_insert(e);
        }
        // A load whose code cannot be described still runs (the image is for debuggers).
        if let Ok(Some(r)) = crate::jit::gdb_registration(module, &jit, &defined) {
            self.gdb.push(r);
        }
        self.jit = Some(jit);
        self.carried = carried;
        self.reserved.extend(reserved);
        self.zero = Some(zero);
        self.state = Some(state);
        self.prepared = module.arena_len();
        Ok(())
    }

    fn stack(&self) -> usize {
        stack_size(self.max_depth)
    }

    /// How many blocks the program's calls allocated on the C heap and did not free (freed
    /// when the session is dropped).
    pub fn heap_blocks(&self) -> usize {
        self.heap.live_blocks()
    }
}

fn fits(s: Scalar, v: &Val) -> bool {
    matches!(
        (s, v),
        (Scalar::Int(1), Val::I1(_))
            | (Scalar::Int(8), Val::I8(_))
            | (Scalar::Int(16), Val::I16(_))
            | (Scalar::Int(32), Val::I32(_))
            | (Scalar::Int(64), Val::I64(_))
            | (Scalar::F32, Val::F32(_))
            | (Scalar::F64, Val::F64(_))
            | (Scalar::Ptr, Val::Ptr(_))
    ) || matches!((s, v), (Scalar::Vector(..), Val::V128(_)) if s.size() == 16)
}

/// The words of argument `v` (a vector's two, low bytes first).
fn slots(v: &Val) -> Vec<u64> {
    match *v {
        Val::I1(b) => vec![u64::from(b)],
        Val::I8(x) => vec![x.into()],
        Val::I16(x) => vec![x.into()],
        Val::I32(x) | Val::F32(x) => vec![x.into()],
        Val::I64(x) | Val::F64(x) | Val::Ptr(x) => vec![x],
        Val::V128(b) => {
            let w = u128::from_le_bytes(b);
            vec![w as u64, (w >> 64) as u64]
        }
    }
}

/// The result leaf of kind `s` at the start of `x`.
fn leaf(s: Scalar, x: &[u64]) -> Val {
    let w = x.first().copied().unwrap_or(0);
    match s {
        Scalar::Int(1) => Val::I1(w & 1 != 0),
        Scalar::Int(8) => Val::I8(w as u8),
        Scalar::Int(16) => Val::I16(w as u16),
        Scalar::Int(32) => Val::I32(w as u32),
        Scalar::F32 => Val::F32(w as u32),
        Scalar::F64 => Val::F64(w),
        Scalar::Ptr => Val::Ptr(w),
        Scalar::Int(_) => Val::I64(w),
        Scalar::Vector(..) => {
            let hi = x.get(1).copied().unwrap_or(0);
            Val::V128((u128::from(w) | (u128::from(hi) << 64)).to_le_bytes())
        }
    }
}

impl Drop for JitSession {
    /// Frees the compiled code and data (a process that opens many sessions, such as a script
    /// runner or a fuzzer, would otherwise keep every one's).
    fn drop(&mut self) {
        // GDB forgets the code before it goes.
        self.gdb.clear();
        if let Some(jit) = self.jit.take() {
            // SAFETY: every call runs on a thread that `call` joins before it returns, so no
            // code of this module is executing, and the session, the only holder of addresses
            // into it (`entries`), is going away: nothing calls into it afterwards.
            unsafe { jit.free_memory() };
        }
    }
}

impl Grows for JitSession {
    fn live(&mut self) -> &mut Module {
        &mut self.module
    }

    fn loaded(&self) -> bool {
        self.jit.is_some()
    }

    fn prepared(&self) -> usize {
        self.prepared
    }

    fn grow(&mut self, from: usize) -> Result<(), BackendError> {
        self.prepare(from)
    }
}

impl Session for JitSession {
    fn module(&self) -> &Module {
        &self.module
    }

    fn load(&mut self, module: Module) -> Result<(), BackendError> {
        if let Some(why) = &self.broken {
            return Err(BackendError::Codegen(why.clone()));
        }
        extension::load(self, module)
    }

    fn load_in_place(
        &mut self,
        append: &mut dyn FnMut(&mut Module) -> bool,
    ) -> Result<bool, BackendError> {
        if let Some(why) = &self.broken {
            return Err(BackendError::Codegen(why.clone()));
        }
        extension::load_in_place(self, append)
    }

    fn call(&mut self, export: &str, args: &[Val]) -> Result<Call, BackendError> {
        if let Some(why) = &self.broken {
            return Err(BackendError::Codegen(why.clone()));
        }
        let (Some(jit), Some(state)) = (&self.jit, self.state) else {
            return Err(BackendError::Entry("no module is loaded".into()));
        };
        let Some(e) = self.entries.get(export) else {
            return Err(BackendError::Entry(format!(
                "no function with scalar parameters is exported as {export}"
            )));
        };
        if e.params.len() != args.len() {
            return Err(BackendError::Entry(format!(
                "{export} takes {}, got {}",
                irkit_core::message::count(e.params.len(), "argument"),
                args.len()
            )));
        }
        if let Some(i) = (0..args.len()).find(|&i| !fits(e.params[i], &args[i])) {
            return Err(BackendError::Entry(format!(
                "argument {i} ({:?}) does not have the parameter's type",
                args[i]
            )));
        }
        let slots: Vec<u64> = args.iter().flat_map(slots).collect();
        let nresults: usize = e.results.iter().map(|&s| crate::types::words(s)).sum();
        let addr = e.addr;
        let stack = self.stack();
        let out = crate::jit::on_program_thread(stack, &self.heap, None, move || {
            let mut out = vec![0u64; nresults.max(1)];
            // SAFETY: `addr` is the finalized code of a wrapper made by
            // `routines::define_session_wrapper`, `extern "C" fn(*const u64, *mut u64)` in the
            // host's default calling convention, which reads one slot per parameter from
            // `slots` and writes one per result leaf to `out` (both that long); the JIT module
            // owning the code outlives the thread (joined before this returns).
            let f: extern "C" fn(*const u64, *mut u64) =
                unsafe { std::mem::transmute::<usize, extern "C" fn(*const u64, *mut u64)>(addr) };
            f(slots.as_ptr(), out.as_mut_ptr());
            out
        })?;
        let (p, size) = jit.get_finalized_data(state);
        if size < crate::runtime::SESSION_STATE {
            return Err(BackendError::Codegen("JIT: runtime state too small".into()));
        }
        // SAFETY: the state is the session's 8-byte aligned, `SESSION_STATE`-byte data object,
        // written only by the program's thread, which has ended (joined above).
        let word = |off: i32| unsafe { std::ptr::read(p.add(off as usize).cast::<u64>()) };
        Ok(match word(STOP) as i64 {
            0 => {
                let mut at = 0;
                let mut vals = Vec::with_capacity(e.results.len());
                for &s in &e.results {
                    vals.push(leaf(s, out.get(at..).unwrap_or(&[])));
                    at += crate::types::words(s);
                }
                Call::Returned(vals)
            }
            STOPPED_TRAP => {
                let (msg, len) = (word(STOP_MSG) as usize, word(STOP_ARG) as usize);
                // SAFETY: the trap routine was given the address and length of a trap-line
                // data object of this JIT module, which lives as long as the module.
                let bytes = unsafe { std::slice::from_raw_parts(msg as *const u8, len) };
                let message = String::from_utf8_lossy(bytes).trim_end().to_string();
                let kind = message
                    .strip_prefix("trap: ")
                    .and_then(|r| r.split_once(" in @").map(|(k, _)| k))
                    .unwrap_or(&message)
                    .to_string();
                Call::Trapped { kind, message }
            }
            STOPPED_EXIT => Call::Exited(word(STOP_ARG) as i32),
            other => {
                return Err(BackendError::Codegen(format!(
                    "JIT: unknown stop word {other}"
                )));
            }
        })
    }
}
