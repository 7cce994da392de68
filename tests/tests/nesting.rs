//! The nesting limit (`spec/ir.md`, Nesting limit; `spec/format.md` §4): a module exactly at
//! the limit is read, verified, printed, parsed back, written and linked like any other; one
//! level more is refused by every reader with an error naming the place, quickly, however
//! deep it goes.

use std::time::{Duration, Instant};

use irkit_core::equiv::modules_equal;
use irkit_core::{MAX_NESTING, Nesting};
use irkit_format::{
    CopyMapper, DefIndex, Location, ModuleView, PoolIndex, ReadCause, ReadError, WriteError,
};
use irkit_hostile::{deep_tree, deep_tree_file, deep_types, deep_types_file};

/// A mapper for copies that must fail before mapping anything.
struct NoMapping;

impl CopyMapper for NoMapping {
    type Error = ReadError;
    fn pool(
        &mut self,
        _: &mut irkit_core::Module,
        i: PoolIndex,
    ) -> Result<irkit_core::Inst, ReadError> {
        panic!("mapped pool entry {i} of a refused definition")
    }
    fn def(
        &mut self,
        _: &mut irkit_core::Module,
        i: DefIndex,
    ) -> Result<irkit_core::Inst, ReadError> {
        panic!("mapped definition {i} from a refused definition")
    }
}

/// A refusal for the nesting limit, at `location`.
fn assert_too_deep(r: Result<impl Sized, ReadError>, location: &Location) {
    match r {
        Err(e) => {
            assert!(
                matches!(e.cause, ReadCause::TooDeep { limit, .. } if limit == MAX_NESTING),
                "{e}"
            );
            assert_eq!(&e.location, location, "{e}");
            assert!(
                e.to_string().contains("nested deeper than 256 levels"),
                "{e}"
            );
        }
        Ok(_) => panic!("read a module over the nesting limit"),
    }
}

/// Reads, validates, prints, parses back and rewrites `bytes`, which must be within the limit.
fn round_trip(bytes: &[u8]) -> irkit_core::Module {
    let view = ModuleView::from_bytes(bytes).expect("opens");
    view.validate_all().expect("validates");
    let m = view.materialize().expect("materializes");
    let text = irkit_text::print(&m);
    let back = irkit_text::parse(&text, "deep.ir").unwrap_or_else(|e| panic!("{e}"));
    modules_equal(&m, &back).expect("text round trip");
    assert_eq!(irkit_text::print(&back), text);
    assert_eq!(irkit_format::write(&back).expect("writes"), bytes);
    m
}

#[test]
fn a_tree_at_the_limit_round_trips() {
    let m = round_trip(&deep_tree_file(MAX_NESTING).unwrap());
    assert_eq!(irkit_core::check_nesting(&m), Ok(()));
}

#[test]
fn values_at_the_limit_round_trip_verify_and_run() {
    let m = round_trip(&deep_types_file(MAX_NESTING).unwrap());
    irkit_core::verify::verify(&m).expect("verifies");
    let mut it = irkit_interp::Interpreter::new(&m).expect("loads");
    assert_eq!(it.run_main().expect("runs"), 0);
}

#[test]
fn a_tree_over_the_limit_is_refused_by_every_reader() {
    for depth in [MAX_NESTING + 1, 100_000] {
        let t = Instant::now();
        let bytes = deep_tree_file(depth).unwrap();
        let view = ModuleView::from_bytes(&bytes).expect("opens: nothing is read yet");
        let at = Location::Definition(0);
        assert_too_deep(view.def(0), &at);
        assert_too_deep(view.validate_all(), &at);
        assert_too_deep(view.materialize(), &at);
        assert_too_deep(view.semantic_hash(0), &at);
        let mut out = irkit_core::Module::new();
        let target = out
            .new_inst(
                irkit_core::Opcode::FUNC,
                None,
                Vec::new(),
                Default::default(),
            )
            .unwrap();
        assert_too_deep(
            view.copy_def(0, &mut out, target, true, &mut NoMapping),
            &at,
        );
        assert!(t.elapsed() < Duration::from_secs(5), "depth {depth}: slow");
    }
}

