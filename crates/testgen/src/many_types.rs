//! A program whose one generic is used at many types ([`many_types_program`]): the workload
//! of the generics policy (spec/linking.md, "Dynamic generics"). Deterministic, not random:
//! the tests and the bench measure the same program.
//!
//! `lib.ir` exports the interface `Ord` and the generic `pick<T: Ord>(a, b, c: T, n: i32) -> T`:
//! `n` rounds of `(x, y, z) = (y, z, max(x, y, z))`, then `x` (after three rounds, the largest
//! of the three: a loop whose state is three values of `T`, eleven instructions);
//! `main.ir` defines `n` distinct structure types (one to four fields of `i8`, `i16`, `i32`,
//! `i64`, `f32` and `f64`, enumerated in order), for each a conformance to `Ord` comparing
//! field 0, and calls `pick` at every one of them on three constants and 3 rounds, summing
//! field 0 of each result as an `i64`.

use std::fmt::Write;

/// The scalar field types, in enumeration order.
const FIELDS: [&str; 6] = ["i8", "i16", "i32", "i64", "f32", "f64"];

/// The field types of structure type `k` (k = 0, 1, …): one to four fields, shorter first.
fn fields(mut k: usize) -> Vec<&'static str> {
    let mut len = 1;
    let mut count = FIELDS.len();
    while k >= count && len < 4 {
        k -= count;
        len += 1;
        count *= FIELDS.len();
    }
    let mut out = Vec::with_capacity(len);
    for _ in 0..len {
        out.push(FIELDS[k % FIELDS.len()]);
        k /= FIELDS.len();
    }
    out
}

/// The most distinct types the program can have (every structure of one to four fields).
pub const MAX_TYPES: usize = 6 + 36 + 216 + 1296;

/// The modules (file name, `.ir` text) of the program with `n` types (at most
/// [`MAX_TYPES`]), and the result its `main` returns.
pub fn many_types_program(n: usize) -> (Vec<(String, String)>, i64) {
    let n = n.min(MAX_TYPES);
    let lib = r#"; lib.ir: `Ord` and the generic `pick<T: Ord>`.
#[export("Ord")]
@Ord = interface @less
#[export("less")]
@less: fn(@Ord, @Ord) -> i1 = interface_req

#[export("pick")]
@pick = generic %T, %w {
  %T = type_param 0 @pick
  %w: @Ord = witness_param 1 @pick, %T
  %fn: fn(%T, %T, %T, i32) -> %T = func {
  ^entry(%a: %T, %b: %T, %c: %T, %n: i32):
    %lt_fn: fn(%T, %T) -> i1 = lookup_witness %w, @less
    jump ^round(%a, %b, %c, %n)
  ^round(%x: %T, %y: %T, %z: %T, %k: i32):
    %go: i1 = icmp sgt %k, i32 0
    br %go, ^step, ^done
  ^step:
    %l1: i1 = call %lt_fn(%x, %y)
    %m1: %T = select %l1, %y, %x
    %l2: i1 = call %lt_fn(%m1, %z)
    %m2: %T = select %l2, %z, %m1
    %k1: i32 = isub %k, i32 1
    jump ^round(%y, %z, %m2, %k1)
  ^done:
    ret %x
  }
}
"#
    .to_string();
    let mut main = String::from(
        "; main.ir: `pick` at many structure types.\n\
#[import(\"Ord\")]\n@Ord = interface @less\n#[import(\"less\")]\n@less: fn(@Ord, @Ord) -> i1 = interface_req\n\
#[import(\"pick\")]\n@pick = generic %T, %w {\n  %T = type_param 0 @pick\n  %w: @Ord = witness_param 1 @pick, %T\n\
  %fn: fn(%T, %T, %T, i32) -> %T = func\n}\n\n",
    );
    let mut body = String::new();
    let mut expected: i64 = 0;
    let mut acc = "i64 0".to_string();
    for k in 0..n {
        let fs = fields(k);
        let ty = format!("struct {{{}}}", fs.join(", "));
        let f0 = fs[0];
        let float = f0.starts_with('f');
        let cmp = if float { "fcmp olt" } else { "icmp slt" };
        let _ = write!(
            main,
            "@less{k}: fn({ty}, {ty}) -> i1 = func {{\n^entry(%a: {ty}, %b: {ty}):\n  \
             %x: {f0} = extract 0 %a\n  %y: {f0} = extract 0 %b\n  %r: i1 = {cmp} %x, %y\n  \
             ret %r\n}}\n@ord{k}: @Ord = witness_table {ty} {{\n  witness_entry @less, @less{k}\n}}\n\
             @pick{k}: fn({ty}, {ty}, {ty}, i32) -> {ty} = specialize @pick, {ty}, @ord{k}\n\n"
        );
        let (a, b, c) = ((k % 7) as i64, (k % 5) as i64, (k % 3) as i64);
        expected += a.max(b).max(c);
        let lit = |v: i64| -> String {
            let parts: Vec<String> = fs
                .iter()
                .enumerate()
                .map(|(j, f)| {
                    let x = if j == 0 { v } else { 0 };
                    if f.starts_with('f') {
                        format!("{f} {x}.0")
                    } else {
                        format!("{f} {x}")
                    }
                })
                .collect();
            format!("{ty} [{}]", parts.join(", "))
        };
        let widen = match f0 {
            "i64" => None,
            "f32" | "f64" => Some("fptosi"),
            _ => Some("sext"),
        };
        let _ = writeln!(
            body,
            "  %m{k}: {ty} = call @pick{k}({}, {}, {}, i32 3)\n  %f{k}: {f0} = extract 0 %m{k}",
            lit(a),
            lit(b),
            lit(c)
        );
        let w = match widen {
            Some(op) => {
                let _ = writeln!(body, "  %w{k}: i64 = {op} %f{k}");
                format!("%w{k}")
            }
            None => format!("%f{k}"),
        };
        let _ = writeln!(body, "  %s{k}: i64 = iadd {acc}, {w}");
        acc = format!("%s{k}");
    }
    let _ = write!(
        main,
        "#[export(\"main\")]\n@main: fn() -> i64 = func {{\n^entry:\n{body}  ret {acc}\n}}\n"
    );
    (
        vec![("lib.ir".to_string(), lib), ("main.ir".to_string(), main)],
        expected,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_are_distinct_and_shorter_first() {
        let all: Vec<Vec<&str>> = (0..MAX_TYPES).map(fields).collect();
        let set: std::collections::HashSet<&Vec<&str>> = all.iter().collect();
        assert_eq!(set.len(), MAX_TYPES);
        assert_eq!(all[0], vec!["i8"]);
        assert_eq!(all[6].len(), 2);
        assert_eq!(all[MAX_TYPES - 1].len(), 4);
    }

    #[test]
    fn every_module_parses_and_verifies() {
        let (mods, _) = many_types_program(50);
        for (name, text) in mods {
            let m = irkit_text::parse(&text, &name).unwrap_or_else(|e| panic!("{name}: {e}"));
            irkit_core::verify::verify(&m).unwrap_or_else(|e| panic!("{name}: {e:?}"));
        }
    }
}
