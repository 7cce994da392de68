//! Hostile files that get past the hashes: valid modules damaged at the byte and record level
//! (`irkit_hostile::mutate`), then resealed (`hostile::reseal`: every hash made to agree
//! with the damaged bytes, as a writer who can compute blake3 would), then through every reader:
//! the lazy view (symbols, lookups, definitions, instructions, the pool, semantic hashes),
//! `validate_all`, materializing (then verify, print, write and read back), and the linker (a
//! library link, and an executable link entered at the first export). `Ok` or an error, never
//! a panic.
//!
//! An input that starts with the format's magic bytes is a file (its first `file length`
//! bytes, per its header; the seed corpus holds the golden `.irm` files) and what follows it
//! chooses the damage. Any other input generates a valid module from its first half, as the
//! `mutate` target does (half of them without dangling imports, so that executable links
//! succeed too), and the second half chooses the damage.
#![no_main]

use irkit_format::{MAGIC, ModuleView, SymbolRole};
use irkit_hostile as hostile;
use irkit_link::{Input, LinkOptions, link};
use irkit_testgen::{Config, Entropy, module};
use libfuzzer_sys::fuzz_target;

/// The original file and the choices of damage.
fn split(data: &[u8]) -> Option<(Vec<u8>, &[u8])> {
    if data.starts_with(&MAGIC) {
        let n = data
            .get(24..32)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap_or_default()))
            .filter(|&n| n >= 32 && n <= data.len() as u64)
            .map_or(data.len(), |n| n as usize);
        return Some((data[..n].to_vec(), &data[n..]));
    }
    let (shape, damage) = data.split_at(data.len() / 2);
    // Half of the modules declare no import nothing provides, so that executable links of
    // them succeed too.
    let cfg = Config {
        dangling_imports: shape.first().is_some_and(|b| b & 1 == 1),
        ..Config::default()
    };
    let m = module(&mut Entropy::new(shape), &cfg);
    Some((irkit_format::write(&m).ok()?, damage))
}

fn read_everything(bytes: &[u8]) {
    let Ok(view) = ModuleView::from_bytes(bytes) else {
        return;
    };
    let _ = (view.version(), view.sections(), view.content_hash());
    let _ = view.try_string_count();
    for i in 0..view.string_count().min(64) {
        let _ = view.string(i);
    }
    if let Ok(pool) = view.pool() {
        for i in 0..pool.len() {
            if let Some(p) = pool.get(i) {
                let _ = (p.opcode(), p.ty(), p.payload(), p.operands().count());
            }
        }
    }
    let symbols = view.try_symbols().unwrap_or_default();
    for s in &symbols {
        let _ = view.try_find_symbols(s.name);
        let _ = view.check_def_symbols(s.def);
        let _ = view.symbols_of_def(s.def);
    }
    let _ = view.try_find_export("main");
    let _ = view.find_symbols("");
    for i in 0..view.def_count() {
        let _ = view.def_info(i);
        let _ = view.def_name(i);
        if let Ok(def) = view.def(i) {
            let _ = (def.len(), def.content_hash());
            for inst in def.insts() {
                let _ = (inst.opcode(), inst.ty(), inst.payload(), inst.subtree_end());
                let _ = inst.operands().count();
                let _ = inst.decorations().count();
                let _ = inst.children().count();
            }
        }
        let _ = (view.semantic_hash(i), view.linking_hash(i));
    }
    if let Ok(root) = view.root() {
        let _ = root.insts().count();
    }
    let _ = view.validate_all();
    if let Ok(m) = view.materialize() {
        let _ = irkit_core::verify::verify(&m);
        let _ = irkit_text::print(&m);
        let again = irkit_format::write(&m).expect("a module that was read can be written");
        let reread = irkit_format::read(&again).expect("written bytes read back");
        irkit_core::equiv::modules_equal(&m, &reread).expect("read(write(m)) == m");
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((mut bytes, damage)) = split(data) else {
        return;
    };
    hostile::mutate(&mut bytes, damage);
    hostile::reseal(&mut bytes);
    read_everything(&bytes);
    // Executable links enter at the first export (a generated single module has no `main`).
    let entry = ModuleView::from_bytes(&bytes)
        .ok()
        .and_then(|v| {
            let s = v.symbols();
            let first = s.iter().find(|s| s.role == SymbolRole::Export)?;
            Some(first.name.to_string())
        })
        .unwrap_or_else(|| "main".to_string());
    for library in [true, false] {
        let Ok(input) = Input::from_bytes("sealed.irm", &bytes) else {
            return;
        };
        let opts = LinkOptions {
            library,
            entry: entry.clone(),
            ..LinkOptions::default()
        };
        if let Ok(linked) = link(vec![input], &opts) {
            let _ = irkit_format::write(&linked.module);
        }
    }
});