#[test]
fn values_over_the_limit_are_refused_by_every_reader() {
    let bytes = deep_types_file(MAX_NESTING + 1).unwrap();
    let view = ModuleView::from_bytes(&bytes).expect("opens");
    let at = Location::Section("pool".into());
    assert_too_deep(view.pool().map(|_| ()), &at);
    assert_too_deep(view.validate_all(), &at);
    assert_too_deep(view.materialize(), &at);
}

#[test]
fn the_writer_refuses_what_readers_refuse() {
    let m = deep_tree(MAX_NESTING + 1).unwrap();
    assert!(matches!(
        irkit_format::write(&m),
        Err(WriteError::TooDeep {
            nesting: Nesting::Tree(_)
        })
    ));
    let m = deep_types(MAX_NESTING + 1).unwrap();
    assert!(matches!(
        irkit_format::write(&m),
        Err(WriteError::TooDeep {
            nesting: Nesting::Value(_)
        })
    ));
    // The verifier reports it too, as one error.
    let errs = irkit_core::verify::verify(&m).unwrap_err();
    assert_eq!(errs.len(), 1);
    assert!(
        errs[0].message.contains("nested deeper than 256 levels"),
        "{}",
        errs[0]
    );
}

/// `@t1 = struct {i32}`, `@tk = struct {@tk-1}` … up to `@t(n-1)` (`n` values deep), and a
/// function using the deepest.
fn named_chain(n: u32) -> String {
    let mut s = String::from("@t1 = struct {i32}\n");
    for k in 2..n {
        s += &format!("@t{k} = struct {{@t{}}}\n", k - 1);
    }
    s += &format!(
        "\n#[export(\"main\")]\n@main: fn() -> i32 = func {{\n^e:\n  %p: ptr = stackalloc @t{}\n  ret i32 0\n}}\n",
        n - 1
    );
    s
}

#[test]
fn text_builds_depth_through_names_and_is_held_to_the_same_limit() {
    let m = irkit_text::parse(&named_chain(MAX_NESTING), "ok.ir").unwrap_or_else(|e| panic!("{e}"));
    irkit_core::verify::verify(&m).expect("verifies");
    let e = irkit_text::parse(&named_chain(MAX_NESTING + 1), "deep.ir").unwrap_err();
    let e = e.to_string();
    assert!(
        e.contains(&format!("deep.ir:{}:1:", MAX_NESTING)) && e.contains("nested deeper"),
        "{e}"
    );
    // Far deeper: refused as quickly.
    let t = Instant::now();
    assert!(irkit_text::parse(&named_chain(30_000), "deep.ir").is_err());
    assert!(t.elapsed() < Duration::from_secs(5));
}

