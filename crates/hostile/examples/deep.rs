//! `cargo run --example deep -- tree|types DEPTH OUT.irm`: writes a deeply nested module
//! ([`irkit_hostile::deep_tree_file`], [`irkit_hostile::deep_types_file`]),
//! whatever the depth, to try the tools on (the nesting limit, `spec/ir.md`).

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [kind, depth, out] = args.as_slice() else {
        eprintln!("usage: deep tree|types DEPTH OUT.irm");
        return ExitCode::from(2);
    };
    let Ok(depth) = depth.parse::<u32>() else {
        eprintln!("error: DEPTH must be a number, not `{depth}`");
        return ExitCode::from(2);
    };
    let bytes = match kind.as_str() {
        "tree" => irkit_hostile::deep_tree_file(depth),
        "types" => irkit_hostile::deep_types_file(depth),
        _ => {
            eprintln!("error: the kind is `tree` or `types`, not `{kind}`");
            return ExitCode::from(2);
        }
    };
    match bytes.map(|b| std::fs::write(out, b)) {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(e)) => {
            eprintln!("error: {out}: {e}");
            ExitCode::from(1)
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}
