//! What a runnable program is expected to do, written beside it as `; expect:` comment lines:
//!
//! ```text
//! ; expect: result 832040          the entry's return value, as the interpreter gives it
//! ; expect: exit 7                 the exit code (default: 70 with `trap`, else the low 8 bits
//!                                  of `result`, else 0)
//! ; expect: stdout "bye\n"         standard output, exactly (empty if not given)
//! ; expect: trap <kind>            the program traps with this kind (exit code 70)
//! ; expect: stderr "<line>"        standard error, exactly this one line
//! ```
//!
//! The examples (`examples/`) and the runnable cases (`tests/run/`) carry their expectations
//! this way, once: every test that runs them reads them from the file, and `IRKIT_BLESS=1`
//! rewrites them from the actual run ([`Expect::rewrite`]).
//!
//! A program that needs options to mean what its expectations say names them on `; run:`
//! lines, given to every tool that runs it ([`run_args`]; blessing leaves them as they are):
//!
//! ```text
//! ; run: --max-depth 10000         the same call depth limit on every back end
//! ```

/// The expectations of one program.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Expect {
    /// The entry's return value.
    pub result: Option<i64>,
    /// The exit code, if given explicitly.
    pub exit: Option<i32>,
    /// Standard output.
    pub stdout: Option<String>,
    /// The trap kind.
    pub trap: Option<String>,
    /// The one line of standard error.
    pub stderr: Option<String>,
}

impl Expect {
    /// The expectations of `text`'s `; expect:` lines (none: all defaults).
    pub fn parse(text: &str) -> Result<Expect, String> {
        let mut e = Expect::default();
        for line in text.lines() {
            let Some(rest) = line.trim().strip_prefix("; expect:") else {
                continue;
            };
            let rest = rest.trim();
            let (key, val) = rest.split_once(' ').unwrap_or((rest, ""));
            match key {
                "result" => {
                    e.result = Some(val.parse().map_err(|_| format!("bad result {val}"))?);
                }
                "exit" => e.exit = Some(val.parse().map_err(|_| format!("bad exit code {val}"))?),
                "stdout" => e.stdout = Some(unescape(val)?),
                "trap" => e.trap = Some(val.to_string()),
                "stderr" => e.stderr = Some(unescape(val)?),
                _ => return Err(format!("unknown expectation `{key}`")),
            }
        }
        Ok(e)
    }

    /// Whether `text` states any expectation.
    pub fn stated(text: &str) -> bool {
        text.lines()
            .any(|l| l.trim_start().starts_with("; expect:"))
    }

    /// The exit code of a process running the program.
    pub fn exit_code(&self) -> i32 {
        match (self.exit, &self.trap, self.result) {
            (Some(code), _, _) => code,
            (None, Some(_), _) => 70,
            (None, None, Some(r)) => (r & 0xff) as i32,
            (None, None, None) => 0,
        }
    }

    /// The `; expect:` lines, in a fixed order, omitting what the defaults already say.
    pub fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(r) = self.result {
            out.push(format!("; expect: result {r}"));
        }
        let implied = Expect {
            exit: None,
            ..self.clone()
        }
        .exit_code();
        if let Some(code) = self.exit.filter(|&c| c != implied) {
            out.push(format!("; expect: exit {code}"));
        }
        if let Some(s) = self.stdout.as_deref().filter(|s| !s.is_empty()) {
            out.push(format!("; expect: stdout {}", escape(s)));
        }
        if let Some(t) = &self.trap {
            out.push(format!("; expect: trap {t}"));
        }
        if let Some(s) = &self.stderr {
            out.push(format!("; expect: stderr {}", escape(s)));
        }
        out
    }

    /// `text` with its `; expect:` lines replaced by this expectation's: where the first one
    /// was, or else after the leading comment lines.
    pub fn rewrite(&self, text: &str) -> String {
        let lines: Vec<&str> = text.lines().collect();
        let first = lines
            .iter()
            .position(|l| l.trim_start().starts_with("; expect:"))
            .unwrap_or_else(|| {
                lines
                    .iter()
                    .position(|l| !l.trim_start().starts_with(';'))
                    .unwrap_or(lines.len())
            });
        let mut out = String::new();
        for (k, line) in lines.iter().enumerate() {
            if k == first {
                for e in self.lines() {
                    out.push_str(&e);
                    out.push('\n');
                }
            }
            if !line.trim_start().starts_with("; expect:") {
                out.push_str(line);
                out.push('\n');
            }
        }
        if first >= lines.len() {
            for e in self.lines() {
                out.push_str(&e);
                out.push('\n');
            }
        }
        out
    }
}

