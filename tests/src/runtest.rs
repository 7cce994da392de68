//! Per-call expectations of a semantics case (`tests/semantics/*.ir`), as Cranelift's
//! runtests: a case is an ordinary `.ir` module, and each `; run:` comment line calls one of
//! its functions with constant arguments and states what the call gives:
//!
//! ```text
//! ; run: @add(i8 127, i8 1) == i8 -128             returns this value
//! ; run: @f(i32 7, i32 0) == trap "integer division by zero"
//! ; run: @f(i32 7, i32 0) == trap "integer division by zero" in @f ^entry, instruction 0 (sdiv %r)
//! ; run: @g(f64 1.5) == f64 nan:0x7ff8000000000001
//! ; run: @pair() == [i8 1, i64 42]                 a struct result: its scalar leaves in order
//! ; run: @h() == void                              returns nothing
//! ; run: @quit() == exit 3                         calls C's `exit(3)`
//! ; run(interp): @load_null() == trap "null access at 0x0"
//! ```
//!
//! * **Values** are spelled as the IR text's inline constants (spec/text.md), exactly: `i8 -1`
//!   (decimal or `0x` hex; negative or unsigned within the width), `i1 true`/`i1 false`,
//!   `f64 1.5` (the decimal read in the type's format, round to nearest), `f32 -0.0`, `f64 inf`,
//!   `f64 -inf`, `f64 nan` (the canonical quiet NaN of spec/ir.md) and `f64 nan:0x<bits>` (any
//!   other NaN, bit for bit), `ptr null`. Arguments are scalars; a result is compared bit for
//!   bit (a NaN's payload included), and written back (when blessing) as the IR printer writes
//!   constants: integers signed, floats as the shortest decimal that reads back to the same bits.
//! * **A trap** gives its kind as the trap line spells it (a quoted string, escapes as
//!   [`crate::expect::escape`]); with ` in <place>` after it, the whole line must be
//!   `trap: <kind> in <place>`. A kind ending in `...` stands for every kind that starts with
//!   what comes before (`"out-of-bounds access of 4 bytes at ..."`: an address that is the
//!   interpreter's own business).
//! * **Where a line runs**: `; run:` on every back end ([`Target::ALL`]: the interpreter, the
//!   JIT, a native executable); `; run(interp, jit):` only on those listed. A line that leaves
//!   a back end out is an exception to "every back end agrees", and the comment lines above it
//!   say why (memory errors, which native code does not check; C functions an executable
//!   cannot link).
//! * **State**: the calls of a file run in order on one live instance of the module (a
//!   session, spec/backends.md "Sessions": globals and memory keep what earlier calls left).
//!   The executable runs the calls that return in one process, and each call that traps or
//!   exits in a process of its own after the returning calls written before it; so a case must
//!   not depend on what a trapping or exiting call changed before it stopped.
//!
//! The runner (`tests/tests/semantics.rs`) checks every line on every back end it names, and
//! `IRKIT_BLESS=1` rewrites the expectation of each line whose interpreter result differs.
//! (In the whole programs of `tests/run/` and `examples/`, a `; run:` line gives options
//! instead, [`crate::expect::run_args`]: the two kinds of file live apart.)

use irkit_backend::{Call, Val};

use crate::expect::{escape, unescape};

/// A back end a run line runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    /// The reference interpreter (`irkit-interp`), through its session.
    Interp,
    /// The Cranelift JIT (`irkit-cranelift`), through its session.
    Jit,
    /// A native executable (`irkit-cranelift`'s object linked by `cc`) with a generated driver.
    Exe,
}

impl Target {
    /// Every back end, the order of the runner's trials.
    pub const ALL: [Target; 3] = [Target::Interp, Target::Jit, Target::Exe];

    /// The name a `; run(…)` line spells.
    pub fn name(self) -> &'static str {
        match self {
            Target::Interp => "interp",
            Target::Jit => "jit",
            Target::Exe => "exe",
        }
    }

    fn by_name(name: &str) -> Option<Target> {
        Target::ALL.into_iter().find(|t| t.name() == name)
    }
}

/// What a call is expected to give.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expected {
    /// It returns these scalar leaves (none for `void`).
    Returns(Vec<Val>),
    /// It traps with this kind, and, when given, at this place (the trap line's text after
    /// ` in `).
    Trap {
        /// The trap kind.
        kind: String,
        /// The place, if the line states it.
        place: Option<String>,
    },
    /// It calls C's `exit` with this code.
    Exit(i32),
}

