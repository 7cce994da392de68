//! The line program's file table: each source path a directory (none for a bare name: the
//! compile directory) and a name, added once per unit, as `.debug_line` and the call sites of
//! inlined subroutines (`super::inlined`) name them.

use cranelift_codegen::gimli::write::{FileId, LineProgram, LineString};
use rustc_hash::FxHashMap as HashMap;

/// `s` as a line program string (a `\0` in it, which no path has, cut there; an empty one
/// as `.`).
pub(super) fn line_string(s: &str) -> LineString {
    let s = s.split('\0').next().unwrap_or("");
    LineString::String(if s.is_empty() {
        b".".to_vec()
    } else {
        s.into()
    })
}

/// The line program's file for `path`: its directory (none for a bare name: the compile
/// directory) and its name.
pub(super) fn file_id<'m>(
    program: &mut LineProgram,
    files: &mut HashMap<&'m str, FileId>,
    path: &'m str,
) -> FileId {
    if let Some(&id) = files.get(path) {
        return id;
    }
    let (dir, name) = match path.rfind('/') {
        Some(i) if i > 0 => (Some(&path[..i]), &path[i + 1..]),
        _ => (None, path),
    };
    let dir = match dir {
        Some(d) => program.add_directory(line_string(d)),
        None => program.default_directory(),
    };
    let id = program.add_file(line_string(name), dir, None);
    files.insert(path, id);
    id
}
