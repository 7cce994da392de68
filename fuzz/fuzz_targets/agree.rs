//! Differential: readers agree on which hostile files are valid, and a hostile file never
//! silently changes a linked program.
//!
//! From a valid file (generated as the `mutate` target does, half of them without dangling
//! imports so that executable links succeed too; or an input that starts with the
//! magic bytes: its first `file length` bytes, resealed, if it then validates) and a mutation
//! of it made by `irkit_hostile::mutate` and resealed (every hash recomputed, as a
//! writer who can compute blake3 would), with fresh views for each reader:
//!
//! (a) if `validate_all` accepts the mutation, `materialize` succeeds;
//! (b) if `validate_all` refuses it, `materialize` refuses it too;
//! (c) for a mutation in one place (`hostile::mutate_once`), unless `validate_all` accepted it
//!     (then it is a legitimate different module and any link result is fine), linking it (a
//!     library link, and an executable link whose entry point is the original's first export)
//!     either fails or gives a module whose written bytes equal those of the same link of the
//!     original. (With damage in two places, one where the linker never looks and one that is
//!     a legitimate edit where it does, a lazy link rightly differs: spec/linking.md §4.)
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
        let mut file = data[..n].to_vec();
        hostile::reseal(&mut file);
        return Some((file, &data[n..]));
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

/// The entry point of executable links: the first export of the original (a generated single
/// module has no `main`), else `main`.
fn entry_of(view: &ModuleView) -> String {
    view.symbols()
        .iter()
        .find(|s| s.role == SymbolRole::Export)
        .map_or_else(|| "main".to_string(), |s| s.name.to_string())
}

/// The written bytes of a link of `bytes` alone, or `None` when it fails.
fn linked(bytes: &[u8], library: bool, entry: &str) -> Option<Vec<u8>> {
    let input = Input::from_bytes("agree.irm", bytes).ok()?;
    let opts = LinkOptions {
        library,
        entry: entry.to_string(),
        ..LinkOptions::default()
    };
    let out = link(vec![input], &opts).ok()?;
    Some(irkit_format::write(&out.module).expect("a linked module writes"))
}

fuzz_target!(|data: &[u8]| {
    let Some((original, damage)) = split(data) else {
        return;
    };
    let Ok(view) = ModuleView::from_bytes(&original) else {
        return;
    };
    if view.validate_all().is_err() {
        return;
    }
    let entry = entry_of(&view);
    drop(view);
    // The first choice byte picks between damage in several places (oracles (a), (b)) and in
    // one place (all three).
    let (once, damage) = match damage.split_first() {
        Some((b, rest)) => (b & 1 == 0, rest),
        None => return,
    };
    let mut bytes = original.clone();
    if once {
        hostile::mutate_once(&mut bytes, damage);
    } else {
        hostile::mutate(&mut bytes, damage);
    }
    hostile::reseal(&mut bytes);

    let valid = ModuleView::from_bytes(&bytes).and_then(|v| v.validate_all());
    let materialized = ModuleView::from_bytes(&bytes).and_then(|v| v.materialize());
    match (&valid, &materialized) {
        (Ok(()), Err(e)) => panic!("(a) validate_all accepts, materialize refuses: {e}"),
        (Err(e), Ok(_)) => panic!("(b) validate_all refuses, materialize accepts: {e}"),
        _ => {}
    }
    let Err(refused) = valid else {
        return;
    };
    if !once {
        return;
    }
    for library in [true, false] {
        let Some(got) = linked(&bytes, library, &entry) else {
            continue;
        };
        let kind = if library { "library" } else { "executable" };
        match linked(&original, library, &entry) {
            Some(want) => assert!(
                got == want,
                "(c) validate_all refuses ({refused}), the {kind} link succeeds with a \
                 different module"
            ),
            None => panic!(
                "(c) validate_all refuses ({refused}), the {kind} link succeeds where the \
                 original's fails"
            ),
        }
    }
});