/// One `; run` line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunLine {
    /// Its line number in the file, from 1.
    pub line: usize,
    /// The back ends it runs on.
    pub targets: Vec<Target>,
    /// The called function's name, without `@`.
    pub func: String,
    /// The arguments.
    pub args: Vec<Val>,
    /// The expectation.
    pub expect: Expected,
}

impl RunLine {
    /// Whether the line runs on `t`.
    pub fn runs_on(&self, t: Target) -> bool {
        self.targets.contains(&t)
    }

    /// The call as written, `@f(i32 1, f64 2.5)`.
    pub fn call_text(&self) -> String {
        let args: Vec<String> = self.args.iter().map(|v| format_val(*v)).collect();
        format!("@{}({})", self.func, args.join(", "))
    }
}

/// The run lines of a case, in order; an error names the line.
pub fn parse_lines(text: &str) -> Result<Vec<RunLine>, String> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        let Some(rest) = line.strip_prefix("; run") else {
            continue;
        };
        let at = |e: String| format!("line {}: {e}", i + 1);
        let (targets, rest) = if let Some(r) = rest.strip_prefix(':') {
            (Target::ALL.to_vec(), r)
        } else if let Some(r) = rest.strip_prefix('(') {
            let (list, r) = r
                .split_once("):")
                .ok_or_else(|| at("expected `; run(BACKEND, …):`".into()))?;
            let mut targets = Vec::new();
            for n in list.split(',').map(str::trim) {
                let t = Target::by_name(n)
                    .ok_or_else(|| at(format!("unknown back end `{n}` (interp, jit, exe)")))?;
                if targets.contains(&t) {
                    return Err(at(format!("back end `{n}` named twice")));
                }
                targets.push(t);
            }
            (targets, r)
        } else {
            return Err(at("expected `; run:` or `; run(BACKEND, …):`".into()));
        };
        out.push(parse_call(rest.trim(), targets, i + 1).map_err(at)?);
    }
    Ok(out)
}

fn parse_call(s: &str, targets: Vec<Target>, line: usize) -> Result<RunLine, String> {
    let (call, expect) = s
        .split_once(" == ")
        .ok_or("expected `@f(ARGS) == EXPECTATION`")?;
    let call = call.trim();
    let name_args = call
        .strip_prefix('@')
        .and_then(|c| c.strip_suffix(')'))
        .ok_or_else(|| format!("expected `@f(ARGS)`, found `{call}`"))?;
    let (func, args) = name_args
        .split_once('(')
        .ok_or_else(|| format!("expected `@f(ARGS)`, found `{call}`"))?;
    if func.is_empty()
        || !func
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.$-".contains(c))
    {
        return Err(format!("bad function name `@{func}`"));
    }
    let args = if args.trim().is_empty() {
        Vec::new()
    } else {
        args.split(',')
            .map(|a| parse_val(a.trim()))
            .collect::<Result<_, _>>()?
    };
    Ok(RunLine {
        line,
        targets,
        func: func.to_string(),
        args,
        expect: parse_expected(expect.trim())?,
    })
}

/// An expectation as a run line writes it after ` == `.
pub fn parse_expected(s: &str) -> Result<Expected, String> {
    if s == "void" {
        return Ok(Expected::Returns(Vec::new()));
    }
    if let Some(code) = s.strip_prefix("exit ") {
        let code = code
            .trim()
            .parse()
            .map_err(|_| format!("bad exit code `{code}`"))?;
        return Ok(Expected::Exit(code));
    }
    if let Some(rest) = s.strip_prefix("trap ") {
        let (quoted, tail) = split_quoted(rest.trim_start())?;
        let kind = unescape(quoted)?;
        let tail = tail.trim();
        let place = if tail.is_empty() {
            None
        } else {
            let p = tail.strip_prefix("in ").ok_or_else(|| {
                format!("expected `in <place>` after the trap kind, found `{tail}`")
            })?;
            Some(p.trim().to_string())
        };
        return Ok(Expected::Trap { kind, place });
    }
    if let Some(list) = s.strip_prefix('[') {
        let list = list
            .strip_suffix(']')
            .ok_or("a `[` list must end with `]`")?;
        let vals = list
            .split(',')
            .map(|v| parse_val(v.trim()))
            .collect::<Result<_, _>>()?;
        return Ok(Expected::Returns(vals));
    }
    Ok(Expected::Returns(vec![parse_val(s)?]))
}

