//! `ir-info IN.irm [--json]`: what a binary module holds, read from its header, directory and
//! tables without decoding any definition body.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use irkit_cli::report::Problems;
use irkit_cli::{input, output};
use irkit_format::{ModuleView, SymbolRole, hex};
use serde_json::json;

/// Describe a binary irkit module: version, sections, symbols, definitions.
#[derive(Parser)]
#[command(name = "ir-info", version)]
struct Args {
    /// The binary module (`-` reads stdin).
    input: PathBuf,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Also validate every definition and section hash (reads the whole file).
    #[arg(long)]
    validate: bool,
}

fn role(r: SymbolRole) -> String {
    match r {
        SymbolRole::Export => "export".into(),
        SymbolRole::Import => "import".into(),
        SymbolRole::Extern => "extern".into(),
        SymbolRole::Other(k) => format!("role#{k}"),
    }
}

fn main() -> ExitCode {
    let args: Args = irkit_cli::start();
    let mut problems = Problems::new();
    let Some((name, bytes)) = input::read_binary(&args.input, &mut problems) else {
        return problems.finish();
    };
    if !input::is_binary(&bytes) {
        problems.push(format!(
            "{name}: not a binary irkit module (no IRKMOD magic); `ir-as` makes one"
        ));
        return problems.finish();
    }
    let Some(view) = input::open_view(&name, &bytes, &mut problems) else {
        return problems.finish();
    };
    if args.validate
        && let Err(e) = view.validate_all()
    {
        problems.push(e.to_string());
        return problems.finish();
    }
    let out = if args.json {
        json_report(&view)
    } else {
        text_report(&view)
    };
    output::print_stdout(&out, &mut problems);
    problems.finish()
}

fn text_report(v: &ModuleView) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let (major, minor) = v.version();
    let _ = writeln!(s, "file: {}", v.file());
    let _ = writeln!(s, "format: {major}.{minor}");
    let _ = writeln!(s, "size: {} bytes", v.bytes().len());
    let _ = writeln!(s, "content hash: {}", hex(&v.content_hash()));
    let _ = writeln!(s, "sections:");
    for sec in v.sections() {
        let flags = match (sec.optional, sec.known) {
            (true, true) => " (optional)",
            (true, false) => " (optional, unknown: skipped)",
            (false, false) => " (unknown)",
            (false, true) => "",
        };
        let _ = writeln!(
            s,
            "  {:<18} offset {:>10}  size {:>10}  blake3 {}{flags}",
            sec.name, sec.offset, sec.size, sec.hash
        );
    }
    let syms = v.symbols();
    let _ = writeln!(s, "symbols: {}", syms.len());
    for sym in &syms {
        let _ = writeln!(
            s,
            "  {:<7} {:<13} {:<24} def {:<6} hash {}",
            role(sym.role),
            sym.kind.to_string(),
            sym.name,
            sym.def,
            &hex(&sym.hash)[..16]
        );
    }
    let _ = writeln!(s, "definitions: {}", v.def_count());
    for i in 0..v.def_count() {
        if let Some(d) = v.def_info(i) {
            let name = d
                .name
                .map(|n| format!("@{n}"))
                .unwrap_or_else(|| format!("#{i}"));
            let _ = writeln!(
                s,
                "  {:<6} {:<13} {:<24} {:>7} insts {:>9} bytes  hash {}",
                i,
                d.kind.to_string(),
                name,
                d.inst_count,
                d.size,
                &hex(&d.content_hash)[..16]
            );
        }
    }
    s
}

fn json_report(v: &ModuleView) -> String {
    let (major, minor) = v.version();
    let sections: Vec<_> = v
        .sections()
        .into_iter()
        .map(|s| json!({"name": s.name, "kind": s.kind.0, "optional": s.optional, "known": s.known, "offset": s.offset, "size": s.size, "blake3": s.hash}))
        .collect();
    let symbols: Vec<_> = v
        .symbols()
        .into_iter()
        .map(|s| json!({"name": s.name, "role": role(s.role), "kind": s.kind.to_string(), "def": s.def, "signature": s.signature, "hash": hex(&s.hash)}))
        .collect();
    let defs: Vec<_> = (0..v.def_count())
        .filter_map(|i| v.def_info(i))
        .map(|d| json!({"index": d.index, "kind": d.kind.to_string(), "name": d.name, "insts": d.inst_count, "size": d.size, "hash": hex(&d.content_hash)}))
        .collect();
    let doc = json!({
        "file": v.file(),
        "format": {"major": major, "minor": minor},
        "size": v.bytes().len(),
        "content_hash": hex(&v.content_hash()),
        "sections": sections,
        "symbols": symbols,
        "definitions": defs,
    });
    let mut s =
        serde_json::to_string_pretty(&doc).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    s.push('\n');
    s
}
