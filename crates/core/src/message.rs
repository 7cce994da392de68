//! Wording shared by the messages of every crate, so that they read alike.

/// `n` followed by `word` in the singular or the plural: `1 argument`, `2 arguments`,
/// `0 parameters`.
pub fn count(n: usize, word: &str) -> String {
    if n == 1 {
        format!("{n} {word}")
    } else {
        format!("{n} {word}s")
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn one_is_singular_every_other_count_plural() {
        assert_eq!(super::count(1, "argument"), "1 argument");
        assert_eq!(super::count(0, "argument"), "0 arguments");
        assert_eq!(super::count(2, "parameter"), "2 parameters");
    }
}