/// `"…"` at the start of `s` (escapes skipped) and what follows it.
fn split_quoted(s: &str) -> Result<(&str, &str), String> {
    if !s.starts_with('"') {
        return Err(format!("expected a quoted trap kind, found `{s}`"));
    }
    let mut escaped = false;
    for (i, c) in s.char_indices().skip(1) {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '"' => return Ok((&s[..=i], &s[i + 1..])),
            _ => {}
        }
    }
    Err(format!("unterminated string `{s}`"))
}

/// The expectation as a run line writes it.
pub fn format_expected(e: &Expected) -> String {
    match e {
        Expected::Returns(v) => format_leaves(v),
        Expected::Trap { kind, place: None } => format!("trap {}", escape(kind)),
        Expected::Trap {
            kind,
            place: Some(p),
        } => format!("trap {} in {p}", escape(kind)),
        Expected::Exit(c) => format!("exit {c}"),
    }
}

/// Leaves as an expectation writes them: `void`, one value, or a `[…]` list.
pub fn format_leaves(v: &[Val]) -> String {
    match v {
        [] => "void".into(),
        [one] => format_val(*one),
        more => {
            let vs: Vec<String> = more.iter().map(|v| format_val(*v)).collect();
            format!("[{}]", vs.join(", "))
        }
    }
}

/// How a call ended, as a line writes it (a trap with its place when `with_place`).
pub fn format_call(c: &Call, with_place: bool) -> String {
    match c {
        Call::Returned(v) => format_leaves(v),
        Call::Exited(n) => format!("exit {n}"),
        Call::Trapped { kind, message } => {
            let place = message
                .strip_prefix("trap: ")
                .and_then(|m| m.strip_prefix(kind.as_str()))
                .and_then(|m| m.strip_prefix(" in "))
                .filter(|_| with_place);
            format_expected(&Expected::Trap {
                kind: kind.clone(),
                place: place.map(|p| p.trim_end().to_string()),
            })
        }
    }
}

/// Whether call outcome `c` is what `e` expects (values bit for bit).
pub fn matches(e: &Expected, c: &Call) -> bool {
    match (e, c) {
        (Expected::Returns(want), Call::Returned(got)) => want == got,
        (Expected::Exit(want), Call::Exited(got)) => want == got,
        (Expected::Trap { kind, place }, Call::Trapped { kind: k, message }) => {
            let kind_matches = match kind.strip_suffix("...") {
                Some(prefix) => k.starts_with(prefix),
                None => kind == k,
            };
            kind_matches
                && place
                    .as_ref()
                    .is_none_or(|p| message.trim_end() == format!("trap: {k} in {p}"))
        }
        _ => false,
    }
}

