//! Property tests: random modules built with the core API (valid or not) survive
//! print → parse unchanged, and their printout is a fixed point; random text never panics
//! the parser.

use irkit_core::equiv::modules_equal;
use irkit_core::{Inst, Module, Opcode, Payload};
use irkit_text::{parse, parse_with_trivia, print, print_with_trivia};
use proptest::prelude::*;

/// A small deterministic generator, so one proptest `u64` drives a whole module.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    fn pick<T: Copy>(&mut self, v: &[T]) -> T {
        v[self.below(v.len())]
    }
}

const NAME_BASES: &[&str] = &[
    "x", "loop", "my var", "3", "", "é", "a.b", "\"q\"", "-", "tab\t", "$", "_",
];

struct Gen {
    r: Rng,
    m: Module,
    counter: u32,
    types: Vec<Inst>,
    consts: Vec<Inst>,
    funcs: Vec<Inst>,
    globals: Vec<Inst>,
    used_names: std::collections::HashSet<String>,
}

impl Gen {
    /// A fresh name. Base + counter alone can collide ("3" + "1" and "" + "31"), and a
    /// duplicate name legitimately prints with a suffix, so names are kept unique here.
    fn name(&mut self) -> String {
        loop {
            self.counter += 1;
            let base = self.r.pick(NAME_BASES);
            let n = format!("{base}{}", self.counter);
            if self.used_names.insert(n.clone()) {
                return n;
            }
        }
    }

    fn maybe_name(&mut self, i: Inst) {
        if self.r.chance(60) {
            let n = self.name();
            let h = self
                .m
                .new_inst(Opcode::NAME_HINT, None, vec![], Payload::Str(n.into()))
                .unwrap();
            self.m.insert_decoration(i, 0, h).unwrap();
        }
    }

    fn random_payload(&mut self) -> Payload {
        match self.r.below(6) {
            0 => Payload::None,
            1 => Payload::Int(self.r.next()),
            2 => Payload::Float(self.r.next()),
            3 => Payload::Str(self.name().into()),
            4 => {
                let n = self.r.below(6);
                Payload::Bytes((0..n).map(|_| self.r.next() as u8).collect())
            }
            _ => Payload::Int(self.r.below(20) as u64),
        }
    }

    fn types(&mut self) {
        for op in [
            Opcode::I1,
            Opcode::I8,
            Opcode::I16,
            Opcode::I32,
            Opcode::I64,
            Opcode::F32,
            Opcode::F64,
            Opcode::PTR,
        ] {
            let t = self.m.ty_prim(op);
            self.types.push(t);
        }
        for k in 0..self.r.below(6) {
            let t = match self.r.below(5) {
                0 => {
                    let e = self.r.pick(&self.types);
                    self.m.ty_array(e, self.r.below(5) as u64).unwrap()
                }
                1 => {
                    let fields: Vec<Inst> = (0..self.r.below(4))
                        .map(|_| self.r.pick(&self.types))
                        .collect();
                    self.m.ty_struct(&fields).unwrap()
                }
                2 => {
                    let fields: Vec<Inst> = (0..self.r.below(3))
                        .map(|_| self.r.pick(&self.types))
                        .collect();
                    let name = format!("S{}", k % 2);
                    self.m.ty_named_struct(&name, &fields).unwrap()
                }
                3 => {
                    // Not expressible inline: a primitive type with a payload.
                    self.m
                        .intern(Opcode::I32, None, &[], Payload::Int(self.r.below(3) as u64))
                        .unwrap()
                }
                _ => {
                    let e = self.r.pick(&self.types);
                    let inner = self.m.ty_array(e, 2).unwrap();
                    self.m.ty_array(inner, 3).unwrap()
                }
            };
            self.types.push(t);
        }
    }

