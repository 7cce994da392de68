//! BLAKE3 of many short messages at once: the hashes a writer computes per definition (its
//! body hash, its content-hash label) are of messages of one to two KiB, one per definition.
//! blake3 hashes one such message on one SIMD lane at a time (its first 1 KiB chunk and its
//! tail in turn); here the first chunks of up to [`LANES`] messages are compressed together,
//! one per lane ([`blake3::platform::Platform::hash_many`]), then each message's tail chunk
//! and root are finished on its own ([`blake3::hazmat`]). The digests are blake3's, byte for
//! byte (tested against `blake3::hash` for every length up to three chunks).
//!
//! `hash_many` is blake3's own multi-message compression, public but hidden from its
//! documentation: the crate is pinned to one version (`crates/format/Cargo.toml`), as the
//! format's hashes already require.

use blake3::hazmat::{ChainingValue, HasherExt, Mode, merge_subtrees_root};
use blake3::platform::Platform;
use blake3::{CHUNK_LEN, IncrementCounter};

/// Messages whose first chunks are compressed together (the widest SIMD degree blake3 has).
pub(crate) const LANES: usize = 16;

/// BLAKE3's initial chaining value (its key words for unkeyed hashing).
const IV: [u32; 8] = [
    0x6A09E667, 0xBB67AE85, 0x3C6EF372, 0xA54FF53A, 0x510E527F, 0x9B05688C, 0x1F83D9AB, 0x5BE0CD19,
];
/// Block flags of BLAKE3's compression function.
const CHUNK_START: u8 = 1;
const CHUNK_END: u8 = 2;

/// `blake3::hash` of each of `msgs`, in order.
pub(crate) fn hash_all(msgs: &[&[u8]]) -> Vec<[u8; 32]> {
    let mut out = vec![[0u8; 32]; msgs.len()];
    let platform = Platform::detect();
    // Messages of more than one chunk and at most two, with their first chunks: those go in
    // groups; the others are hashed on their own.
    let mut two: Vec<(usize, &[u8; CHUNK_LEN])> = Vec::with_capacity(msgs.len());
    for (k, m) in msgs.iter().enumerate() {
        match m.first_chunk::<CHUNK_LEN>() {
            Some(first) if m.len() > CHUNK_LEN && m.len() <= 2 * CHUNK_LEN => two.push((k, first)),
            _ => out[k] = *blake3::hash(m).as_bytes(),
        }
    }
    let mut cvs = [0u8; 32 * LANES];
    for group in two.chunks(LANES) {
        let firsts: Vec<&[u8; CHUNK_LEN]> = group.iter().map(|&(_, first)| first).collect();
        let cvs = &mut cvs[..32 * group.len()];
        platform.hash_many(
            &firsts,
            &IV,
            0,
            IncrementCounter::No,
            0,
            CHUNK_START,
            CHUNK_END,
            cvs,
        );
        for (&(k, _), cv) in group.iter().zip(cvs.chunks_exact(32)) {
            let mut first: ChainingValue = [0; 32];
            first.copy_from_slice(cv);
            let tail = blake3::Hasher::new()
                .set_input_offset(CHUNK_LEN as u64)
                .update(&msgs[k][CHUNK_LEN..])
                .finalize_non_root();
            out[k] = merge_subtrees_root(&first, &tail, Mode::Hash).into();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every length from empty to three chunks, in groups that fill some lanes and not
    /// others, hashes as `blake3::hash` does.
    #[test]
    fn batched_digests_are_blake3s() {
        let data: Vec<u8> = (0..3 * CHUNK_LEN + 1)
            .map(|i| (i as u32).wrapping_mul(2_654_435_761).to_le_bytes()[1])
            .collect();
        let lens: Vec<usize> = (0..=3 * CHUNK_LEN + 1).collect();
        for group in [1, 3, LANES, LANES + 5, 101] {
            for batch in lens.chunks(group) {
                let msgs: Vec<&[u8]> = batch.iter().map(|&n| &data[..n]).collect();
                let got = hash_all(&msgs);
                for (m, h) in msgs.iter().zip(&got) {
                    assert_eq!(h, blake3::hash(m).as_bytes(), "length {}", m.len());
                }
            }
        }
    }
}