/// `text` with the expectation of each line in `fixes` (line number, new expectation)
/// replaced; the rest of the file as it was.
pub fn rewrite(text: &str, fixes: &[(usize, Expected)]) -> String {
    let mut out = String::new();
    for (i, line) in text.lines().enumerate() {
        match fixes.iter().find(|(n, _)| *n == i + 1) {
            Some((_, e)) if line.contains(" == ") => {
                let (head, _) = line.split_once(" == ").unwrap_or((line, ""));
                out.push_str(head);
                out.push_str(" == ");
                out.push_str(&format_expected(e));
            }
            _ => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

/// The canonical quiet NaN of `f32` (spec/ir.md).
pub const CANONICAL_NAN_F32: u32 = 0x7fc0_0000;
/// The canonical quiet NaN of `f64` (spec/ir.md).
pub const CANONICAL_NAN_F64: u64 = 0x7ff8_0000_0000_0000;

/// A scalar value as the IR text writes an inline constant.
pub fn format_val(v: Val) -> String {
    match v {
        Val::I1(b) => format!("i1 {b}"),
        Val::I8(x) => format!("i8 {}", x as i8),
        Val::I16(x) => format!("i16 {}", x as i16),
        Val::I32(x) => format!("i32 {}", x as i32),
        Val::I64(x) => format!("i64 {}", x as i64),
        Val::F32(b) => {
            let f = f32::from_bits(b);
            match (f.is_nan(), b == CANONICAL_NAN_F32) {
                (true, true) => "f32 nan".into(),
                (true, false) => format!("f32 nan:0x{b:x}"),
                _ => format!("f32 {f:?}"),
            }
        }
        Val::F64(b) => {
            let f = f64::from_bits(b);
            match (f.is_nan(), b == CANONICAL_NAN_F64) {
                (true, true) => "f64 nan".into(),
                (true, false) => format!("f64 nan:0x{b:x}"),
                _ => format!("f64 {f:?}"),
            }
        }
        Val::Ptr(0) => "ptr null".into(),
        // Not a constant the text can write: an address is a back end's own.
        Val::Ptr(a) => format!("ptr 0x{a:x}"),
        // Its bytes as `i8` lanes, lane 0 first.
        Val::V128(b) => {
            let lanes: Vec<String> = b.iter().map(|&x| format!("i8 {}", x as i8)).collect();
            format!("vec i8 16 [{}]", lanes.join(", "))
        }
    }
}

/// A scalar value written as an IR inline constant (see the module doc).
pub fn parse_val(s: &str) -> Result<Val, String> {
    let (ty, lit) = s
        .split_once(' ')
        .ok_or_else(|| format!("expected `TYPE VALUE`, found `{s}`"))?;
    let lit = lit.trim();
    let bad = || format!("`{lit}` is not a {ty} constant");
    match ty {
        "i1" => match lit {
            "true" | "1" | "-1" => Ok(Val::I1(true)),
            "false" | "0" => Ok(Val::I1(false)),
            _ => Err(bad()),
        },
        "i8" => int_bits(lit, 8).map(|b| Val::I8(b as u8)).ok_or_else(bad),
        "i16" => int_bits(lit, 16)
            .map(|b| Val::I16(b as u16))
            .ok_or_else(bad),
        "i32" => int_bits(lit, 32)
            .map(|b| Val::I32(b as u32))
            .ok_or_else(bad),
        "i64" => int_bits(lit, 64).map(Val::I64).ok_or_else(bad),
        "f32" => float_bits(lit, 32)
            .map(|b| Val::F32(b as u32))
            .ok_or_else(bad),
        "f64" => float_bits(lit, 64).map(Val::F64).ok_or_else(bad),
        "ptr" if lit == "null" => Ok(Val::Ptr(0)),
        _ => Err(format!("`{s}` is not a scalar constant")),
    }
}

/// The bits of integer literal `lit` (decimal or `0x` hex, optionally negative) at width `w`:
/// it must fit as a signed or an unsigned number.
fn int_bits(lit: &str, w: u32) -> Option<u64> {
    let (neg, mag) = match lit.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, lit),
    };
    let mag = match mag.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok()?,
        None if mag.chars().all(|c| c.is_ascii_digit()) => mag.parse().ok()?,
        None => return None,
    };
    let mask = if w == 64 { u64::MAX } else { (1 << w) - 1 };
    if neg {
        (mag <= 1 << (w - 1)).then(|| mag.wrapping_neg() & mask)
    } else {
        (mag <= mask).then_some(mag)
    }
}