    fn consts(&mut self) {
        for _ in 0..self.r.below(10) {
            let c = match self.r.below(9) {
                0 => {
                    let t = self.r.pick(&self.types[..5]);
                    self.m.const_int(t, self.r.next()).unwrap()
                }
                1 => {
                    let any = self.r.next();
                    let bits = self.r.pick(&[
                        0x7ff8_0000_0000_0000u64,
                        0xfff8_0000_0000_0001,
                        (-0.0f64).to_bits(),
                        f64::INFINITY.to_bits(),
                        1.5f64.to_bits(),
                        any,
                    ]);
                    let t = self.m.ty_f64();
                    self.m.const_float_bits(t, bits).unwrap()
                }
                2 => {
                    let any = self.r.next();
                    let bits = self.r.pick(&[
                        0x7fc0_0000u64,
                        0x7fc0_0001,
                        (-0.0f32).to_bits() as u64,
                        0.1f32.to_bits() as u64,
                        any & 0xffff_ffff,
                        any, // upper bits set: not expressible inline
                    ]);
                    let t = self.m.ty_f32();
                    self.m.const_float_bits(t, bits).unwrap()
                }
                3 => self.m.const_null(),
                4 => {
                    let t = self.r.pick(&self.types);
                    self.m.const_zero(t).unwrap()
                }
                5 => {
                    let n = self.r.below(5);
                    let bytes: Vec<u8> = (0..n).map(|_| self.r.next() as u8).collect();
                    self.m.const_bytes(&bytes)
                }
                6 if !self.consts.is_empty() => {
                    let t = self.r.pick(&self.types);
                    let elems: Vec<Inst> = (0..self.r.below(3))
                        .map(|_| self.r.pick(&self.consts))
                        .collect();
                    self.m.const_aggregate(t, &elems).unwrap()
                }
                7 => {
                    // Out of range for its type: needs the generic form.
                    let t = self.m.ty_i8();
                    self.m
                        .intern(Opcode::CONST_INT, Some(t), &[], Payload::Int(300))
                        .unwrap()
                }
                _ => {
                    let t = self.m.ty_i1();
                    self.m.const_int(t, self.r.next() & 1).unwrap()
                }
            };
            self.consts.push(c);
        }
    }

    fn value(&mut self, locals: &[Inst]) -> Inst {
        if !locals.is_empty() && self.r.chance(60) {
            self.r.pick(locals)
        } else if !self.consts.is_empty() && self.r.chance(70) {
            self.r.pick(&self.consts)
        } else if !self.globals.is_empty() && self.r.chance(50) {
            self.r.pick(&self.globals)
        } else {
            self.m.const_i32(self.r.next() as i32)
        }
    }

    fn decorate(&mut self, owner: Inst, locals: &[Inst]) {
        for _ in 0..self.r.below(3) {
            let (op, payload, ops) = match self.r.below(5) {
                0 => (Opcode::EXPORT, Payload::Str(self.name().into()), vec![]),
                1 => {
                    let (a, b) = (self.m.const_i32(3), self.m.const_i32(4));
                    (Opcode::LOC, Payload::Str("f.c".into()), vec![a, b])
                }
                2 => (Opcode::INLINE_HINT, Payload::None, vec![]),
                3 => {
                    let v = self.value(locals);
                    (Opcode(0x2ff), self.random_payload(), vec![v])
                }
                // A second name hint, not first: printed explicitly.
                _ => (Opcode::NAME_HINT, Payload::Str(self.name().into()), vec![]),
            };
            let d = self.m.add_decoration(owner, op, ops, payload).unwrap();
            if self.r.chance(5) {
                self.m
                    .add_decoration(d, Opcode(0x2fe), vec![], Payload::None)
                    .unwrap();
            }
        }
    }

