//! `ModuleView::copy_def` copies definitions faithfully: copying every definition of a module
//! (with an identity mapping of the pool and the definitions) rebuilds a module equal to the
//! materialized one, name hints and source locations included. And planning every copy first
//! (`DefCopier::plan`), then building them all at once on every core (`build_copies`), builds
//! what copying one definition at a time (`DefCopier::copy`) builds, asking the mapper the
//! same questions in the same order.

use irkit_core::{Inst, Module, Opcode, Payload, Slots};
use irkit_format::{CopyMapper, DefIndex, InstView, ModuleView, PoolIndex, ReadError, Ref};

struct Identity {
    pool: Vec<Inst>,
    defs: Vec<Inst>,
}

impl CopyMapper for Identity {
    type Error = ReadError;
    fn pool(&mut self, _: &mut Module, index: PoolIndex) -> Result<Inst, ReadError> {
        Ok(self.pool[index.idx()])
    }
    fn def(&mut self, _: &mut Module, index: DefIndex) -> Result<Inst, ReadError> {
        Ok(self.defs[index.idx()])
    }
}

/// A module with one empty instruction per definition of `view` and its pool interned, and
/// the identity mapping onto them.
fn destination(view: &ModuleView) -> (Module, Identity) {
    let mut dst = Module::new();
    let root = dst.root();
    let defs: Vec<Inst> = (0..view.def_count())
        .map(|i| {
            let op = view.def_opcode(i).expect("opcode");
            let d = dst.new_inst(op, None, Vec::new(), Payload::None).unwrap();
            dst.append_child(root, d).unwrap();
            d
        })
        .collect();
    let pool = view.pool().unwrap();
    let mut interned = Vec::new();
    for i in 0..pool.len() {
        let e = pool.get(i).unwrap();
        let map = |r: Ref| match r {
            Ref::Pool(p) => interned[p.idx()],
            Ref::Def(d) => defs[d.idx()],
            Ref::Local(_) => unreachable!("no locals in the pool"),
        };
        let ty = e.ty().map(map);
        let ops: Vec<Inst> = e.operands().map(map).collect();
        let inst = dst
            .intern(e.opcode(), ty, &ops, e.payload().to_payload())
            .unwrap();
        interned.push(inst);
    }
    let map = Identity {
        pool: interned,
        defs,
    };
    (dst, map)
}

fn copy_all(view: &ModuleView) -> Module {
    let (mut dst, mut map) = destination(view);
    let copier = view.copier(true).unwrap();
    for (i, d) in map.defs.clone().into_iter().enumerate() {
        copier
            .copy(view.def(i as u32).unwrap(), &mut dst, d, &mut map)
            .unwrap();
    }
    dst
}

/// The identity mapping, writing down every question it is asked about the pool, other
/// definitions and a definition's own decorations; with `drop_exports`, it drops a
/// definition's own `export` decorations (as `--internalize` does).
struct Recording {
    inner: Identity,
    drop_exports: bool,
    asked: Vec<String>,
}

impl CopyMapper for Recording {
    type Error = ReadError;
    fn pool(&mut self, dst: &mut Module, index: PoolIndex) -> Result<Inst, ReadError> {
        self.asked.push(format!("pool {index}"));
        self.inner.pool(dst, index)
    }
    fn def(&mut self, dst: &mut Module, index: DefIndex) -> Result<Inst, ReadError> {
        self.asked.push(format!("def {index}"));
        self.inner.def(dst, index)
    }
    fn keep_decoration(&mut self, _: &mut Module, deco: InstView<'_>) -> Result<bool, ReadError> {
        self.asked.push(format!("keep {}", deco.local()));
        Ok(!(self.drop_exports && deco.opcode() == Opcode::EXPORT))
    }
}

/// Every definition of `view` copied one at a time (`planned` false) or all planned, then
/// built at once: the module, and the mapper's questions.
fn copy_recorded(view: &ModuleView, planned: bool, drop_exports: bool) -> (Module, Vec<String>) {
    let (mut dst, inner) = destination(view);
    let defs = inner.defs.clone();
    let mut map = Recording {
        inner,
        drop_exports,
        asked: Vec::new(),
    };
    let copier = view.copier(true).unwrap();
    let mut plans = Vec::new();
    for (i, &d) in defs.iter().enumerate() {
        let def = view.def(i as u32).unwrap();
        map.asked.push(format!("definition {i}"));
        if planned {
            plans.push(copier.plan(def, &mut dst, d, &mut map).unwrap());
        } else {
            copier.copy(def, &mut dst, d, &mut map).unwrap();
        }
    }
    if planned {
        irkit_format::build_copies(&mut dst, Slots::default(), &plans).unwrap();
    }
    (dst, map.asked)
}

