//! The source of every random choice the generators make.

/// A deterministic stream of choices, read from a byte slice or expanded from a 64-bit seed.
///
/// Every choice is a bounded number, so any byte string is a valid input (what a fuzzer needs),
/// and the same bytes or the same seed always give the same choices (what a reproducer needs).
///
/// A byte-driven source yields zeros once its bytes run out, and every generator maps zero to
/// its *smallest* option (no more functions, no more instructions, no optional feature), so a
/// shorter input gives a smaller module and shrinking the bytes towards zeros (what `proptest`
/// does) shrinks the module too. A seeded source never runs out; there the size limits of
/// [`Config`](crate::Config) bound the output.
#[derive(Clone, Debug)]
pub struct Entropy<'a> {
    bytes: &'a [u8],
    pos: usize,
    /// SplitMix64 state for a seeded source.
    seed: Option<u64>,
}

impl<'a> Entropy<'a> {
    /// A source reading `bytes` in order, then zeros.
    pub fn new(bytes: &'a [u8]) -> Entropy<'a> {
        Entropy {
            bytes,
            pos: 0,
            seed: None,
        }
    }

    /// An endless pseudo-random source expanded from `seed` (SplitMix64).
    pub fn from_seed(seed: u64) -> Entropy<'static> {
        Entropy {
            bytes: &[],
            pos: 0,
            seed: Some(seed),
        }
    }

    /// Whether a byte-driven source has used up its bytes (a seeded source never has).
    pub fn is_exhausted(&self) -> bool {
        self.seed.is_none() && self.pos >= self.bytes.len()
    }

    /// The bytes not read yet (empty for a seeded source).
    pub fn remaining(&self) -> &'a [u8] {
        self.bytes.get(self.pos..).unwrap_or(&[])
    }

    fn splitmix(state: &mut u64) -> u64 {
        *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// The next byte.
    pub fn byte(&mut self) -> u8 {
        if let Some(state) = &mut self.seed {
            return Self::splitmix(state) as u8;
        }
        let b = self.bytes.get(self.pos).copied().unwrap_or(0);
        self.pos = self.pos.saturating_add(1);
        b
    }

    /// The next 64-bit number (eight bytes, little-endian).
    pub fn u64(&mut self) -> u64 {
        if let Some(state) = &mut self.seed {
            return Self::splitmix(state);
        }
        (0..8).fold(0u64, |acc, i| acc | (u64::from(self.byte()) << (8 * i)))
    }

    /// A number in `0..n` (`0` when `n` is 0 or 1). Zero bytes give 0.
    pub fn below(&mut self, n: usize) -> usize {
        match n {
            0 | 1 => 0,
            2..=256 => usize::from(self.byte()) % n,
            _ => (self.u64() % n as u64) as usize,
        }
    }

    /// A number in `lo..=hi` (`lo` when `hi <= lo`). Zero bytes give `lo`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi.saturating_sub(lo).saturating_add(1))
    }

    /// `true` with probability about `percent`/100. Zero bytes give `false`.
    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) >= 100usize.saturating_sub(percent)
    }

    /// One element of a non-empty slice (the first for zero bytes); `None` if it is empty.
    pub fn pick<'s, T>(&mut self, items: &'s [T]) -> Option<&'s T> {
        if items.is_empty() {
            None
        } else {
            items.get(self.below(items.len()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exhausted_bytes_give_minimal_choices() {
        let mut e = Entropy::new(&[]);
        assert!(e.is_exhausted());
        assert_eq!(e.below(10), 0);
        assert_eq!(e.range(3, 9), 3);
        assert!(!e.chance(99));
    }

    #[test]
    fn seeded_sources_are_deterministic() {
        let mut a = Entropy::from_seed(7);
        let mut b = Entropy::from_seed(7);
        for _ in 0..100 {
            assert_eq!(a.u64(), b.u64());
        }
        assert!(!a.is_exhausted());
    }

    #[test]
    fn bytes_are_read_in_order() {
        let mut e = Entropy::new(&[5, 1, 2]);
        assert_eq!(e.below(10), 5);
        assert_eq!(e.remaining(), &[1, 2]);
        assert!(e.chance(100));
        assert_eq!(e.byte(), 2);
        assert!(e.is_exhausted());
    }
}