/// The bits of float literal `lit` in the format of width `w` (32 or 64).
fn float_bits(lit: &str, w: u32) -> Option<u64> {
    if let Some(h) = lit.strip_prefix("nan:0x") {
        let b = u64::from_str_radix(h, 16).ok()?;
        let nan = if w == 32 {
            u32::try_from(b)
                .ok()
                .is_some_and(|b| f32::from_bits(b).is_nan())
        } else {
            f64::from_bits(b).is_nan()
        };
        return nan.then_some(b);
    }
    match (lit, w) {
        ("nan", 32) => return Some(CANONICAL_NAN_F32.into()),
        ("nan", _) => return Some(CANONICAL_NAN_F64),
        _ => {}
    }
    let body = lit.strip_prefix('-').unwrap_or(lit);
    let float_like = body == "inf"
        || (body.starts_with(|c: char| c.is_ascii_digit())
            && body.contains(['.', 'e', 'E'])
            && body
                .chars()
                .all(|c| c.is_ascii_digit() || ".eE+-".contains(c)));
    if !float_like {
        return None;
    }
    if w == 32 {
        lit.parse::<f32>().ok().map(|f| f.to_bits().into())
    } else {
        lit.parse::<f64>().ok().map(f64::to_bits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_read_back_what_they_write() {
        for v in [
            Val::I1(true),
            Val::I8(0x80),
            Val::I16(0xffff),
            Val::I32(0x8000_0000),
            Val::I64(u64::MAX),
            Val::F32(0xffc0_0001),
            Val::F32(CANONICAL_NAN_F32),
            Val::F64((-0.0f64).to_bits()),
            Val::F64((0.1f64 + 0.2).to_bits()),
            Val::F64(f64::MIN_POSITIVE.to_bits() / 2),
            Val::F64(f64::NEG_INFINITY.to_bits()),
            Val::F64(1e300f64.to_bits()),
            Val::Ptr(0),
        ] {
            assert_eq!(parse_val(&format_val(v)), Ok(v), "{}", format_val(v));
        }
        assert_eq!(parse_val("i8 255"), Ok(Val::I8(0xff)));
        assert_eq!(parse_val("i8 0xf0"), Ok(Val::I8(0xf0)));
        assert!(parse_val("i8 256").is_err());
        assert!(parse_val("i8 -129").is_err());
        assert!(parse_val("f32 nan:0x7ff8000000000000").is_err());
        assert!(
            parse_val("f64 1").is_err(),
            "a float literal needs a `.` or exponent"
        );
    }

    #[test]
    fn lines_parse_with_their_back_ends_and_expectations() {
        let text = "; a case\n\
                    ; run: @f(i32 7, i32 0) == trap \"integer division by zero\"\n\
                    @f: fn() -> void = func\n\
                    ; run(interp, jit): @g() == [i8 1, f64 nan]\n\
                    ; run: @h() == trap \"unknown extern function \\\"x\\\"\" in @h ^entry, instruction 0 (call)\n\
                    ; run(exe): @main() == exit 3\n";
        let lines = parse_lines(text).expect("parses");
        assert_eq!(lines.len(), 4);
        assert_eq!(lines[0].line, 2);
        assert_eq!(lines[0].call_text(), "@f(i32 7, i32 0)");
        assert_eq!(lines[1].targets, [Target::Interp, Target::Jit]);
        assert_eq!(
            lines[1].expect,
            Expected::Returns(vec![Val::I8(1), Val::F64(CANONICAL_NAN_F64)])
        );
        assert_eq!(
            lines[2].expect,
            Expected::Trap {
                kind: "unknown extern function \"x\"".into(),
                place: Some("@h ^entry, instruction 0 (call)".into())
            }
        );
        assert_eq!(lines[3].expect, Expected::Exit(3));
        for l in &lines {
            assert_eq!(
                parse_expected(&format_expected(&l.expect)),
                Ok(l.expect.clone())
            );
        }
        assert!(parse_lines("; run(gpu): @f() == void\n").is_err());
        assert!(parse_lines("; run: @f()\n").is_err());
    }

    #[test]
    fn a_trap_matches_its_kind_and_its_place_when_given() {
        let call = Call::Trapped {
            kind: "trap executed".into(),
            message: "trap: trap executed in @t ^entry, instruction 0 (trap)\n".into(),
        };
        let kind_only = parse_expected("trap \"trap executed\"").expect("parses");
        assert!(matches(&kind_only, &call));
        let placed =
            parse_expected("trap \"trap executed\" in @t ^entry, instruction 0 (trap)").unwrap();
        assert!(matches(&placed, &call));
        let elsewhere = parse_expected("trap \"trap executed\" in @u ^entry, instruction 0 (trap)")
            .expect("parses");
        assert!(!matches(&elsewhere, &call));
        assert_eq!(
            format_call(&call, true),
            "trap \"trap executed\" in @t ^entry, instruction 0 (trap)"
        );
        assert!(!matches(&kind_only, &Call::Returned(vec![])));
        let prefix =
            parse_expected("trap \"trap ...\" in @t ^entry, instruction 0 (trap)").expect("parses");
        assert!(matches(&prefix, &call));
        assert!(!matches(&parse_expected("trap \"trap\"").unwrap(), &call));
    }

    #[test]
    fn blessing_rewrites_only_the_expectation() {
        let text = "; run: @f(i8 1) == i8 0x10\n@f: fn(i8) -> i8 = func\n";
        let fixed = rewrite(text, &[(1, Expected::Returns(vec![Val::I8(0xff)]))]);
        assert_eq!(fixed, "; run: @f(i8 1) == i8 -1\n@f: fn(i8) -> i8 = func\n");
    }
}
