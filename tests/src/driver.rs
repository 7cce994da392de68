//! The driver that runs a semantics case's calls in a native executable: IR text appended to
//! the case's module, whose entry (exported as [`ENTRY`]) makes each call with its constant
//! arguments and prints its result's leaves to standard output, one line a call:
//!
//! ```text
//! =run <call index> <leaf bits> <leaf bits> …      each a 16-digit hex number
//! ```
//!
//! (after a line break, so that a line starts there even when the case printed something of
//! its own). An integer leaf is zero-extended to 64 bits, a float leaf is its bits, a pointer
//! its address. The environment variable [`SELECT`] chooses what runs: unset, every call that
//! is expected to return; set to a call's index `k`, the returning calls before `k`, then call
//! `k` (which traps or exits, ending the process with its own line or code).

use std::fmt::Write as _;

use irkit_backend::Val;
use irkit_core::{Inst, Module, Opcode};

/// The export name of the driver's entry function.
pub const ENTRY: &str = "irkit.run.main";

/// The environment variable naming the one call that traps or exits to run.
pub const SELECT: &str = "IRKIT_RUN_CALL";

/// The kind of a scalar leaf of a result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Leaf {
    /// An integer of this width.
    Int(u32),
    /// `f32`.
    F32,
    /// `f64`.
    F64,
    /// `ptr`.
    Ptr,
}

impl Leaf {
    /// The value of a leaf from the bits the driver printed.
    pub fn val(self, bits: u64) -> Val {
        match self {
            Leaf::Int(1) => Val::I1(bits & 1 != 0),
            Leaf::Int(8) => Val::I8(bits as u8),
            Leaf::Int(16) => Val::I16(bits as u16),
            Leaf::Int(32) => Val::I32(bits as u32),
            Leaf::Int(_) => Val::I64(bits),
            Leaf::F32 => Val::F32(bits as u32),
            Leaf::F64 => Val::F64(bits),
            Leaf::Ptr => Val::Ptr(bits),
        }
    }
}

/// One call the driver makes.
pub struct DriverCall<'a> {
    /// The called function's name, without `@`.
    pub func: &'a str,
    /// Its arguments.
    pub args: &'a [Val],
    /// Whether it is expected to trap or exit (it then runs only when [`SELECT`] names it).
    pub stops: bool,
}

