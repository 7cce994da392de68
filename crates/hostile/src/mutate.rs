//! The mutator: record-level edits of a module file chosen by a stream of bytes (a fuzzer's
//! input); the hashes are left stale, for [`reseal`](super::reseal) to fix.

use super::{Field, FieldKind, fields};
use irkit_format::testing::{REF_MAX_INDEX, REF_NONE};

/// A stream of choices read from bytes (zeros once they run out).
struct Choices<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Choices<'_> {
    fn byte(&mut self) -> u8 {
        let b = self.bytes.get(self.pos).copied().unwrap_or(0);
        self.pos = self.pos.saturating_add(1);
        b
    }

    fn u32(&mut self) -> u32 {
        (0..4).fold(0, |acc, i| acc | (u32::from(self.byte()) << (8 * i)))
    }

    /// A number in `0..n` (0 when `n` is 0 or 1).
    fn below(&mut self, n: usize) -> usize {
        match n {
            0 | 1 => 0,
            2..=256 => usize::from(self.byte()) % n,
            _ => self.u32() as usize % n,
        }
    }
}

/// The little-endian value of a field (its first 8 bytes at most).
fn read_value(bytes: &[u8], f: &Field) -> u64 {
    let n = f.len.min(8);
    bytes.get(f.at..f.at + n).map_or(0, |b| {
        b.iter().rev().fold(0, |acc, &x| (acc << 8) | u64::from(x))
    })
}

/// Writes `v` into a field (its first 8 bytes at most; longer fields get `fill` after).
fn write_value(bytes: &mut [u8], f: &Field, v: u64, fill: u8) {
    let Some(b) = bytes.get_mut(f.at..f.at.saturating_add(f.len)) else {
        return;
    };
    for (i, x) in b.iter_mut().enumerate() {
        *x = if i < 8 { (v >> (8 * i)) as u8 } else { fill };
    }
}

/// Applies one to four hostile mutations to `bytes`, chosen by `choices` (the same choices
/// always give the same mutations; no choices, no mutation): bit flips and byte writes anywhere, and mostly
/// record-level edits of a field from [`fields`], set to 0, 1, its maximum, itself ± 1, the
/// value of another field of the same kind (another valid index, reference or opcode), an
/// opcode id of the registry, a reference with another tag or the absent marker, or a random
/// word; or two fields of a kind swapped. Hashes are left stale: [`reseal`](super::reseal) afterwards.
pub fn mutate(bytes: &mut [u8], choices: &[u8]) {
    let mut c = Choices {
        bytes: choices,
        pos: 0,
    };
    if bytes.is_empty() || choices.is_empty() {
        return;
    }
    for _ in 0..1 + c.below(4) {
        edit(bytes, &mut c, true);
    }
}

/// Applies exactly one hostile edit to `bytes` at one place (a bit flip, a byte write, or one
/// field set as [`mutate`] sets it; never a swap of two fields), chosen by `choices`. A file
/// damaged in one place only is what a lazy reader can be held to: either it reads the damage
/// and refuses, or it does not and its result cannot change. Hashes are left stale.
pub fn mutate_once(bytes: &mut [u8], choices: &[u8]) {
    let mut c = Choices {
        bytes: choices,
        pos: 0,
    };
    if !bytes.is_empty() && !choices.is_empty() {
        edit(bytes, &mut c, false);
    }
}

fn edit(bytes: &mut [u8], c: &mut Choices<'_>, swap: bool) {
    match c.below(10) {
        8 => {
            let at = c.below(bytes.len());
            bytes[at] ^= 1 << c.below(8);
        }
        9 => {
            let at = c.below(bytes.len());
            bytes[at] = c.byte();
        }
        _ => mutate_field(bytes, c, swap),
    }
}

fn mutate_field(bytes: &mut [u8], c: &mut Choices<'_>, swap: bool) {
    let all = fields(bytes);
    let Some(&f) = all.get(c.below(all.len())) else {
        return;
    };
    let max = if f.len >= 8 {
        u64::MAX
    } else {
        (1u64 << (8 * f.len)) - 1
    };
    let v = read_value(bytes, &f);
    let same: Vec<&Field> = all
        .iter()
        .filter(|g| g.what == f.what && g.len == f.len)
        .collect();
    let (nv, fill) = match c.below(10) {
        0 => (0, 0),
        1 => (1, 0),
        2 => (max, 0xFF),
        3 => (v.wrapping_add(1) & max, 0),
        4 => (v.wrapping_sub(1) & max, 0),
        5 => {
            let Some(g) = same.get(c.below(same.len())) else {
                return;
            };
            if f.len > 8 {
                // A hash: copy another one whole.
                let src = g.at..g.at + g.len;
                if let Some(h) = bytes.get(src).map(<[u8]>::to_vec) {
                    bytes[f.at..f.at + f.len].copy_from_slice(&h);
                }
                return;
            }
            (read_value(bytes, g), 0)
        }
        6 => match f.what {
            FieldKind::Opcode => {
                let reg = irkit_core::REGISTRY;
                (
                    reg.get(c.below(reg.len()))
                        .map_or(0, |o| u64::from(o.opcode.0)),
                    0,
                )
            }
            _ => (u64::from(c.byte()), 0),
        },
        7 => match f.what {
            FieldKind::Operand | FieldKind::TypeRef => {
                let tag = c.below(5) as u64;
                if tag == 4 {
                    (u64::from(REF_NONE), 0)
                } else {
                    ((v & u64::from(REF_MAX_INDEX)) | (tag << 30), 0)
                }
            }
            _ => (v ^ (1 << c.below(8 * f.len.min(8))), 0),
        },
        8 if swap => {
            // Swap with another field of the same kind.
            let Some(g) = same.get(c.below(same.len())).map(|g| **g) else {
                return;
            };
            let (a, b) = (
                bytes[f.at..f.at + f.len].to_vec(),
                bytes[g.at..g.at + g.len].to_vec(),
            );
            bytes[g.at..g.at + g.len].copy_from_slice(&a);
            bytes[f.at..f.at + f.len].copy_from_slice(&b);
            return;
        }
        _ => (u64::from(c.u32()) & max, 0),
    };
    write_value(bytes, &f, nv, fill);
}