    fn func(&mut self) {
        let root = self.m.root();
        let params: Vec<Inst> = (0..self.r.below(3))
            .map(|_| self.r.pick(&self.types))
            .collect();
        let ret = self.r.pick(&self.types);
        let sig = self.m.ty_fn(ret, &params).unwrap();
        let f = self
            .m
            .new_inst(Opcode::FUNC, Some(sig), vec![], Payload::None)
            .unwrap();
        self.m.append_child(root, f).unwrap();
        self.maybe_name(f);
        self.decorate(f, &[]);
        self.funcs.push(f);
        if self.r.chance(15) {
            return; // a declaration
        }
        let nblocks = 1 + self.r.below(4);
        let mut blocks = Vec::new();
        let mut locals = Vec::new();
        for _ in 0..nblocks {
            let b = self
                .m
                .new_inst(Opcode::BLOCK, None, vec![], Payload::None)
                .unwrap();
            self.m.append_child(f, b).unwrap();
            self.maybe_name(b);
            if self.r.chance(10) {
                self.decorate(b, &[]);
            }
            for _ in 0..self.r.below(3) {
                let t = self.r.pick(&self.types);
                let p = self
                    .m
                    .new_inst(Opcode::PARAM, Some(t), vec![], Payload::None)
                    .unwrap();
                self.m.append_child(b, p).unwrap();
                self.maybe_name(p);
                if self.r.chance(10) {
                    self.decorate(p, &[]);
                }
                locals.push(p);
            }
            blocks.push(b);
        }
        if self.r.chance(10) {
            // A non-block child makes the body generic.
            let x = self
                .m
                .new_inst(Opcode(0x4444), None, vec![], Payload::None)
                .unwrap();
            self.m.append_child(f, x).unwrap();
        }
        for &b in &blocks {
            for _ in 0..self.r.below(5) {
                let i = self.inst(&locals, &blocks);
                self.m.append_child(b, i).unwrap();
                if self.r.chance(10) {
                    let child = self.inst(&locals, &blocks);
                    self.m.append_child(i, child).unwrap();
                }
                if self.m.ty(i).is_some() || self.r.chance(20) {
                    locals.push(i);
                }
            }
            let t = self.terminator(&locals, &blocks);
            self.m.append_child(b, t).unwrap();
        }
    }

    fn inst(&mut self, locals: &[Inst], blocks: &[Inst]) -> Inst {
        let i32t = self.m.ty_i32();
        let i1t = self.m.ty_i1();
        let (op, ty, ops, payload) = match self.r.below(7) {
            0 => {
                let (a, b) = (self.value(locals), self.value(locals));
                (Opcode::IADD, Some(i32t), vec![a, b], Payload::None)
            }
            1 => {
                let (a, b) = (self.value(locals), self.value(locals));
                let code = self.r.pick(&[1u64, 4, 12, 13, 99]);
                (Opcode::ICMP, Some(i1t), vec![a, b], Payload::Int(code))
            }
            2 if !self.funcs.is_empty() => {
                let f = self.r.pick(&self.funcs);
                let mut ops = vec![f];
                for _ in 0..self.r.below(3) {
                    ops.push(self.value(locals));
                }
                let ty = if self.r.chance(50) { Some(i32t) } else { None };
                (Opcode::CALL, ty, ops, Payload::None)
            }
            3 => {
                let sig = self.m.ty_fn(i32t, &[i32t]).unwrap();
                let fp = self.value(locals);
                let a = self.value(locals);
                (
                    Opcode::CALL_INDIRECT,
                    Some(i32t),
                    vec![sig, fp, a],
                    Payload::None,
                )
            }
            4 => {
                let a = self.value(locals);
                let p = if self.r.chance(80) {
                    Payload::Int(self.r.below(4) as u64)
                } else {
                    Payload::None
                };
                (Opcode::EXTRACT, Some(i32t), vec![a], p)
            }
            5 => {
                let mut ops = Vec::new();
                for _ in 0..self.r.below(4) {
                    if self.r.chance(20) {
                        ops.push(self.r.pick(blocks));
                    } else {
                        ops.push(self.value(locals));
                    }
                }
                let ty = if self.r.chance(50) {
                    Some(self.r.pick(&self.types))
                } else {
                    None
                };
                let op = Opcode(0x1000 + self.r.below(3) as u16);
                (op, ty, ops, self.random_payload())
            }
            _ => {
                let t = self.r.pick(&self.types);
                (
                    Opcode::STACKALLOC,
                    Some(self.m.ty_ptr()),
                    vec![t],
                    Payload::None,
                )
            }
        };
        let i = self.m.new_inst(op, ty, ops, payload).unwrap();
        self.maybe_name(i);
        if self.r.chance(15) {
            self.decorate(i, locals);
        }
        i
    }