/// The driver of `calls` of module `m` (verified): its IR text, to be appended to the
/// module's, and for each call the kinds of its result's leaves.
pub fn driver(m: &Module, calls: &[DriverCall<'_>]) -> Result<(String, Vec<Vec<Leaf>>), String> {
    let mut text = String::from(PRELUDE);
    let mut leaves = Vec::new();
    text.push_str(&format!(
        "\n#[export(\"{ENTRY}\")]\n@irkit.run.main: fn() -> i32 = func {{\n^entry:\n  \
         %v: ptr = call @irkit.run.getenv(@irkit.run.var)\n  \
         %none: i1 = icmp eq %v, ptr null\n  br %none, ^sel(i32 -1), ^parse\n\
         ^parse:\n  %n: i32 = call @irkit.run.atoi(%v)\n  jump ^sel(%n)\n\
         ^sel(%s: i32):\n  jump ^c0\n"
    ));
    for (k, c) in calls.iter().enumerate() {
        let def = m
            .find_named(c.func)
            .or_else(|| m.find_export(c.func))
            .ok_or_else(|| format!("no function @{}", c.func))?;
        let ret = m
            .ty(def)
            .and_then(|t| m.fn_signature(t))
            .map(|(ret, _)| ret)
            .ok_or_else(|| format!("@{} is not a function", c.func))?;
        let args: Vec<String> = c
            .args
            .iter()
            .map(|v| crate::runtest::format_val(*v))
            .collect();
        let args = args.join(", ");
        // Returning calls run unless SELECT names an earlier call (unsigned: unset is -1);
        // a stopping call runs only when named.
        let cond = if c.stops { "eq" } else { "ugt" };
        let _ = write!(
            text,
            "^c{k}:\n  %w{k}: i1 = icmp {cond} %s, i32 {k}\n  br %w{k}, ^d{k}, ^c{}\n^d{k}:\n",
            k + 1
        );
        let fields = fields(m, ret)?;
        if fields.is_none() {
            let _ = writeln!(text, "  call @{}({args})", c.func);
        } else {
            let ty = irkit_text::print_inst(m, ret);
            let _ = writeln!(text, "  %r{k}: {ty} = call @{}({args})", c.func);
        }
        let _ = writeln!(text, "  call @irkit.run.begin(i64 {k})");
        let mut kinds = Vec::new();
        for (j, (field, leaf)) in fields.unwrap_or_default().into_iter().enumerate() {
            let value = match field {
                None => format!("%r{k}"),
                Some(i) => {
                    let ty = leaf_type(leaf);
                    let _ = writeln!(text, "  %e{k}_{j}: {ty} = extract {i} %r{k}");
                    format!("%e{k}_{j}")
                }
            };
            let bits = if leaf == Leaf::Int(64) {
                value.clone()
            } else {
                format!("%b{k}_{j}")
            };
            let _ = match leaf {
                Leaf::Int(64) => Ok(()),
                Leaf::Int(_) => writeln!(text, "  %b{k}_{j}: i64 = zext {value}"),
                Leaf::F64 => writeln!(text, "  %b{k}_{j}: i64 = bitcast {value}"),
                Leaf::F32 => writeln!(
                    text,
                    "  %h{k}_{j}: i32 = bitcast {value}\n  %b{k}_{j}: i64 = zext %h{k}_{j}"
                ),
                Leaf::Ptr => writeln!(text, "  %b{k}_{j}: i64 = ptrtoint {value}"),
            };
            let _ = writeln!(text, "  call @irkit.run.hex({bits})");
            kinds.push(leaf);
        }
        let _ = writeln!(text, "  call @irkit.run.end()\n  jump ^c{}", k + 1);
        leaves.push(kinds);
    }
    let _ = write!(text, "^c{}:\n  ret i32 0\n}}\n", calls.len());
    Ok((text, leaves))
}

/// The leaves of result type `ty`: `None` for `void`, else each leaf with its field index
/// (`None` for a scalar result itself). Only scalars and structs of scalars are results a
/// session returns.
type Fields = Option<Vec<(Option<usize>, Leaf)>>;

fn fields(m: &Module, ty: Inst) -> Result<Fields, String> {
    if m.opcode(ty) == Opcode::VOID {
        return Ok(None);
    }
    if let Some(l) = scalar(m, ty) {
        return Ok(Some(vec![(None, l)]));
    }
    if matches!(m.opcode(ty), Opcode::STRUCT | Opcode::NAMED_STRUCT) {
        let mut out = Vec::new();
        for (i, &f) in m.operands(ty).iter().enumerate() {
            let l = scalar(m, f).ok_or("a result struct must hold scalars only")?;
            out.push((Some(i), l));
        }
        return Ok(Some(out));
    }
    Err("a result must be a scalar or a struct of scalars".into())
}

fn scalar(m: &Module, ty: Inst) -> Option<Leaf> {
    if let Some(w) = m.int_width(ty) {
        return Some(Leaf::Int(w));
    }
    match (m.float_width(ty), m.opcode(ty) == Opcode::PTR) {
        (Some(32), _) => Some(Leaf::F32),
        (Some(_), _) => Some(Leaf::F64),
        (None, true) => Some(Leaf::Ptr),
        (None, false) => None,
    }
}

fn leaf_type(l: Leaf) -> String {
    match l {
        Leaf::Int(w) => format!("i{w}"),
        Leaf::F32 => "f32".into(),
        Leaf::F64 => "f64".into(),
        Leaf::Ptr => "ptr".into(),
    }
}

/// The call outcomes an executable's standard output shows: for each call index, its leaves'
/// bits.
pub fn results(stdout: &str) -> Vec<(usize, Vec<u64>)> {
    stdout
        .lines()
        .filter_map(|l| l.strip_prefix("=run "))
        .filter_map(|l| {
            let mut words = l.split_whitespace().map(|w| u64::from_str_radix(w, 16));
            let k = usize::try_from(words.next()?.ok()?).ok()?;
            let bits: Result<Vec<u64>, _> = words.collect();
            Some((k, bits.ok()?))
        })
        .collect()
}

/// The driver's helpers: C's `putchar`, `getenv` and `atoi`, and the printing of a result
/// line.
const PRELUDE: &str = r#"
#[extern("putchar")]
@irkit.run.putchar: fn(i32) -> i32 = func
#[extern("getenv")]
@irkit.run.getenv: fn(ptr) -> ptr = func
#[extern("atoi")]
@irkit.run.atoi: fn(ptr) -> i32 = func
@irkit.run.var: [15 x i8] = global_const [15 x i8] b"IRKIT_RUN_CALL\0"

@irkit.run.hex: fn(i64) -> void = func {
^entry(%v: i64):
  %sp: i32 = call @irkit.run.putchar(i32 32)
  jump ^digit(i64 60)
^digit(%shift: i64):
  %d: i64 = lshr %v, %shift
  %n: i64 = and %d, i64 15
  %letter: i1 = icmp uge %n, i64 10
  %dec: i64 = iadd %n, i64 48
  %hex: i64 = iadd %n, i64 87
  %c: i64 = select %letter, %hex, %dec
  %ci: i32 = trunc %c
  %p: i32 = call @irkit.run.putchar(%ci)
  %last: i1 = icmp eq %shift, i64 0
  %next: i64 = isub %shift, i64 4
  br %last, ^done, ^digit(%next)
^done:
  ret
}

@irkit.run.begin: fn(i64) -> void = func {
^entry(%k: i64):
  %nl: i32 = call @irkit.run.putchar(i32 10)
  %eq: i32 = call @irkit.run.putchar(i32 61)
  %r: i32 = call @irkit.run.putchar(i32 114)
  %u: i32 = call @irkit.run.putchar(i32 117)
  %n: i32 = call @irkit.run.putchar(i32 110)
  call @irkit.run.hex(%k)
  ret
}

@irkit.run.end: fn() -> void = func {
^entry:
  %nl: i32 = call @irkit.run.putchar(i32 10)
  ret
}
"#;
