//! The writer encodes each definition right after its walk (spec/format.md §5, "Writing"),
//! numbering its pool references once every walk is done. What it writes must not depend on
//! that: for every module the repository's text files hold (valid ones, and the verifier's
//! invalid cases), and for modules whose references the one pass meets before the walk that
//! numbers their targets, `irkit_format::write` gives the bytes, or the error, of the writer
//! that walks every definition first and encodes them after.

use std::path::{Path, PathBuf};

use irkit_core::{Module, Opcode, Payload};
use irkit_hostile::write_two_pass;

fn ir_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            ir_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "ir") {
            out.push(p);
        }
    }
}

/// `write` and the two-pass writer agree on `m`.
fn agree(m: &Module, what: &str) {
    match (irkit_format::write(m), write_two_pass(m)) {
        (Ok(a), Ok(b)) => assert!(a == b, "{what}: the bytes differ"),
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{what}: the errors differ"),
        (a, b) => panic!(
            "{what}: one writer failed: {:?} / {:?}",
            a.err().map(|e| e.to_string()),
            b.err().map(|e| e.to_string())
        ),
    }
}

#[test]
fn every_text_module_is_written_alike_in_one_pass_and_in_two() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for dir in ["tests", "examples", "fuzz/corpus/parse"] {
        ir_files(&root.join(dir), &mut files);
    }
    files.sort();
    let mut written = 0;
    for f in &files {
        let Ok(text) = std::fs::read_to_string(f) else {
            continue;
        };
        let Ok(m) = irkit_text::parse(&text, &f.display().to_string()) else {
            continue;
        };
        agree(&m, &f.display().to_string());
        written += 1;
    }
    assert!(written > 200, "only {written} text modules parsed");
}

/// Two functions, each returning a constant of its own; the first is then made to refer to
/// something it may not (`retarget`), which the one pass may meet before the walk of its
/// target's definition, or before the root's.
fn two_functions(retarget: impl FnOnce(&mut Module, [irkit_core::Inst; 2])) -> Module {
    let src = "@f: fn() -> i32 = func {\n^entry:\n  %a: i32 = iadd i32 1, i32 2\n  ret %a\n}\n\
               @g: fn() -> i32 = func {\n^entry:\n  %b: i32 = iadd i32 3, i32 4\n  ret %b\n}\n";
    let mut m = irkit_text::parse(src, "two.ir").expect("parses");
    let adds: Vec<_> = (0..m.arena_len() as u32)
        .map(irkit_core::Inst::from_index)
        .filter(|&i| m.get(i).is_some_and(|d| d.opcode() == Opcode::IADD))
        .collect();
    retarget(&mut m, [adds[0], adds[1]]);
    m
}

#[test]
fn a_reference_the_writer_refuses_is_refused_alike() {
    // Into another definition's body.
    let m = two_functions(|m, [a, b]| {
        let ops = m.operands(a).to_vec();
        m.set_operands(a, vec![b, ops[1]]).expect("settable");
    });
    agree(&m, "a reference into another definition");
    assert!(irkit_format::write(&m).is_err());
    // To a detached instruction.
    let m = two_functions(|m, [a, _]| {
        let ty = m.ty(a);
        let ops = m.operands(a).to_vec();
        let loose = m
            .new_inst(Opcode::IADD, ty, &ops, Payload::None)
            .expect("creatable");
        m.set_operands(a, vec![loose, ops[1]]).expect("settable");
    });
    agree(&m, "a reference to a detached instruction");
    assert!(irkit_format::write(&m).is_err());
    // To one of the root's decorations.
    let m = two_functions(|m, [a, _]| {
        let root = m.root();
        let deco = m
            .add_decoration(root, Opcode::NAME_HINT, vec![], Payload::Str("r".into()))
            .expect("attachable");
        let ops = m.operands(a).to_vec();
        m.set_operands(a, vec![deco, ops[1]]).expect("settable");
    });
    agree(&m, "a reference to a root decoration");
    assert!(irkit_format::write(&m).is_err());
}
