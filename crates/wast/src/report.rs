//! What a script run found: one verdict per command, and the counts.

/// The verdict on one command of a script.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// It did what the script expects.
    Passed,
    /// It did not: what was expected and what happened.
    Failed(String),
    /// It was not run: why (something out of the front end's scope).
    Skipped(String),
}

/// One command and its verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandResult {
    /// The line of the command in its file, from 1.
    pub line: usize,
    /// The command (`module`, `assert_return`, …).
    pub command: &'static str,
    /// The verdict.
    pub verdict: Verdict,
}

/// The verdicts on every command of one script.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// The script's file name, as given.
    pub file: String,
    /// One per command, in order.
    pub results: Vec<CommandResult>,
}

/// How many commands passed, failed and were skipped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Passed.
    pub passed: usize,
    /// Failed.
    pub failed: usize,
    /// Skipped.
    pub skipped: usize,
}

impl Counts {
    /// All commands counted.
    pub fn total(&self) -> usize {
        self.passed + self.failed + self.skipped
    }

    /// Adds `other`'s counts.
    pub fn add(&mut self, other: Counts) {
        self.passed += other.passed;
        self.failed += other.failed;
        self.skipped += other.skipped;
    }
}

impl std::fmt::Display for Counts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} passed, {} failed, {} skipped",
            self.passed, self.failed, self.skipped
        )
    }
}

impl Report {
    /// The counts of its verdicts.
    pub fn counts(&self) -> Counts {
        let mut c = Counts::default();
        for r in &self.results {
            match r.verdict {
                Verdict::Passed => c.passed += 1,
                Verdict::Failed(_) => c.failed += 1,
                Verdict::Skipped(_) => c.skipped += 1,
            }
        }
        c
    }

    /// One line per failed command: `file:line: command: what`.
    pub fn failures(&self) -> impl Iterator<Item = String> + '_ {
        self.results.iter().filter_map(|r| match &r.verdict {
            Verdict::Failed(why) => Some(format!("{}:{}: {}: {why}", self.file, r.line, r.command)),
            _ => None,
        })
    }

    /// The distinct reasons of skipped commands, each with how many.
    pub fn skip_reasons(&self) -> Vec<(String, usize)> {
        let mut out: Vec<(String, usize)> = Vec::new();
        for r in &self.results {
            if let Verdict::Skipped(why) = &r.verdict {
                match out.iter_mut().find(|(w, _)| w == why) {
                    Some((_, n)) => *n += 1,
                    None => out.push((why.clone(), 1)),
                }
            }
        }
        out
    }
}
