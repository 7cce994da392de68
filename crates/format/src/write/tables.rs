//! The file's derived tables: every definition's content hash (the semantic hash of the
//! version written), and the fixed-layout symbol index binary-searched in place by readers.

use super::*;

/// Every definition's content hash (the semantic hash of major `major`: `spec/format.md` §3.5
/// in 5.x, §3.4 in 4.x, §3.2 before), from its encoded body: labels on every core, then the
/// components walked.
pub(super) fn content_hashes<B: crate::compact::MaybeCompact + Sync>(
    strings: &StringTable,
    bodies: Vec<&B>,
    pool: &PoolTable,
    major: u16,
) -> Vec<[u8; 32]> {
    let n = bodies.len() as u32;
    let graph = FlatGraph::new(strings, bodies, pool, semantic::Scheme::of_major(major));
    let labels = graph.def_labels();
    let mut hasher = semantic::Hasher::with_def_labels(graph, labels, pool.entries.len());
    if let Err(never) = hasher.hash_lone_defs(n) {
        match never {}
    }
    (0..n)
        .map(|d| match hasher.hash(Node::Def(d)) {
            Ok(h) => h,
            Err(never) => match never {},
        })
        .collect()
}

/// The symbol-index section (`spec/format.md` §1.4): a 16-byte header, one fixed-size record
/// per symbol in the symbol table's order (sorted by name bytes, role, definition), then the
/// name blob (each distinct name once, in record order).
pub(super) fn symbol_index(
    symbols: &SymbolTable,
    strings: &StringTable,
) -> Result<Vec<u8>, WriteError> {
    let n = symbols.symbols.len();
    let count = u32::try_from(n).map_err(|_| WriteError::TooLarge {
        what: "symbols",
        count: n as u64,
        max: u32::MAX as u64,
    })?;
    let mut out = vec![0u8; SYMIX_HEADER + n * SYMIX_RECORD];
    LE::write_u32(&mut out[0..4], count);
    LE::write_u32(&mut out[4..8], SYMIX_RECORD as u32);
    let mut blob: Vec<u8> = Vec::new();
    let mut prev: Option<(&str, u32)> = None;
    for (k, s) in symbols.symbols.iter().enumerate() {
        let name = str_of(strings, s.name).unwrap_or("");
        let off = match prev {
            Some((p, off)) if p == name => off,
            _ => {
                let off = blob.len();
                blob.extend_from_slice(name.as_bytes());
                u32::try_from(blob.len()).map_err(|_| WriteError::TooLarge {
                    what: "bytes of symbol names",
                    count: blob.len() as u64,
                    max: u32::MAX as u64,
                })?;
                off as u32
            }
        };
        prev = Some((name, off));
        let r = &mut out[SYMIX_HEADER + k * SYMIX_RECORD..][..SYMIX_RECORD];
        LE::write_u32(&mut r[0..4], off);
        LE::write_u32(&mut r[4..8], name.len() as u32);
        LE::write_u32(&mut r[8..12], s.def);
        LE::write_u32(&mut r[12..16], s.signature);
        LE::write_u16(&mut r[16..18], s.def_opcode);
        r[18] = s.role;
        r[19] = 0;
        r[20..52].copy_from_slice(&s.hash);
    }
    out.extend_from_slice(&blob);
    Ok(out)
}

pub(super) fn str_of(t: &StringTable, i: u32) -> Option<&str> {
    crate::flat::Strings::get_str(t, i)
}

pub(super) fn ops_len(n: usize) -> Result<u32, WriteError> {
    u32::try_from(n).map_err(|_| WriteError::TooLarge {
        what: "operands in one archive",
        count: n as u64,
        max: u32::MAX as u64,
    })
}
