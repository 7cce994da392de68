//! `ModuleView::copy_def` copies definitions faithfully: copying every definition of a module
//! (with an identity mapping of the pool and the definitions) rebuilds a module equal to the
//! materialized one, name hints and source locations included.

use irkit_core::{Inst, Module, Payload};
use irkit_format::{CopyMapper, ModuleView, ReadError, Ref};

struct Identity {
    pool: Vec<Inst>,
    defs: Vec<Inst>,
}

impl CopyMapper for Identity {
    type Error = ReadError;
    fn pool(&mut self, _: &mut Module, index: u32) -> Result<Inst, ReadError> {
        Ok(self.pool[index as usize])
    }
    fn def(&mut self, _: &mut Module, index: u32) -> Result<Inst, ReadError> {
        Ok(self.defs[index as usize])
    }
}

fn copy_all(view: &ModuleView) -> Module {
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
            Ref::Pool(p) => interned[p as usize],
            Ref::Def(d) => defs[d as usize],
            Ref::Local(_) => unreachable!("no locals in the pool"),
        };
        let ty = e.ty().map(map);
        let ops: Vec<Inst> = e.operands().map(map).collect();
        let inst = dst
            .intern(e.opcode(), ty, &ops, e.payload().to_payload())
            .unwrap();
        interned.push(inst);
    }
    let mut map = Identity {
        pool: interned,
        defs: defs.clone(),
    };
    let copier = view.copier(true).unwrap();
    for (i, &d) in defs.iter().enumerate() {
        copier
            .copy(view.def(i as u32).unwrap(), &mut dst, d, &mut map)
            .unwrap();
    }
    dst
}

#[test]
fn copying_every_definition_rebuilds_the_module() {
    let examples = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut files = Vec::new();
    for dir in [examples.clone(), examples.join("two_module")] {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "ir") {
                files.push(p);
            }
        }
    }
    files.sort();
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
