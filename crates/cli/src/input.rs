//! Reading inputs: a path or `-` for stdin, in the `.ir` text format.

use std::io::Read;
use std::path::Path;

use irkit_core::Module;

use crate::report::Problems;

/// One loaded input: its display name, its source text and the parsed module.
pub struct Loaded {
    /// The name used in messages (the path, or `<stdin>`).
    pub name: String,
    /// The source text.
    pub source: String,
    /// The module.
    pub module: Module,
}

/// Reads the bytes of `path` (`-` is stdin). Errors are reported into `problems`.
pub fn read_bytes(path: &Path, problems: &mut Problems) -> Option<(String, Vec<u8>)> {
    if path.as_os_str() == "-" {
        let mut buf = Vec::new();
        return match std::io::stdin().read_to_end(&mut buf) {
            Ok(_) => Some(("<stdin>".to_string(), buf)),
            Err(e) => {
                problems.push(format!("<stdin>: cannot read: {e}"));
                None
            }
        };
    }
    let name = path.display().to_string();
    match std::fs::read(path) {
        Ok(bytes) => Some((name, bytes)),
        Err(e) => {
            problems.push(format!("{name}: cannot read: {e}"));
            None
        }
    }
}

/// Reads and parses a text module. Parse errors are reported into `problems` (each with its
/// `file:line:col`, the source line and a caret).
pub fn load(path: &Path, problems: &mut Problems) -> Option<Loaded> {
    let (name, bytes) = read_bytes(path, problems)?;
    let source = match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => {
            let (line, col) = line_col_of_byte(e.as_bytes(), e.utf8_error().valid_up_to());
            problems.push(format!(
                "{name}:{line}:{col}: error: the file is not valid UTF-8"
            ));
            return None;
        }
    };
    match irkit_text::parse(&source, &name) {
        Ok(module) => Some(Loaded {
            name,
            source,
            module,
        }),
        Err(errors) => {
            for e in errors.errors() {
                problems.push(e.render());
            }
            None
        }
    }
}

fn line_col_of_byte(bytes: &[u8], offset: usize) -> (usize, usize) {
    let before = &bytes[..offset.min(bytes.len())];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let col = before.iter().rev().take_while(|&&b| b != b'\n').count() + 1;
    (line, col)
}
