//! No input makes the linker panic: every single-byte corruption of a small module (at many
//! positions, with several values) either still links or is reported as errors, and the
//! outcome (the output, or every error in order) is the same on one thread as on three.

use irkit_link::{Input, LinkOptions, link};

const LIB: &str = r#"
#[export("counter"), pin(@reset)]
@counter: i32 = global_var i32 40

#[export("reset")]
@reset: fn() -> void = func {
^entry:
  store @counter, i32 0
  ret
}

#[export("add"), pin_if(@reset, @counter), pin_weak(@maybe)]
@add: fn(i32, i32) -> i32 = func {
^entry(%a: i32, %b: i32):
  %s: i32 = iadd %a, %b
  %c: i1 = icmp slt %s, i32 0
  br %c, ^neg(%s), ^pos
^neg(%x: i32):
  %n: i32 = isub i32 0, %x
  ret %n
^pos:
  ret %s
}

#[import("maybe")]
@maybe: fn() -> void = func

#[export("square"), linkonce]
@square: fn(i32) -> i32 = func {
^entry(%x: i32):
  %r: i32 = imul %x, %x
  ret %r
}
"#;

const MAIN: &str = r#"
#[import("add")]
@add: fn(i32, i32) -> i32 = func

#[import("counter")]
@counter: i32 = global_var

#[export("main")]
@main: fn() -> i32 = func {
^entry:
  %c: i32 = load @counter
  %r: i32 = call @add(%c, i32 2)
  ret %r
}
"#;

#[test]
fn corrupted_inputs_never_panic() {
    let lib = irkit_text::parse(LIB, "lib.ir").expect("lib parses");
    let bytes = irkit_format::write(&lib).expect("lib encodes");
    let step = (bytes.len() / 600).max(1);
    let mut outcomes = [0usize; 3];
    for at in (0..bytes.len()).step_by(step) {
        for flip in [0x01u8, 0x80, 0xff] {
            let mut b = bytes.clone();
            b[at] ^= flip;
            if Input::from_bytes("lib.irm", &b).is_err() {
                outcomes[0] += 1;
                continue;
            }
            for library in [false, true] {
                let opts = LinkOptions {
                    library,
                    exports: vec!["square".into()],
                    ..LinkOptions::default()
                };
                // Work split over threads (verification, writing) changes nothing: the same
                // output, or the same errors in the same order.
                let outcome = |threads: usize| {
                    let pool = rayon::ThreadPoolBuilder::new()
                        .num_threads(threads)
                        .build()
                        .expect("a thread pool");
                    let lib = Input::from_bytes("lib.irm", &b).expect("opened before");
                    let main = text_input("main.ir", MAIN).expect("main parses");
                    pool.install(|| link(vec![lib, main], &opts))
                        .map(|l| irkit_format::write(&l.module).expect("linked module encodes"))
                        .map_err(|e| e.to_string())
                };
                let result = outcome(3);
                assert_eq!(result, outcome(1), "flip {flip:#04x} at {at}");
                match result {
                    Ok(_) => outcomes[1] += 1,
                    Err(e) => {
                        outcomes[2] += 1;
                        assert!(!e.is_empty());
                        for line in e.lines() {
                            assert!(line.starts_with("error: "), "{line}");
                        }
                    }
                }
            }
        }
    }
    // Both outcomes happen: the corruption is not always fatal, nor always harmless.
    assert!(outcomes[1] > 0 && outcomes[2] > 0, "{outcomes:?}");
}

/// A `.ir` text input, parsed and encoded in memory as `ir-link` does.
fn text_input(name: &str, text: &str) -> Result<Input, String> {
    let module = irkit_text::parse(text, name).map_err(|e| e.to_string())?;
    Input::from_module(name, &module).map_err(|e| e.to_string())
}

/// Where definition `i`'s body lies in the file (bodies are packed in index order in the
/// definitions section).
fn body_range(view: &irkit_format::ModuleView, i: u32) -> std::ops::Range<u64> {
    let defs = view
        .sections()
        .into_iter()
        .find(|s| s.name == "definitions")
        .expect("a definitions section");
    let before: u64 = (0..i).map(|d| view.def_info(d).expect("a def").size).sum();
    defs.offset + before..defs.offset + before + view.def_info(i).expect("a def").size
}