    fn edge(&mut self, ops: &mut Vec<Inst>, locals: &[Inst], blocks: &[Inst]) {
        ops.push(self.r.pick(blocks));
        for _ in 0..self.r.below(3) {
            ops.push(self.value(locals));
        }
    }

    fn terminator(&mut self, locals: &[Inst], blocks: &[Inst]) -> Inst {
        let mut ops = Vec::new();
        let op = match self.r.below(5) {
            0 => {
                if self.r.chance(50) {
                    ops.push(self.value(locals));
                }
                Opcode::RET
            }
            1 => {
                self.edge(&mut ops, locals, blocks);
                Opcode::JUMP
            }
            2 => {
                ops.push(self.value(locals));
                self.edge(&mut ops, locals, blocks);
                self.edge(&mut ops, locals, blocks);
                Opcode::BR
            }
            3 => {
                ops.push(self.value(locals));
                let n = self.r.below(3);
                for k in 0..n {
                    ops.push(self.m.const_i32(k as i32));
                }
                for _ in 0..=n {
                    self.edge(&mut ops, locals, blocks);
                }
                Opcode::SWITCH
            }
            _ => Opcode::UNREACHABLE,
        };
        let i = self.m.new_inst(op, None, ops, Payload::None).unwrap();
        if self.r.chance(10) {
            self.decorate(i, locals);
        }
        i
    }

    fn global(&mut self) {
        let root = self.m.root();
        let t = self.r.pick(&self.types);
        let op = if self.r.chance(50) {
            Opcode::GLOBAL_VAR
        } else {
            Opcode::GLOBAL_CONST
        };
        let init = if self.r.chance(60) && !self.consts.is_empty() {
            vec![self.r.pick(&self.consts)]
        } else {
            vec![]
        };
        let g = self.m.new_inst(op, Some(t), init, Payload::None).unwrap();
        self.m.append_child(root, g).unwrap();
        self.maybe_name(g);
        self.decorate(g, &[]);
        self.globals.push(g);
    }
}

fn random_module(seed: u64) -> Module {
    let mut g = Gen {
        r: Rng(seed | 1),
        m: Module::new(),
        counter: 0,
        types: Vec::new(),
        consts: Vec::new(),
        funcs: Vec::new(),
        globals: Vec::new(),
        used_names: Default::default(),
    };
    g.types();
    g.consts();
    for _ in 0..g.r.below(3) {
        g.global();
    }
    for _ in 0..1 + g.r.below(3) {
        g.func();
    }
    if g.r.chance(20) {
        let root = g.m.root();
        g.decorate(root, &[]);
    }
    if g.r.chance(20) && !g.funcs.is_empty() {
        // A hoistable referring to a function's block lives in the function's scope.
        let f = g.r.pick(&g.funcs);
        if let Some(b) = g.m.entry_block(f) {
            let s = g.m.ty_struct(&[b]).unwrap();
            let i =
                g.m.new_inst(Opcode(0x3333), Some(s), vec![], Payload::None)
                    .unwrap();
            let term = *g.m.children(b).last().unwrap();
            let idx = g.m.children(b).iter().position(|&c| c == term).unwrap();
            g.m.insert_child(b, idx, i).unwrap();
        }
    }
    g.m
}

fn check_round_trip(m: &Module) -> Result<(), TestCaseError> {
    let text = print(m);
    let m2 = match parse(&text, "gen.ir") {
        Ok(m2) => m2,
        Err(e) => {
            return Err(TestCaseError::fail(format!(
                "{}\n--- text:\n{text}",
                e.render()
            )));
        }
    };
    if let Err(e) = modules_equal(m, &m2) {
        return Err(TestCaseError::fail(format!("{e}\n--- text:\n{text}")));
    }
    let again = print(&m2);
    prop_assert_eq!(&again, &text, "print is not a fixed point");
    Ok(())
}