/// The example files and the round-trip cases (generics, every payload kind): modules with
/// decorations, nested decorations, names and locations.
fn sample_files() -> Vec<std::path::PathBuf> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    for dir in [
        root.join("examples"),
        root.join("examples/two_module"),
        root.join("tests/cases/roundtrip"),
    ] {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "ir") {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

#[test]
fn planned_copies_build_what_the_copy_builds() {
    let mut compared = 0;
    for p in sample_files() {
        let text = std::fs::read_to_string(&p).unwrap();
        let Ok(m) = irkit_text::parse(&text, "x.ir") else {
            continue;
        };
        let bytes = irkit_format::write(&m).unwrap();
        let view = ModuleView::from_bytes(&bytes).unwrap();
        for drop_exports in [false, true] {
            let (serial, asked_serial) = copy_recorded(&view, false, drop_exports);
            let (planned, asked_planned) = copy_recorded(&view, true, drop_exports);
            let at = format!("{} (drop exports: {drop_exports})", p.display());
            if let Err(e) = irkit_core::equiv::modules_equal(&serial, &planned) {
                panic!("{at}: {e}");
            }
            assert_eq!(asked_serial, asked_planned, "{at}");
            assert_eq!(
                irkit_format::write(&serial).ok(),
                irkit_format::write(&planned).ok(),
                "{at}"
            );
            compared += 1;
        }
    }
    assert!(compared > 20, "{compared} modules compared");
}

#[test]
fn copying_every_definition_rebuilds_the_module() {
    let files = sample_files();
    assert!(!files.is_empty());
    for p in files {
        let text = std::fs::read_to_string(&p).unwrap();
        let Ok(m) = irkit_text::parse(&text, "x.ir") else {
            continue;
        };
        let bytes = irkit_format::write(&m).unwrap();
        let view = ModuleView::from_bytes(&bytes).unwrap();
        let materialized = view.materialize().unwrap();
        let copied = copy_all(&view);
        if let Err(e) = irkit_core::equiv::modules_equal(&materialized, &copied) {
            panic!("{}: {e}", p.display());
        }
        // And the copy writes the same bytes.
        assert_eq!(
            irkit_format::write(&copied).unwrap(),
            bytes,
            "{}",
            p.display()
        );
    }
}

/// Bodies of 1.x and 2.x files (flat, without a table of external references) are copied
/// the same way: one at a time or all planned then built at once, the same module and the
/// same questions, each pool value or definition asked about once per copy; and copying every
/// definition rebuilds the materialized module.
#[test]
fn flat_bodies_are_copied_like_compact_ones() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden");
    let mut compared = 0;
    for version in ["v1.0", "v1.1", "v1.2", "v2.0", "v2.1"] {
        let Ok(dir) = std::fs::read_dir(root.join(version)) else {
            continue;
        };
        let mut files: Vec<_> = dir
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "irm"))
            .collect();
        files.sort();
        for p in files {
            let bytes = std::fs::read(&p).unwrap();
            let view = ModuleView::from_bytes(&bytes).unwrap();
            let at = p.display().to_string();
            if let Err(e) =
                irkit_core::equiv::modules_equal(&view.materialize().unwrap(), &copy_all(&view))
            {
                panic!("{at}: {e}");
            }
            for drop_exports in [false, true] {
                let (one, asked_one) = copy_recorded(&view, false, drop_exports);
                let (all, asked_all) = copy_recorded(&view, true, drop_exports);
                if let Err(e) = irkit_core::equiv::modules_equal(&one, &all) {
                    panic!("{at}: {e}");
                }
                assert_eq!(asked_one, asked_all, "{at}");
                for copy in asked_one.split(|q| q.starts_with("definition ")) {
                    let mut refs: Vec<&String> =
                        copy.iter().filter(|q| !q.starts_with("keep")).collect();
                    let n = refs.len();
                    refs.sort();
                    refs.dedup();
                    assert_eq!(refs.len(), n, "{at}: {copy:?}");
                }
            }
            compared += 1;
        }
    }
    assert!(compared >= 5, "{compared} old files compared");
}

/// A copy's refusal or a mapper's refusal to answer.
#[derive(Debug)]
enum Refused {
    Read(ReadError),
    Asked,
}

impl From<ReadError> for Refused {
    fn from(e: ReadError) -> Self {
        Refused::Read(e)
    }
}

/// A mapper that answers nothing.
struct Mute;

impl CopyMapper for Mute {
    type Error = Refused;
    fn pool(&mut self, _: &mut Module, _: PoolIndex) -> Result<Inst, Refused> {
        Err(Refused::Asked)
    }
    fn def(&mut self, _: &mut Module, _: DefIndex) -> Result<Inst, Refused> {
        Err(Refused::Asked)
    }
}

/// What the debug section makes impossible (a record past the end of its instruction's
/// decoration list, `tests/crafted/debug_position_gap`) is refused by the plan, before the
/// mapper is asked about any reference.
#[test]
fn a_debug_record_past_its_list_is_refused_before_any_question() {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/crafted/debug_position_gap.irm");
    let bytes = std::fs::read(p).unwrap();
    let view = ModuleView::from_bytes(&bytes).unwrap();
    let mut refused = Vec::new();
    for i in 0..view.def_count() {
        let mut dst = Module::new();
        let op = view.def_opcode(i).unwrap();
        let target = dst.new_inst(op, None, Vec::new(), Payload::None).unwrap();
        if let Err(Refused::Read(e)) = view.copy_def(i, &mut dst, target, true, &mut Mute) {
            refused.push(e.to_string());
        }
    }
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert!(
        refused[0].contains("but the decoration list ends at"),
        "{refused:?}"
    );
}