#[test]
fn the_linker_refuses_an_input_over_the_limit() {
    let dir = std::env::temp_dir().join(format!("irkit-nesting-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ok = dir.join("ok.irm");
    let deep = dir.join("deep.irm");
    std::fs::write(&ok, deep_types_file(MAX_NESTING).unwrap()).unwrap();
    std::fs::write(&deep, deep_types_file(MAX_NESTING + 1).unwrap()).unwrap();
    let opts = irkit_link::LinkOptions::default();
    let linked = irkit_link::link_files(&[&ok], &opts).expect("links");
    irkit_core::verify::verify(&linked.module).expect("verifies");
    let errs = irkit_link::link_files(&[&deep], &opts).unwrap_err();
    let text = errs.to_string();
    assert!(
        text.contains("section pool: pool entry") && text.contains("nested deeper"),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A name hint moved to the debug section leaves the body within the limit, but once
/// re-inserted it would be one level too deep: refused by materialize, `validate_all` and the
/// copy (the linker), naming the definition and the instruction.
#[test]
fn a_debug_decoration_over_the_limit_is_refused() {
    let mut m = deep_tree(MAX_NESTING).unwrap();
    let deepest = m
        .walk()
        .into_iter()
        .rfind(|&i| m.opcode(i) == irkit_hostile::DEEP_OPCODE)
        .unwrap();
    m.set_name(deepest, "bottom").unwrap();
    assert!(irkit_format::write(&m).is_err());
    let bytes = irkit_hostile::write_any_depth(&m).unwrap();
    let view = ModuleView::from_bytes(&bytes).expect("opens");
    view.def(0).expect("the body itself is within the limit");
    let at = Location::Definition(0);
    assert_too_deep(view.validate_all(), &at);
    assert_too_deep(view.materialize(), &at);
    let mut out = irkit_core::Module::new();
    let target = out
        .new_inst(
            irkit_core::Opcode::FUNC,
            None,
            Vec::new(),
            Default::default(),
        )
        .unwrap();
    let e = view
        .copy_def(0, &mut out, target, true, &mut NoMapping)
        .map(|_| ());
    assert_too_deep(e, &at);
}

/// Substitution can deepen a value (`struct {struct {T}}` with `T` 255 deep): every input is
/// within the limit, the linked module would not be, and the linker says so (not "internal
/// error: does not verify").
#[test]
fn instantiation_past_the_limit_is_a_link_error() {
    let n = MAX_NESTING - 1;
    let mut src = String::from("@t1 = struct {i32}\n");
    for k in 2..n {
        src += &format!("@t{k} = struct {{@t{}}}\n", k - 1);
    }
    src += &format!(
        "@P: struct {{struct {{%T0}}}} = generic %T0 {{\n  %T0 = type_param 0 @P\n}}\n\
         @1 = specialize @P, @t{}\n\n#[export(\"main\")]\n@main: fn() -> i32 = func {{\n^e:\n  \
         %p: ptr = stackalloc @1\n  ret i32 0\n}}\n",
        n - 1
    );
    let m = irkit_text::parse(&src, "gen.ir").unwrap_or_else(|e| panic!("{e}"));
    irkit_core::verify::verify(&m).expect("the input is valid");
    let input = irkit_link::Input::from_module("gen.ir", &m).unwrap();
    let errs = irkit_link::link(vec![input], &irkit_link::LinkOptions::default()).unwrap_err();
    assert_eq!(
        errs.to_string(),
        "error: instantiating generics built a type or constant nested deeper than 256 levels (the \
         nesting limit)"
    );
}

/// Decorations nest like children (`#[#[…] a] b`), and a decoration may have a body: chains of
/// both, up to the limit, print and parse back, and survive the binary format.
#[test]
fn decoration_chains_at_the_limit_round_trip() {
    use irkit_core::{Module, Opcode, Payload};
    let op = Opcode(0x7F01);
    for with_bodies in [false, true] {
        let mut m = Module::new();
        let i32t = m.ty_i32();
        let g = m
            .new_inst(Opcode::GLOBAL_VAR, Some(i32t), Vec::new(), Payload::None)
            .unwrap();
        let root = m.root();
        m.append_child(root, g).unwrap();
        // Top-down: the global is at depth 1, each link one deeper, the last at the limit.
        let mut owner = g;
        for k in 2..=MAX_NESTING {
            let d = m
                .new_inst(op, None, Vec::new(), Payload::Int(k as u64))
                .unwrap();
            if with_bodies && k % 2 == 0 {
                m.append_child(owner, d).unwrap();
            } else {
                m.attach_decoration(owner, d).unwrap();
            }
            owner = d;
        }
        assert_eq!(irkit_core::check_nesting(&m), Ok(()));
        let text = irkit_text::print(&m);
        let back = irkit_text::parse(&text, "decos.ir").unwrap_or_else(|e| panic!("{e}"));
        modules_equal(&m, &back).expect("text round trip");
        let bytes = irkit_format::write(&m).expect("writes");
        round_trip(&bytes);
        // One more link is refused by the writer and, written anyway, by the reader.
        let d = m.new_inst(op, None, Vec::new(), Payload::None).unwrap();
        m.attach_decoration(owner, d).unwrap();
        assert!(irkit_format::write(&m).is_err());
        let bytes = irkit_hostile::write_any_depth(&m).unwrap();
        let view = ModuleView::from_bytes(&bytes).unwrap();
        assert_too_deep(view.materialize(), &Location::Definition(0));
    }
}
