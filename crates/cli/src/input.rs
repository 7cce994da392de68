//! Reading inputs: a path or `-` for stdin, in either format. A binary module is recognized by
//! its magic bytes, whatever its file name; anything else is read as `.ir` text.

use std::path::Path;

use irkit_core::Module;
use irkit_core::verify::VerifyError;
use irkit_format::{MAGIC, ModuleView};

use crate::report::{Problems, verify_error_line};

/// The format an input was read in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `.ir` text.
    Text,
    /// A binary `.irm` module.
    Binary,
}

/// One loaded input.
pub struct Loaded {
    /// The name used in messages (the path, or `<stdin>`).
    pub name: String,
    /// The format it was read in.
    pub format: Format,
    /// The source text (empty for a binary input).
    pub source: String,
    /// The bytes of a binary input (empty for text).
    pub raw: Vec<u8>,
    /// The comments and blank lines of a text input, for re-printing it without losing them.
    pub trivia: irkit_text::Trivia,
    /// The module.
    pub module: Module,
}

/// Reads the bytes of `path` (`-` is stdin) once, within the input limit of
/// [`irkit_format::read_input`]. Errors are reported into `problems`.
pub fn read_bytes(path: &Path, problems: &mut Problems) -> Option<(String, Vec<u8>)> {
    read_with(path, problems, false)
}

/// Like [`read_bytes`] for a tool that takes only binary modules: stops at the first eight
/// bytes when they are not the magic ([`irkit_format::read_binary_input`]).
pub fn read_binary(path: &Path, problems: &mut Problems) -> Option<(String, Vec<u8>)> {
    read_with(path, problems, true)
}

fn read_with(path: &Path, problems: &mut Problems, binary: bool) -> Option<(String, Vec<u8>)> {
    let read = |r: &mut dyn std::io::Read| {
        if binary {
            irkit_format::read_binary_input(r)
        } else {
            irkit_format::read_input(r)
        }
    };
    let (name, read) = if path.as_os_str() == "-" {
        let name = "<stdin>".to_string();
        let r = read(&mut std::io::stdin().lock());
        (name, r)
    } else {
        let name = path.display().to_string();
        let r = std::fs::File::open(path).and_then(|mut f| read(&mut f));
        (name, r)
    };
    match read {
        Ok(bytes) => Some((name, bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
            problems.push(format!("{name}: {e}"));
            None
        }
        Err(e) => {
            problems.push(format!("{name}: cannot read: {e}"));
            None
        }
    }
}

/// Whether `bytes` start like a binary module.
pub fn is_binary(bytes: &[u8]) -> bool {
    bytes.starts_with(&MAGIC)
}

/// Reads a module in either format. Problems (each naming the file and the place: line and
/// column with the source line for text, the section for binary) go into `problems`. Comments
/// of a text input are dropped ([`load_keeping_comments`] keeps them).
pub fn load(path: &Path, problems: &mut Problems) -> Option<Loaded> {
    load_inner(path, problems, false, TextOptions::default())
}

/// Like [`load`], reading a text input as `text` says.
pub fn load_with(path: &Path, text: TextOptions, problems: &mut Problems) -> Option<Loaded> {
    load_inner(path, problems, false, text)
}

/// How the tools read `.ir` text inputs: the options `ir-as`, `ir-link` and `ir-run` share
/// (flattened into each one's arguments).
#[derive(Clone, Copy, Debug, Default, clap::Args)]
pub struct TextOptions {
    /// Record where each instruction of a `.ir` text input was written, as `loc`
    /// decorations (file, line, column), so that traps and debuggers name the `.ir` line.
    #[arg(short = 'g')]
    pub locations: bool,
}

/// Parses the text input `name` as `text` says: the module, or its problems, one line each.
pub fn parse_text(source: &str, name: &str, text: TextOptions) -> Result<Module, Vec<String>> {
    let rendered = |errors: irkit_text::ParseErrors| -> Vec<String> {
        errors.errors().iter().map(|e| e.render()).collect()
    };
    if !text.locations {
        return irkit_text::parse(source, name).map_err(rendered);
    }
    let (mut m, map) = irkit_text::parse_with_source_map(source, name).map_err(rendered)?;
    irkit_text::attach_locations(&mut m, &map, name)
        .map_err(|e| vec![format!("{name}: cannot record source positions: {e}")])?;
    Ok(m)
}

/// Like [`load`], also keeping the comments and blank lines of a text input
/// ([`Loaded::trivia`]), for a formatter.
pub fn load_keeping_comments(path: &Path, problems: &mut Problems) -> Option<Loaded> {
    load_inner(path, problems, true, TextOptions::default())
}

fn load_inner(
    path: &Path,
    problems: &mut Problems,
    comments: bool,
    text: TextOptions,
) -> Option<Loaded> {
    let (name, bytes) = read_bytes(path, problems)?;
    if is_binary(&bytes) {
        let module = load_binary(&name, &bytes, problems)?;
        return Some(Loaded {
            name,
            format: Format::Binary,
            source: String::new(),
            raw: bytes,
            trivia: irkit_text::Trivia::default(),
            module,
        });
    }
    let source = text_of(&name, bytes, problems)?;
    let parsed = if comments {
        irkit_text::parse_with_trivia(&source, &name)
            .map_err(|errors| errors.errors().iter().map(|e| e.render()).collect())
    } else {
        parse_text(&source, &name, text).map(|m| (m, irkit_text::Trivia::default()))
    };
    match parsed {
        Ok((module, trivia)) => Some(Loaded {
            name,
            format: Format::Text,
            source,
            raw: Vec::new(),
            trivia,
            module,
        }),
        Err(lines) => {
            for line in lines {
                problems.push(line);
            }
            None
        }
    }
}

/// Opens a binary module from bytes and materializes it, validating every definition.
pub fn load_binary(name: &str, bytes: &[u8], problems: &mut Problems) -> Option<Module> {
    let view = open_view(name, bytes, problems)?;
    match view.materialize() {
        Ok(m) => Some(m),
        Err(e) => {
            problems.push(e.to_string());
            None
        }
    }
}

/// Opens a binary module from bytes (header, directory and symbol table checked).
pub fn open_view(name: &str, bytes: &[u8], problems: &mut Problems) -> Option<ModuleView> {
    match ModuleView::from_bytes_named(bytes, name) {
        Ok(v) => Some(v),
        Err(e) => {
            problems.push(e.to_string());
            None
        }
    }
}

/// The bytes as UTF-8 text, or a located problem.
pub fn text_of(name: &str, bytes: Vec<u8>, problems: &mut Problems) -> Option<String> {
    match String::from_utf8(bytes) {
        Ok(s) => Some(s),
        Err(e) => {
            let (line, col) = line_col_of_byte(e.as_bytes(), e.utf8_error().valid_up_to());
            problems.push(format!("{name}:{line}:{col}: error: the file is neither valid UTF-8 text nor a binary module"));
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

/// Every verifier error of a loaded input, one line each (see [`crate::report::verify_error_line`]); for a
/// text input the source is parsed again, only now that there are errors, to find where each
/// instruction was written.
pub fn verify_error_lines(loaded: &Loaded, errors: &[VerifyError]) -> Vec<String> {
    let positions = match loaded.format {
        Format::Text => irkit_text::parse_with_source_map(&loaded.source, &loaded.name)
            .ok()
            .map(|(_, p)| p),
        Format::Binary => None,
    };
    let names = irkit_text::Names::new(&loaded.module);
    errors
        .iter()
        .map(|e| verify_error_line(&loaded.name, &loaded.module, &names, e, positions.as_ref()))
        .collect()
}