/// Comment texts for [`sprinkle`]: empty, spaced, `;`s, braces, quotes, non-ASCII.
const COMMENT_TEXTS: &[&str] = &[
    "",
    " c",
    ";",
    " }",
    "{",
    " \"q",
    "  two  spaces",
    " é ü",
    "#[x]",
    " ^b:",
    "\t tab",
];

/// The comment texts of a text (`;` outside string literals, to the end of the line, trailing
/// whitespace trimmed), in order.
fn comment_texts(src: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in src.lines() {
        let (mut in_str, mut esc) = (false, false);
        for (k, c) in line.char_indices() {
            if in_str {
                match c {
                    _ if esc => esc = false,
                    '\\' => esc = true,
                    '"' => in_str = false,
                    _ => {}
                }
            } else if c == '"' {
                in_str = true;
            } else if c == ';' {
                out.push(line[k + 1..].trim_end().to_string());
                break;
            }
        }
    }
    out
}

/// The byte offsets just after the `, ` separators of a line outside string literals (where
/// the line may be broken).
fn break_points(line: &str) -> Vec<usize> {
    let (mut in_str, mut esc) = (false, false);
    let mut out = Vec::new();
    for (k, c) in line.char_indices() {
        if in_str {
            match c {
                _ if esc => esc = false,
                '\\' => esc = true,
                '"' => in_str = false,
                _ => {}
            }
        } else if c == '"' {
            in_str = true;
        } else if c == ',' && line[k + 1..].starts_with(' ') {
            out.push(k + 2);
        }
    }
    out
}

/// Adds, at random places of a printed text, own-line comments (indented at random), trailing
/// comments, blank lines, and line breaks after commas (continuation lines); each comment text
/// is unique (it ends with its number), so that its order can be checked.
fn sprinkle(text: &str, r: &mut Rng) -> String {
    let mut out = String::new();
    let mut n = 0;
    let mut comment = |r: &mut Rng| {
        n += 1;
        format!(";{}#{n}", r.pick(COMMENT_TEXTS))
    };
    for line in text.lines() {
        for _ in 0..r.below(3) {
            match r.below(3) {
                0 => out.push('\n'),
                _ => {
                    out.push_str(&" ".repeat(r.below(5)));
                    out.push_str(&comment(r));
                    out.push('\n');
                }
            }
        }
        let breaks = break_points(line);
        let mut rest = line;
        if !breaks.is_empty() && r.chance(30) {
            let at = breaks[r.below(breaks.len())];
            out.push_str(&line[..at]);
            if r.chance(50) {
                out.push_str(&comment(r));
            }
            out.push_str("\n    ");
            rest = &line[at..];
        }
        out.push_str(rest);
        if r.chance(30) {
            out.push_str(&" ".repeat(r.below(3)));
            out.push_str(&comment(r));
        }
        out.push('\n');
    }
    for _ in 0..r.below(3) {
        out.push_str(&comment(r));
        out.push('\n');
    }
    out
}

/// The formatter's contract on `src` (which parses to `m`): formatting keeps the module and
/// every comment in order, and gives a fixed point.
fn check_format(m: &Module, src: &str) -> Result<(), TestCaseError> {
    let fmt = |s: &str| -> Result<String, TestCaseError> {
        let (m, t) = parse_with_trivia(s, "gen.ir")
            .map_err(|e| TestCaseError::fail(format!("{}\n--- text:\n{s}", e.render())))?;
        Ok(print_with_trivia(&m, &t))
    };
    let out = fmt(src)?;
    let m2 = parse(&out, "fmt.ir")
        .map_err(|e| TestCaseError::fail(format!("{}\n--- formatted:\n{out}", e.render())))?;
    if let Err(e) = modules_equal(m, &m2) {
        return Err(TestCaseError::fail(format!("{e}\n--- formatted:\n{out}")));
    }
    let have = comment_texts(&out).join("\n");
    let mut at = 0;
    for c in comment_texts(src) {
        match have[at..].find(&c) {
            Some(k) => at += k + c.len(),
            None => {
                return Err(TestCaseError::fail(format!(
                    "comment `;{c}` lost or moved\n--- source:\n{src}\n--- formatted:\n{out}"
                )));
            }
        }
    }
    let again = fmt(&out)?;
    prop_assert_eq!(&again, &out, "not a fixed point\n--- source:\n{}", src);
    Ok(())
}

