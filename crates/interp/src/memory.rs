//! The memory model (spec/ir.md, "Memory"): separate objects, each checked on every access.
//!
//! A pointer encodes `(object id, offset)` as `id << 32 | (2^31 + offset)`: an object's start
//! is in the middle of its 4 GiB window, so address arithmetic that steps before the start (a
//! negative index) or past the end stays in the same window and is reported as out of bounds of
//! that object instead of reaching a neighbour. Object 0 is the null object: every address below
//! `1 << 32` (null included) is a null access. Each global, each
//! execution of `stackalloc`, each `malloc` and each function gets its own id, so function
//! addresses are distinct, non-null and never valid data addresses. An access is allowed only
//! when all its bytes lie inside one live data object; stores into `global_const` objects are
//! refused. Released objects keep their id (a tombstone) so that a dangling pointer is reported
//! as a use after free and never reaches another object.

use crate::trap::TrapKind;

/// Bits of a pointer that hold the offset.
const OFFSET_BITS: u32 = 32;

/// The offset bias: the low bits of an object's start address.
const BIAS: u64 = 1 << (OFFSET_BITS - 1);

/// The largest single object, in bytes.
pub(crate) const MAX_OBJECT: u64 = BIAS - 1;

/// What an object is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A `global_var` (`readonly: false`) or `global_const` (`readonly: true`).
    Global {
        /// Whether stores are refused.
        readonly: bool,
    },
    /// A `stackalloc` object.
    Stack,
    /// A `malloc` object.
    Heap,
    /// A function: the index of the function in the program.
    Func(u32),
    /// An imported global of an unlinked module.
    Unresolved(String),
}

#[derive(Debug)]
struct Object {
    kind: Kind,
    live: bool,
    bytes: Vec<u8>,
}

/// All objects of one execution.
#[derive(Debug)]
pub(crate) struct Memory {
    objects: Vec<Object>,
    /// Bytes held by live objects.
    used: u64,
    /// The most bytes live objects may hold together.
    limit: u64,
}

impl Memory {
    /// An empty memory (just the null object) holding at most `limit` bytes.
    pub(crate) fn new(limit: u64) -> Memory {
        Memory {
            objects: vec![Object {
                kind: Kind::Heap,
                live: false,
                bytes: Vec::new(),
            }],
            used: 0,
            limit,
        }
    }

    /// Allocates a zero-filled object of `size` bytes and returns its address.
    pub(crate) fn alloc(&mut self, kind: Kind, size: u64) -> Result<u64, TrapKind> {
        if size > MAX_OBJECT || self.used.saturating_add(size) > self.limit {
            return Err(TrapKind::OutOfMemory);
        }
        let id = u32::try_from(self.objects.len()).map_err(|_| TrapKind::OutOfMemory)?;
        let len = usize::try_from(size).map_err(|_| TrapKind::OutOfMemory)?;
        self.objects.push(Object {
            kind,
            live: true,
            bytes: vec![0; len],
        });
        self.used += size;
        Ok(u64::from(id) << OFFSET_BITS | BIAS)
    }

    /// Releases the object at `addr` (which must be its start). `Heap` objects only when
    /// `heap_only` (for `free`); stack objects are released by the interpreter on return.
    pub(crate) fn release(&mut self, addr: u64, heap_only: bool) -> Result<(), TrapKind> {
        let (id, off) = split(addr);
        let bad = TrapKind::InvalidFree { addr };
        let obj = self.objects.get_mut(id).ok_or(bad.clone())?;
        if id == 0 || off != Some(0) || !obj.live || (heap_only && obj.kind != Kind::Heap) {
            return Err(bad);
        }
        obj.live = false;
        self.used -= obj.bytes.len() as u64;
        obj.bytes = Vec::new();
        Ok(())
    }

    /// Moves the bytes of the heap object starting at `addr` into a new heap object of `size`
    /// bytes (at least theirs), zero past them, and releases the old object: what `alloc`,
    /// `copy` and `release` do, but the bytes are moved into a buffer that doubles when they
    /// outgrow it, so an object grown step by step costs what its bytes cost, not their square
    /// (a linear memory's `mem_grow`). The limit counts both objects, as `alloc` before
    /// `release` does.
    pub(crate) fn grow_moved(&mut self, addr: u64, size: u64) -> Result<u64, TrapKind> {
        let (id, off) = split(addr);
        let bad = TrapKind::InvalidFree { addr };
        let obj = self.objects.get(id).ok_or(bad.clone())?;
        if id == 0 || off != Some(0) || !obj.live || obj.kind != Kind::Heap {
            return Err(bad);
        }
        let old = obj.bytes.len() as u64;
        if size < old || size > MAX_OBJECT || self.used.saturating_add(size) > self.limit {
            return Err(TrapKind::OutOfMemory);
        }
        let new_id = u32::try_from(self.objects.len()).map_err(|_| TrapKind::OutOfMemory)?;
        let len = usize::try_from(size).map_err(|_| TrapKind::OutOfMemory)?;
        let obj = &mut self.objects[id];
        let mut bytes = std::mem::take(&mut obj.bytes);
        obj.live = false;
        if len > bytes.capacity() {
            // Twice the room, zeroed as `alloc`'s is (pages never touched cost nothing).
            let room = len.max(bytes.capacity().saturating_mul(2).min(MAX_OBJECT as usize));
            let mut fresh = vec![0; room];
            fresh[..bytes.len()].copy_from_slice(&bytes);
            fresh.truncate(len);
            bytes = fresh;
        } else {
            bytes.resize(len, 0);
        }
        self.objects.push(Object {
            kind: Kind::Heap,
            live: true,
            bytes,
        });
        self.used = self.used - old + size;
        Ok(u64::from(new_id) << OFFSET_BITS | BIAS)
    }