/// Links file `name` (bytes `b`) alone on a pool of `threads`: the output's bytes, or every
/// error as one text.
fn link_bytes(name: &str, b: &[u8], threads: usize) -> Result<Vec<u8>, String> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a thread pool");
    let input = Input::from_bytes(name, b).expect("opens");
    pool.install(|| link(vec![input], &LinkOptions::default()))
        .map(|l| irkit_format::write(&l.module).expect("linked module encodes"))
        .map_err(|e| e.to_string())
}

/// A definition nothing reaches is never reported, whoever validates it: a spare thread
/// validates input definitions ahead of the copy (the linker's `ahead.rs`), and its verdicts
/// stay unreported unless the copy reaches the definition. A broken definition that is
/// reached is reported once, the same on one thread as on three.
#[test]
fn definitions_validated_ahead_are_reported_only_when_reached() {
    let mut text = String::from(
        "#[export(\"main\")]\n@main: fn() -> i32 = func {\n^entry:\n  %r: i32 = call @f0()\n  ret %r\n}\n",
    );
    // A chain `f0` -> … -> `f149` to copy, long enough for the spare thread to get past it
    // (validating is much cheaper than copying), then `f150` … `f199`, which nothing reaches.
    for k in 0..200 {
        let body = if k < 149 {
            format!("%r: i32 = call @f{}()\n  ret %r", k + 1)
        } else {
            format!("ret i32 {k}")
        };
        text += &format!("@f{k}: fn() -> i32 = func {{\n^entry:\n  {body}\n}}\n");
    }
    let module = irkit_text::parse(&text, "many.ir").expect("parses");
    let bytes = irkit_format::write(&module).expect("encodes");
    let view = irkit_format::ModuleView::from_bytes(&bytes).expect("opens");
    // Bodies are packed in module order: `main`, `f0`, …, `f199` (unreached) last.
    let body_of = |i: u32| body_range(&view, i);
    let link_with = |b: &[u8], threads: usize| link_bytes("many.irm", b, threads);
    let clean = link_with(&bytes, 1).expect("links");
    let last = body_of(view.def_count() - 1);
    let mut broken = bytes.clone();
    broken[(last.start + last.end) as usize / 2] ^= 0x40;
    for threads in [1, 3] {
        assert_eq!(
            link_with(&broken, threads).as_ref(),
            Ok(&clean),
            "{threads} threads"
        );
    }
    let reached = body_of(1);
    let mut broken = bytes.clone();
    broken[(reached.start + reached.end) as usize / 2] ^= 0x40;
    let one = link_with(&broken, 1).expect_err("a reached definition is broken");
    assert_eq!(one.lines().count(), 1, "{one}");
    assert!(one.contains("definition 1: hash mismatch"), "{one}");
    assert_eq!(link_with(&broken, 3), Err(one));
}

/// Where the opcode of the first `opcode` instruction of definition `def` lies in `bytes`
/// (spec/format.md §2.4: a compact body's opcodes follow its header and its external
/// references).
fn opcode_at(bytes: &[u8], def: u32, opcode: irkit_core::Opcode) -> usize {
    let view = irkit_format::ModuleView::from_bytes(bytes).expect("opens");
    let start = body_range(&view, def).start as usize;
    let body = &bytes[start..];
    let w = usize::from(body[0]);
    let small = |at: usize| match w {
        2 => usize::from(u16::from_le_bytes([body[at], body[at + 1]])),
        _ => u32::from_le_bytes([body[at], body[at + 1], body[at + 2], body[at + 3]]) as usize,
    };
    let (n, k) = (small(w), small(2 * w));
    let opcodes = start + 7 * w + 4 * k;
    (0..n)
        .map(|l| opcodes + 2 * l)
        .find(|&at| irkit_core::Opcode(u16::from_le_bytes([bytes[at], bytes[at + 1]])) == opcode)
        .expect("the opcode is in the body")
}

/// `bytes` with the opcode at `at` replaced by `opcode`, every hash recomputed.
fn with_opcode(bytes: &[u8], at: usize, opcode: irkit_core::Opcode) -> Vec<u8> {
    let mut broken = bytes.to_vec();
    broken[at..at + 2].copy_from_slice(&opcode.0.to_le_bytes());
    irkit_hostile::reseal(&mut broken);
    broken
}