fn check_sprinkled(seed: u64) -> Result<(), TestCaseError> {
    let m = random_module(seed);
    let mut r = Rng(seed.rotate_left(17) | 1);
    let src = sprinkle(&print(&m), &mut r);
    check_format(&m, &src)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(64), ..ProptestConfig::default() })]

    #[test]
    fn comments_survive_formatting(seed in any::<u64>()) {
        check_sprinkled(seed)?;
    }

    #[test]
    fn commented_token_soup_formats(words in proptest::collection::vec(
        prop_oneof![
            3 => proptest::sample::select(SOUP).prop_map(str::to_string),
            1 => (0..1000u32).prop_map(|k| format!("; c{k}\n")),
            1 => Just("\n\n".to_string()),
        ],
        0..60,
    )) {
        let s = words.join(" ");
        if let Ok(m) = parse(&s, "soup.ir") {
            check_format(&m, &s)?;
        }
    }

    #[test]
    fn format_never_panics(s in "\\PC{0,200}") {
        if let Ok((m, t)) = parse_with_trivia(&s, "fuzz.ir") {
            let _ = print_with_trivia(&m, &t);
        }
    }

    #[test]
    fn random_modules_round_trip(seed in any::<u64>()) {
        check_round_trip(&random_module(seed))?;
    }

    #[test]
    fn random_text_never_panics(s in "\\PC{0,200}") {
        let _ = parse(&s, "fuzz.ir");
    }

    #[test]
    fn random_bytes_never_panic(b in proptest::collection::vec(any::<u8>(), 0..300)) {
        let _ = parse(&String::from_utf8_lossy(&b), "fuzz.ir");
    }

    #[test]
    fn token_soup_never_panics(words in proptest::collection::vec(proptest::sample::select(SOUP), 0..80)) {
        let s = words.join(" ");
        let _ = parse(&s, "soup.ir");
    }
}

const SOUP: &[&str] = &[
    "%x",
    "%0",
    "@f",
    "^b",
    "^b:",
    "=",
    ",",
    ":",
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    "->",
    "#[",
    "#![",
    "#12",
    "\n",
    "\n",
    "i32",
    "i1",
    "f64",
    "ptr",
    "void",
    "struct",
    "fn",
    "x",
    "4",
    "-1",
    "1.5",
    "nan",
    "inf",
    "true",
    "zero",
    "null",
    "\"s\"",
    "b\"\\x00\"",
    "func",
    "block",
    "iadd",
    "icmp",
    "slt",
    "br",
    "ret",
    "call",
    "export",
    "named_struct",
    "const_int",
    "fbits:0x1",
    "%t = i32",
    "@g = global_var",
    "^e(%a: i32):",
];

/// The case count: `PROPTEST_CASES` if set, else `default`.
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
fn many_seeds_round_trip() {
    for seed in 0..300u64 {
        let m = random_module(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        if let Err(e) = check_round_trip(&m) {
            panic!("seed {seed}: {e}");
        }
    }
}

#[test]
fn many_seeds_format() {
    for seed in 0..300u64 {
        if let Err(e) = check_sprinkled(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15)) {
            panic!("seed {seed}: {e}");
        }
    }
}

#[test]
#[ignore = "prints a sample, for eyeballing"]
fn show_sample() {
    for seed in 1..4u64 {
        println!("{}", print(&random_module(seed * 7919)));
    }
}
