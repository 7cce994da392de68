//! The bit-flip sweep: for a few small modules, every single-bit flip of the assembled file is
//! either refused by every whole-module reader, or provably harmless (padding, documented
//! ignored fields) and leaves the linked output byte-identical. Zero silent changes to a linked
//! program.
//!
//! Every bit of every byte is flipped (about 110k flips over the four modules, a few seconds in
//! a debug build), and the flipped file goes through:
//!
//! * the whole-module readers: `validate_all` (what `ir-info --validate` runs), `materialize`
//!   (what `ir-dis` runs) and `materialize` + the verifier (what `ir-verify` runs). They must
//!   agree, accept or refuse.
//! * the linker (`Input::from_bytes`): a library link, an executable link when the module
//!   exports `main`, and for the modules of the two-module program an executable link with the
//!   other (unflipped) half. Each link either fails, or succeeds with bytes identical to the
//!   link of the unflipped file, or succeeds with different bytes: a **silent change**.
//!
//! The rule: a refused flip must make every link fail or give identical bytes; an accepted flip
//! must give identical bytes in every link (and an accepted module must materialize to the same
//! module). Accepted flips must lie in padding or in a field spec/format.md documents as ignored
//! (every section is hashed), and stay a small share of all flips, so the test cannot pass by
//! accepting everything. Failures are grouped by class and region, each with its first example
//! (offset, bit, place, every reader's answer and the link outcome).
//!
//! Region names come from `ModuleView::sections()` and from the header and directory layout
//! of spec/format.md; sizes are read from `irkit_format::header` and the file's own header.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use irkit_format::header::{DIR_ENTRY_SIZE, HEADER_SIZE};
use irkit_format::{FORMAT_MAJOR, ModuleView};
use irkit_link::{Input, LinkOptions, link};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// Parses `examples/<rel>` and assembles it.
fn assemble(rel: &str) -> Vec<u8> {
    let path = repo().join("examples").join(rel);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{rel}: {e}"));
    let m = irkit_text::parse(&text, rel).unwrap_or_else(|e| panic!("{e}"));
    irkit_format::write(&m).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

// ---------------------------------------------------------------------------------------------
// Regions

/// Where a byte of the file lies, for messages and for the per-region counts.
struct Layout {
    /// Size of the fixed header of the version the writer writes (32 in 1.x, 64 from 2.0 on).
    header_size: usize,
    /// Size of one directory entry, as the file's header says.
    entry_size: usize,
    /// End of the directory.
    dir_end: usize,
    /// Directory order: (name, offset, size).
    sections: Vec<(String, usize, usize)>,
    /// Header field names: (offset, size, name).
    header_fields: Vec<(usize, usize, &'static str)>,
}

impl Layout {
    fn of(bytes: &[u8]) -> Layout {
        let view = ModuleView::from_bytes(bytes).unwrap_or_else(|e| panic!("{e}"));
        // The writer writes the current major, whose header is `HEADER_SIZE` bytes (32 in 1.x;
        // 64 from 2.0 on, with a blake3 of header and directory at 32..64).
        assert_eq!(
            view.version().0,
            FORMAT_MAJOR,
            "the writer writes the current major"
        );
        let h = view.header();
        let header_size = HEADER_SIZE;
        let entry_size = h.entry_size as usize;
        let dir_end = header_size + h.section_count as usize * entry_size;
        let first_section = view
            .sections()
            .iter()
            .map(|s| s.offset as usize)
            .min()
            .unwrap_or(bytes.len());
        assert!(
            dir_end <= first_section,
            "directory ends at {dir_end}, after the first section ({first_section}): the \
             header size this test derives ({header_size}) is wrong"
        );
        let mut header_fields = vec![
            (0, 8, "magic"),
            (8, 2, "major"),
            (10, 2, "minor"),
            (12, 4, "flags"),
            (16, 4, "section count"),
            (20, 4, "entry size"),
            (24, 8, "file length"),
        ];
        if header_size >= 64 {
            header_fields.push((32, 32, "header hash"));
        }
        Layout {
            header_size,
            entry_size,
            dir_end,
            sections: view
                .sections()
                .into_iter()
                .map(|s| (s.name, s.offset as usize, s.size as usize))
                .collect(),
            header_fields,
        }
    }

    /// (coarse region for the counts, precise place for messages).
    fn region(&self, off: usize) -> (String, String) {
        if off < self.header_size {
            let field = self
                .header_fields
                .iter()
                .find(|(o, s, _)| (*o..o + s).contains(&off))
                .map_or("reserved", |f| f.2);
            return (format!("header.{field}"), format!("header {field}"));
        }
        if off < self.dir_end {
            let i = (off - self.header_size) / self.entry_size;
            let rel = (off - self.header_size) % self.entry_size;
            let field = match rel {
                0..4 => "kind",
                4..8 => "flags",
                8..16 => "offset",
                16..24 => "length",
                r if r < DIR_ENTRY_SIZE => "hash",
                _ => "extension",
            };
            let name = self.sections.get(i).map_or("?", |s| s.0.as_str());
            return (
                format!("dir[{name}].{field}"),
                format!("directory entry {i} ({name}) {field}, byte {rel}"),
            );
        }
        if let Some((name, o, _)) = self
            .sections
            .iter()
            .find(|(_, o, s)| (*o..o + s).contains(&off))
        {
            return (name.clone(), format!("section {name} +{}", off - o));
        }
        let before = self
            .sections
            .iter()
            .filter(|(_, o, s)| o + s <= off)
            .max_by_key(|(_, o, s)| o + s)
            .map_or("directory", |s| s.0.as_str());
        ("padding".to_string(), format!("padding after {before}"))
    }

    /// Whether a flip of the byte at `off` may be accepted at all: padding between sections
    /// (read by nobody), and the fields spec/format.md documents as ignored (header flags,
    /// directory flags of a known kind) or as compatible (the minor version). From 2.0 on the
    /// header hash makes every header and directory flip refused, leaving only padding.
    fn may_accept(&self, off: usize) -> bool {
        let (coarse, _) = self.region(off);
        coarse == "padding"
            || coarse == "header.flags"
            || coarse == "header.minor"
            || (coarse.starts_with("dir[") && coarse.ends_with("].flags"))
    }
}

// ---------------------------------------------------------------------------------------------
// Readers and links

/// A reader's answer: `Err(cause)` when it refuses; `ir-dis` accepts with the module it read,
/// rewritten.
type Answer = Result<Option<Vec<u8>>, String>;

/// The whole-module readers: name, and `Err(cause)` when it refuses the bytes; `ir-dis`
/// answers `Ok(Some(bytes))`, the module it read rewritten, to compare with the original.
fn readers(bytes: &[u8]) -> Vec<(&'static str, Answer)> {
    let s = |e: irkit_format::ReadError| e.to_string();
    // `ir-info --validate`: open named, then validate everything.
    let info = ModuleView::from_bytes_named(bytes, "m.irm")
        .and_then(|v| v.validate_all())
        .map(|()| None)
        .map_err(s);
    // `ir-dis`: open and materialize (the rewritten bytes show what it read).
    let materialized = ModuleView::from_bytes(bytes).and_then(|v| v.materialize());
    let dis = match &materialized {
        Ok(m) => irkit_format::write(m)
            .map(Some)
            .map_err(|e| format!("rewrite: {e}")),
        Err(e) => Err(e.to_string()),
    };
    // `ir-verify`: materialize, then the verifier.
    let verify = match &materialized {
        Ok(m) => irkit_core::verify::verify(m)
            .map(|()| None)
            .map_err(|errs| format!("verifier: {} problems", errs.len())),
        Err(e) => Err(e.to_string()),
    };
    vec![
        ("validate_all (ir-info --validate)", info),
        ("materialize (ir-dis)", dis),
        ("materialize+verify (ir-verify)", verify),
    ]
}

/// One link configuration of a module under test.
struct LinkCase {
    label: &'static str,
    library: bool,
    /// Other (unflipped) inputs: (name, bytes).
    others: Vec<(&'static str, Vec<u8>)>,
}

fn run_link(name: &str, bytes: &[u8], case: &LinkCase) -> Result<Vec<u8>, String> {
    let mut inputs = vec![Input::from_bytes(name, bytes).map_err(|e| e.to_string())?];
    for (n, b) in &case.others {
        inputs.push(Input::from_bytes(n, b).map_err(|e| e.to_string())?);
    }
    let opts = LinkOptions {
        library: case.library,
        ..LinkOptions::default()
    };
    let linked = link(inputs, &opts).map_err(|e| e.to_string())?;
    irkit_format::write(&linked.module).map_err(|e| format!("writing the linked module: {e}"))
}

// ---------------------------------------------------------------------------------------------
// The sweep

#[derive(Default)]
struct Counts {
    flips: usize,
    refused: usize,
    accepted: usize,
    /// Per link case: failed, identical, different.
    links: Vec<[usize; 3]>,
}

struct Failure {
    class: &'static str,
    region: String,
    text: String,
}

struct Module {
    /// Name of the input, as the linker sees it.
    name: &'static str,
    bytes: Vec<u8>,
    links: Vec<LinkCase>,
}

fn module(rel: &str, name: &'static str, others: &[(&'static str, &str)]) -> Module {
    let bytes = assemble(rel);
    let view = ModuleView::from_bytes(&bytes).unwrap_or_else(|e| panic!("{e}"));
    let has_main = view
        .try_find_export("main")
        .unwrap_or_else(|e| panic!("{e}"))
        .is_some();
    assert!(view.has_debug(), "{rel}: the sweep wants a debug section");
    let mut links = vec![LinkCase {
        label: "lib",
        library: true,
        others: Vec::new(),
    }];
    if has_main && others.is_empty() {
        links.push(LinkCase {
            label: "exe",
            library: false,
            others: Vec::new(),
        });
    }
    if !others.is_empty() {
        let others: Vec<_> = others.iter().map(|(n, r)| (*n, assemble(r))).collect();
        links.push(LinkCase {
            label: "exe+other half",
            library: false,
            others,
        });
    }
    Module { name, bytes, links }
}

fn sweep(m: &Module) {
    let layout = Layout::of(&m.bytes);
    let baseline: Vec<Vec<u8>> = m
        .links
        .iter()
        .map(|c| {
            run_link(m.name, &m.bytes, c).unwrap_or_else(|e| {
                panic!("{}: {} link of the unflipped file: {e}", m.name, c.label)
            })
        })
        .collect();
    let mut base_dis = None;
    for (r, res) in readers(&m.bytes) {
        match res {
            Ok(Some(out)) => base_dis = Some(out),
            Ok(None) => {}
            Err(e) => panic!("{}: {r} refuses the unflipped file: {e}", m.name),
        }
    }
    let base_dis = base_dis.expect("ir-dis rewrites the unflipped module");

    let mut counts: BTreeMap<String, Counts> = BTreeMap::new();
    let mut failures: Vec<Failure> = Vec::new();
    // (offset, bit, coarse region, place) of every flip all readers accept.
    let mut accepted: Vec<(usize, u8, String, String)> = Vec::new();
    let mut flipped = m.bytes.clone();
    for off in 0..m.bytes.len() {
        let (coarse, place) = layout.region(off);
        for bit in 0..8u8 {
            flipped[off] ^= 1 << bit;
            let at = format!("{}: offset {off} bit {bit} ({place})", m.name);
            let c = counts.entry(coarse.clone()).or_default();
            c.links.resize(m.links.len(), [0; 3]);
            c.flips += 1;
            let mut fail = |class, text| {
                failures.push(Failure {
                    class,
                    region: coarse.clone(),
                    text,
                })
            };

            let answers = readers(&flipped);
            let refused = answers.iter().all(|(_, r)| r.is_err());
            let accepted_by_all = answers.iter().all(|(_, r)| r.is_ok());
            let mut said = String::new();
            for (r, res) in &answers {
                let _ = match res {
                    Ok(_) => write!(said, "\n    {r}: accepts"),
                    Err(e) => write!(said, "\n    {r}: refuses: {e}"),
                };
            }
            if refused {
                c.refused += 1;
            } else if accepted_by_all {
                c.accepted += 1;
                accepted.push((off, bit, coarse.clone(), place.clone()));
                if !layout.may_accept(off) {
                    fail(
                        "accepted outside padding and ignored fields",
                        format!("{at}: every reader accepts the flip"),
                    );
                }
                // What ir-dis read must be what was written.
                if let Some((_, Ok(Some(out)))) = answers.get(1)
                    && *out != base_dis
                {
                    fail(
                        "accepted, and ir-dis reads a different module",
                        format!(
                            "{at}: the module materialized from the flipped file rewrites to \
                             {} bytes, the original to {}",
                            out.len(),
                            base_dis.len()
                        ),
                    );
                }
            } else {
                fail(
                    "readers disagree",
                    format!("{at}: the whole-module readers disagree:{said}"),
                );
            }

            for (k, (case, base)) in m.links.iter().zip(&baseline).enumerate() {
                let got = run_link(m.name, &flipped, case);
                let outcome = match &got {
                    Err(_) => 0,
                    Ok(b) if b == base => 1,
                    Ok(_) => 2,
                };
                c.links[k][outcome] += 1;
                let verdict = if refused {
                    "refused by every reader"
                } else if accepted_by_all {
                    "accepted by every reader"
                } else {
                    "readers disagree"
                };
                if outcome == 2 {
                    fail(
                        "SILENT CHANGE: a link succeeds with different bytes",
                        format!(
                            "{at}: {verdict}; {} link succeeds with different bytes ({} \
                             bytes, unflipped {}):{said}",
                            case.label,
                            got.as_ref().map_or(0, Vec::len),
                            base.len()
                        ),
                    );
                } else if outcome == 0 && accepted_by_all {
                    fail(
                        "accepted by every reader, refused by the linker",
                        format!(
                            "{at}: {} link fails: {}",
                            case.label,
                            got.err().unwrap_or_default()
                        ),
                    );
                }
            }
            flipped[off] ^= 1 << bit;
        }
    }

    let total: usize = counts.values().map(|c| c.flips).sum();
    report(m, &counts, &accepted, &failures);
    assert!(
        failures.is_empty(),
        "{}: {} of {total} flips break the rule (classes in the report above)",
        m.name,
        failures.len()
    );
    // Nobody passes by accepting everything.
    assert!(
        accepted.len() * 10 <= total,
        "{}: {} of {total} flips accepted: too many to be harmless",
        m.name,
        accepted.len()
    );
}

fn report(
    m: &Module,
    counts: &BTreeMap<String, Counts>,
    accepted: &[(usize, u8, String, String)],
    failures: &[Failure],
) {
    let mut s = String::new();
    let total: usize = counts.values().map(|c| c.flips).sum();
    let _ = writeln!(
        s,
        "== {}: {} bytes, {total} flips; links (failed/identical/DIFFERENT): {}",
        m.name,
        m.bytes.len(),
        m.links
            .iter()
            .map(|c| c.label)
            .collect::<Vec<_>>()
            .join(", ")
    );
    let _ = write!(
        s,
        "{:<30} {:>6} {:>8} {:>8}",
        "region", "flips", "refused", "accepted"
    );
    for case in &m.links {
        let _ = write!(s, " {:>16}", case.label);
    }
    let _ = writeln!(s);
    for (r, c) in counts {
        let _ = write!(
            s,
            "{r:<30} {:>6} {:>8} {:>8}",
            c.flips, c.refused, c.accepted
        );
        for [f, i, d] in &c.links {
            let _ = write!(s, " {:>16}", format!("{f}/{i}/{d}"));
        }
        let _ = writeln!(s);
    }
    // Accepted flips as byte ranges per region.
    let _ = writeln!(s, "accepted flips: {} of {total}", accepted.len());
    let mut runs: Vec<(String, usize, usize, usize)> = Vec::new();
    for (off, _, coarse, place) in accepted {
        let what = if coarse == "padding" {
            place.clone()
        } else {
            coarse.clone()
        };
        match runs.last_mut() {
            Some((w, _, end, n)) if *w == what && (*off == *end || *off == *end + 1) => {
                *end = *off;
                *n += 1;
            }
            _ => runs.push((what, *off, *off, 1)),
        }
    }
    for (what, start, end, n) in runs {
        let _ = writeln!(s, "  {what}: bytes {start}..={end}, {n} flips");
    }
    // Failures by class and region, with the first example of each.
    let mut classes: BTreeMap<(&str, &str), (usize, &str)> = BTreeMap::new();
    for f in failures {
        classes
            .entry((f.class, f.region.as_str()))
            .or_insert((0, f.text.as_str()))
            .0 += 1;
    }
    let _ = writeln!(s, "failure classes: {}", classes.len());
    for ((class, region), (n, first)) in &classes {
        let _ = writeln!(s, "  [{region}] {class}: {n} flips; first: {first}");
    }
    eprintln!("{s}");
}

#[test]
fn bitflip_fib_recursive() {
    sweep(&module("fib_recursive.ir", "fib.irm", &[]));
}

#[test]
fn bitflip_memory() {
    sweep(&module("memory.ir", "memory.irm", &[]));
}

#[test]
fn bitflip_two_module_lib() {
    sweep(&module(
        "two_module/lib.ir",
        "lib.irm",
        &[("main.irm", "two_module/main.ir")],
    ));
}

#[test]
fn bitflip_two_module_main() {
    sweep(&module(
        "two_module/main.ir",
        "main.irm",
        &[("lib.irm", "two_module/lib.ir")],
    ));
}