/// A definition the linker copies on every core (a plan made during the walk, the body built
/// afterwards) but whose body cannot be built (a well-sealed file with an instruction no body
/// may hold) is reported as the copy of that one definition reports it, where the walk
/// planned it: the errors are the same, in the same order, on one thread as on three.
#[test]
fn a_body_the_parallel_copy_refuses_is_reported_as_the_copy_reports_it() {
    let text = "#[export(\"main\")]\n@main: fn() -> i32 = func {\n^entry:\n  %r: i32 = call @f(i32 2)\n  ret %r\n}\n\
                @f: fn(i32) -> i32 = func {\n^entry(%x: i32):\n  %a: i32 = iadd %x, %x\n  %b: i32 = imul %a, %x\n  ret %b\n}\n";
    let module = irkit_text::parse(text, "two.ir").expect("parses");
    let bytes = irkit_format::write(&module).expect("encodes");
    let link_with = |b: &[u8], threads: usize| link_bytes("two.irm", b, threads);
    assert!(link_with(&bytes, 3).is_ok());
    // `@f` is definition 1.
    let iadd = opcode_at(&bytes, 1, irkit_core::Opcode::IADD);
    for (opcode, says) in [
        (irkit_core::Opcode::CONST_INT, "is hoistable: use `intern`"),
        (
            irkit_core::Opcode::NAME_HINT,
            "decorations go in the decoration list",
        ),
    ] {
        let broken = with_opcode(&bytes, iadd, opcode);
        let one = link_with(&broken, 1).expect_err("the body cannot be copied");
        assert!(one.contains(says), "{opcode}: {one}");
        assert!(one.contains("definition 1: instruction"), "{opcode}: {one}");
        assert_eq!(link_with(&broken, 3), Err(one), "{opcode}");
    }
}

/// Every refused body is reported, in walk order, each where the walk planned it: after what
/// the questions about the definition's own decorations reported, before what the questions
/// about its references reported (spec/linking.md §5, "Copying on every core"). The plan has
/// asked about the references, so a refused body's missing callee is reported too.
#[test]
fn refused_bodies_are_reported_where_the_walk_planned_them() {
    let text = r#"
#[export("main")]
@main: fn() -> i32 = func {
^entry:
  %a: i32 = call @f(i32 2)
  %b: i32 = call @g(i32 3)
  %r: i32 = isub %a, %b
  ret %r
}
@f: fn(i32) -> i32 = func {
^entry(%x: i32):
  %a: i32 = iadd %x, %x
  %m: i32 = call @missing()
  %b: i32 = imul %a, %m
  ret %b
}
@g: fn(i32) -> i32 = func {
^entry(%x: i32):
  %a: i32 = iadd %x, %x
  ret %a
}
#[import("missing")]
@missing: fn() -> i32 = func
"#;
    let module = irkit_text::parse(text, "three.ir").expect("parses");
    let bytes = irkit_format::write(&module).expect("encodes");
    let link_with = |b: &[u8], threads: usize| link_bytes("three.irm", b, threads);
    let intact = link_with(&bytes, 1).expect_err("@missing is undefined");
    assert_eq!(intact.lines().count(), 1, "{intact}");
    // `@f` and `@g` are definitions 1 and 2: both refused.
    let hoistable = irkit_core::Opcode::CONST_INT;
    let broken = with_opcode(
        &bytes,
        opcode_at(&bytes, 1, irkit_core::Opcode::IADD),
        hoistable,
    );
    let broken = with_opcode(
        &broken,
        opcode_at(&broken, 2, irkit_core::Opcode::IADD),
        hoistable,
    );
    let one = link_with(&broken, 1).expect_err("two bodies cannot be copied");
    let lines: Vec<&str> = one.lines().collect();
    assert_eq!(lines.len(), 3, "{one}");
    assert!(lines[0].contains("definition 1: instruction"), "{one}");
    assert!(lines[0].contains("is hoistable"), "{one}");
    assert_eq!(lines[1], intact, "{one}");
    assert!(lines[2].contains("definition 2: instruction"), "{one}");
    assert_eq!(link_with(&broken, 3), Err(one));
}
