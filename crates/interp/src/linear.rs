//! Linear memories (spec/ir.md, "Linear memories"): the bounds check of `mem_load` and
//! `mem_store`, and `mem_grow`, over the memory record `{ptr base, i64 size, i32 max, i64
//! reserved}` a program keeps in a `global_var`.
//!
//! The interpreter gives a memory its bytes as one heap object: a growth moves the bytes to a
//! new object of the new size (zero-filled past them) and releases the old one, so a stale
//! `base` is a use after free, never a silent access; the bytes' buffer grows by doubling, so
//! growing page by page costs what the pages cost. An object is at most [`MAX_OBJECT`] bytes: a growth past
//! that, or past the interpreter's memory limit, fails as `mem_grow` may (the result -1).

use irkit_backend::trap_kinds;

use crate::Interpreter;
use crate::memory::{Kind, MAX_OBJECT};
use crate::trap::TrapKind;

/// The bytes of a page.
const PAGE: u64 = 65536;
/// The most pages a memory has (4 GiB).
const MAX_PAGES: u64 = 65536;

/// The offsets of the record's fields `base`, `size` and `max` (its layout: `ptr`, `i64`,
/// `i32`, `i64`).
const BASE: u64 = 0;
const SIZE: u64 = 8;
const MAX: u64 = 16;

impl Interpreter<'_> {
    /// The address of the `n`-byte access at `zext(addr) + offset` of the memory whose record
    /// is at `record`, or the trap `out of bounds memory access`.
    pub(crate) fn linear_address(
        &self,
        record: u64,
        addr: u32,
        offset: u64,
        n: u64,
    ) -> Result<u64, TrapKind> {
        let size = self.mem.read_uint(record + SIZE, 8)?;
        let ea = u64::from(addr) + offset;
        if ea.checked_add(n).is_none_or(|end| end > size) {
            return Err(TrapKind::Message(
                trap_kinds::OUT_OF_BOUNDS_MEMORY.to_owned(),
            ));
        }
        let base = self.mem.read_uint(record + BASE, 8)?;
        Ok(base.wrapping_add(ea))
    }

    /// `mem_grow` of the memory whose record is at `record` by `delta` pages: its old size in
    /// pages, or -1.
    pub(crate) fn linear_grow(&mut self, record: u64, delta: u32) -> Result<i32, TrapKind> {
        let base = self.mem.read_uint(record + BASE, 8)?;
        let size = self.mem.read_uint(record + SIZE, 8)?;
        let max = self.mem.read_uint(record + MAX, 4)?.min(MAX_PAGES);
        let pages = size / PAGE;
        let new = pages + u64::from(delta);
        if new > max {
            return Ok(-1);
        }
        if delta == 0 {
            return Ok(pages as i32);
        }
        let bytes = new * PAGE;
        if bytes > MAX_OBJECT {
            return Ok(-1);
        }
        let grown = if size > 0 {
            self.mem.grow_moved(base, bytes)
        } else {
            self.mem.alloc(Kind::Heap, bytes)
        };
        let fresh = match grown {
            Ok(p) => p,
            Err(TrapKind::OutOfMemory) => return Ok(-1),
            Err(e) => return Err(e),
        };
        self.mem.write_uint(record + BASE, 8, fresh)?;
        self.mem.write_uint(record + SIZE, 8, bytes)?;
        Ok(pages as i32)
    }
}