/// The options of `text`'s `; run:` lines, in order, split at whitespace.
pub fn run_args(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("; run:"))
        .flat_map(str::split_whitespace)
        .map(str::to_string)
        .collect()
}

/// A string as an expectation writes it: quoted, with `\n`, `\t`, `\\` and `\"` escaped.
pub fn escape(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The string an expectation wrote with [`escape`].
pub fn unescape(s: &str) -> Result<String, String> {
    let s = s
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .ok_or_else(|| format!("not a quoted string: {s}"))?;
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('\\') => out.push('\\'),
            Some('"') => out.push('"'),
            other => return Err(format!("bad escape \\{other:?}")),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_expectation_reads_back_what_it_writes() {
        let e = Expect {
            result: Some(-1_581_614_984),
            stdout: Some("0 1\t\"x\"\\\n".into()),
            ..Expect::default()
        };
        let text = e.rewrite("; a program\n\n@main: fn() -> i32 = func\n");
        assert!(
            text.starts_with("; a program\n; expect: result -1581614984\n"),
            "{text}"
        );
        assert_eq!(Expect::parse(&text), Ok(e.clone()));
        assert_eq!(e.exit_code(), 120);
        assert_eq!(e.rewrite(&text), text, "rewriting is idempotent");
    }

    #[test]
    fn run_lines_give_options_and_survive_a_rewrite() {
        let text =
            "; run: --max-depth 10\n; run: -O\n; expect: result 1\n@main: fn() -> i32 = func\n";
        assert_eq!(run_args(text), ["--max-depth", "10", "-O"]);
        let e = Expect::parse(text).expect("parses");
        assert_eq!(run_args(&e.rewrite(text)), run_args(text));
    }

    #[test]
    fn the_exit_code_follows_the_trap_then_the_result() {
        let trap = Expect {
            trap: Some("unreachable executed".into()),
            ..Expect::default()
        };
        assert_eq!(trap.exit_code(), 70);
        assert_eq!(trap.lines(), ["; expect: trap unreachable executed"]);
        let exit = Expect {
            exit: Some(7),
            ..Expect::default()
        };
        assert_eq!(exit.lines(), ["; expect: exit 7"]);
        assert_eq!(Expect::default().lines(), Vec::<String>::new());
    }
}

/// One example program of `examples/`: a file, or a directory whose modules are linked
/// together.
#[derive(Clone, Debug)]
pub struct Example {
    /// The file's stem or the directory's name.
    pub name: String,
    /// Its modules, in path order.
    pub files: Vec<std::path::PathBuf>,
    /// The module that states the expectations: the only one with `; expect:` lines (for a
    /// single file, that file), or why there is none.
    pub stating: Result<std::path::PathBuf, String>,
}

/// The `.ir` files directly in `dir` and its subdirectories, each sorted by path.
fn entries(dir: &std::path::Path) -> (Vec<std::path::PathBuf>, Vec<std::path::PathBuf>) {
    let mut all: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    all.sort();
    let (dirs, files): (Vec<_>, Vec<_>) = all.into_iter().partition(|p| p.is_dir());
    let files = files
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "ir"))
        .collect();
    (files, dirs)
}

/// Every example of the repository's `examples/` directory: each `.ir` file, and each
/// directory of `.ir` files.
pub fn examples() -> Vec<Example> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let name_of = |p: &std::path::Path| {
        p.file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned()
    };
    let (files, dirs) = entries(&root);
    let mut out: Vec<Example> = files
        .into_iter()
        .map(|f| Example {
            name: name_of(&f),
            files: vec![f.clone()],
            stating: Ok(f),
        })
        .collect();
    for d in dirs {
        let name = name_of(&d);
        let (files, _) = entries(&d);
        if files.is_empty() {
            // Not an IR program (examples/wasm-c holds C and WebAssembly sources).
            continue;
        }
        let stating: Vec<&std::path::PathBuf> = files
            .iter()
            .filter(|f| std::fs::read_to_string(f).is_ok_and(|t| Expect::stated(&t)))
            .collect();
        let stating = match stating.as_slice() {
            [one] => Ok((*one).clone()),
            _ => Err(format!(
                "examples/{name}: exactly one module must state the `; expect:` lines"
            )),
        };
        out.push(Example {
            name,
            files,
            stating,
        });
    }
    out
}