    /// The function index whose address is `addr`, if it is exactly a function address.
    pub(crate) fn func_at(&self, addr: u64) -> Option<u32> {
        let (id, off) = split(addr);
        match self.objects.get(id) {
            Some(Object {
                kind: Kind::Func(f),
                ..
            }) if off == Some(0) => Some(*f),
            _ => None,
        }
    }

    fn check(&self, addr: u64, size: u64, write: bool) -> Result<(usize, usize), TrapKind> {
        let (id, off) = split(addr);
        if id == 0 {
            return Err(TrapKind::NullAccess { addr });
        }
        let oob = TrapKind::OutOfBounds { addr, size };
        let obj = self.objects.get(id).ok_or(oob.clone())?;
        match &obj.kind {
            Kind::Func(_) => return Err(TrapKind::FunctionAccess { addr }),
            Kind::Unresolved(name) => return Err(TrapKind::UnresolvedImport(name.clone())),
            _ if !obj.live => return Err(TrapKind::UseAfterFree { addr }),
            Kind::Global { readonly: true } if write => {
                return Err(TrapKind::ReadOnlyStore { addr });
            }
            _ => {}
        }
        let off = off.ok_or(oob.clone())?;
        let end = (off as u64).checked_add(size).ok_or(oob.clone())?;
        if end > obj.bytes.len() as u64 {
            return Err(oob);
        }
        Ok((id, off))
    }

    /// Reads `size` bytes at `addr`.
    pub(crate) fn read(&self, addr: u64, size: u64) -> Result<&[u8], TrapKind> {
        let (id, off) = self.check(addr, size, false)?;
        Ok(&self.objects[id].bytes[off..off + size as usize])
    }

    /// Writes `data` at `addr`.
    pub(crate) fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), TrapKind> {
        let (id, off) = self.check(addr, data.len() as u64, true)?;
        self.objects[id].bytes[off..off + data.len()].copy_from_slice(data);
        Ok(())
    }

    /// Writes `data` at `addr` ignoring read-only protection (global initialization).
    pub(crate) fn init(&mut self, addr: u64, data: &[u8]) -> Result<(), TrapKind> {
        let (id, off) = self.check(addr, data.len() as u64, false)?;
        self.objects[id].bytes[off..off + data.len()].copy_from_slice(data);
        Ok(())
    }

    /// Reads a little-endian scalar of `size` (1..=8) bytes.
    pub(crate) fn read_uint(&self, addr: u64, size: u64) -> Result<u64, TrapKind> {
        let bytes = self.read(addr, size)?;
        let mut buf = [0u8; 8];
        buf[..bytes.len()].copy_from_slice(bytes);
        Ok(u64::from_le_bytes(buf))
    }

    /// Writes the low `size` (1..=8) bytes of `bits`, little-endian.
    pub(crate) fn write_uint(&mut self, addr: u64, size: u64, bits: u64) -> Result<(), TrapKind> {
        let bytes = bits.to_le_bytes();
        self.write(addr, &bytes[..size.min(8) as usize])
    }

    /// `memcpy`: copies `n` bytes from `src` to `dst` (overlap allowed, as `memmove`).
    pub(crate) fn copy(&mut self, dst: u64, src: u64, n: u64) -> Result<(), TrapKind> {
        if n == 0 {
            return Ok(());
        }
        let data = self.read(src, n)?.to_vec();
        self.write(dst, &data)
    }

    /// `memset`: fills `n` bytes at `dst` with `byte`.
    pub(crate) fn fill(&mut self, dst: u64, byte: u8, n: u64) -> Result<(), TrapKind> {
        if n == 0 {
            return Ok(());
        }
        let (id, off) = self.check(dst, n, true)?;
        self.objects[id].bytes[off..off + n as usize].fill(byte);
        Ok(())
    }
}

/// `(object id, offset)` of an address; the offset is `None` when the address is before the
/// object's start.
fn split(addr: u64) -> (usize, Option<usize>) {
    let low = addr & ((1 << OFFSET_BITS) - 1);
    (
        (addr >> OFFSET_BITS) as usize,
        low.checked_sub(BIAS).map(|o| o as usize),
    )
}
