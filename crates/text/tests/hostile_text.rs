//! Text no one on the team wrote: long lines, control bytes, endless nesting and token soup.
//! Messages quote a short window of the line with control characters escaped, and the parser's
//! memory stays within a small multiple of the input (it holds a few tokens of lookahead, never
//! the whole token stream).

use irkit_testkit::{Counting, Heap};

#[global_allocator]
static ALLOC: Counting = Counting;

/// The tests of this file run one at a time: the counters are process-wide.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    Heap::serial()
}

/// The most heap bytes held at once while parsing `source`, beyond what was live before.
fn peak_parsing(source: &str) -> usize {
    let (r, heap) = Heap::of(|| irkit_text::parse(source, "big.ir"));
    drop(r);
    heap.peak
}

#[test]
fn a_megabyte_of_open_parens_is_parsed_in_a_few_times_its_size() {
    let _serial = serial();
    let source = "(".repeat(1 << 20);
    let peak = peak_parsing(&source);
    assert!(
        peak <= 4 * source.len(),
        "{peak} bytes held for a {}-byte input",
        source.len()
    );
}

#[test]
fn a_long_line_of_junk_tokens_is_parsed_in_a_few_times_its_size() {
    let _serial = serial();
    // Every token is an error or a skipped token of a failed statement: nothing is kept.
    let source = "} ) ] = , -> ".repeat(1 << 16) + "\n" + &"@x = 1 2 3 4 ".repeat(1 << 16);
    let peak = peak_parsing(&source);
    assert!(
        peak <= 4 * source.len(),
        "{peak} bytes held for a {}-byte input",
        source.len()
    );
}

#[test]
fn an_error_on_a_long_line_quotes_a_window_of_it() {
    let _serial = serial();
    let mut source = "@f: fn() -> i32 = func {\n^e:\n  %v: i32 = iadd ".to_string();
    source.push_str(&"i32 1, ".repeat(100_000));
    source.push_str("$\n  ret %v\n}\n");
    let errors = irkit_text::parse(&source, "long.ir").unwrap_err();
    let rendered = errors.render();
    assert!(
        rendered.len() < 1_000,
        "{} bytes of rendering:\n{}",
        rendered.len(),
        &rendered[..rendered.len().min(2_000)]
    );
    let first = &errors.errors()[0];
    assert!(first.source_line.chars().count() <= irkit_text::WINDOW + 2);
    assert!(first.source_line.starts_with('…'), "{}", first.source_line);
    // The caret points at the character the column names.
    let at: String = first
        .source_line
        .chars()
        .skip(first.caret as usize - 1)
        .take(2)
        .collect();
    let line = source.lines().nth(first.line as usize - 1).unwrap();
    let expected: String = line
        .chars()
        .skip(first.column as usize - 1)
        .take(2)
        .collect();
    assert_eq!(at, expected, "{}", first.render());
}

#[test]
fn control_characters_never_reach_a_message_raw() {
    let _serial = serial();
    let source = "@f: fn() -> i32 = func {\n^e:\n  ret i32 \u{1b}[2J\u{7} %\u{0}x\n}\n";
    let errors = irkit_text::parse(source, "esc.ir").unwrap_err();
    for e in errors.errors() {
        let text = e.render();
        assert!(
            !text
                .chars()
                .any(|c| c.is_control() && c != '\n' && c != '\t'),
            "{text:?}"
        );
    }
    assert!(errors.render().contains("\\u{1b}"), "{}", errors.render());
}

#[test]
fn a_long_name_is_quoted_short() {
    let _serial = serial();
    let long = "n".repeat(100_000);
    let source = format!("@f: fn() -> i32 = func {{\n^e:\n  ret %{long}\n}}\n");
    let errors = irkit_text::parse(&source, "name.ir").unwrap_err();
    let message = &errors.errors()[0].message;
    assert!(message.contains("undefined name"), "{message}");
    assert!(
        message.len() < 200,
        "{} bytes: {message:.200}",
        message.len()
    );
}

#[test]
fn the_same_input_gives_the_same_messages() {
    let _serial = serial();
    let source = "@a: fn( -> = func {\n ^x(%y: i32 \n  %z = iadd %y, @q\n ret\n}\n#[junk(\"\\q\")] @b: i8 = global_var i8 300\n";
    let one = irkit_text::parse(source, "same.ir").unwrap_err().render();
    let two = irkit_text::parse(source, "same.ir").unwrap_err().render();
    assert_eq!(one, two);
}

/// `n` small functions, each referring to the next (a forward reference across items).
fn many_small_functions(n: usize) -> String {
    let mut s = String::new();
    for i in 0..n {
        s.push_str(&format!(
            "@f{i}: fn(i32) -> i32 = func {{\n^entry(%a: i32):\n  %r: i32 = call @f{}(%a)\n  ret %r\n}}\n",
            (i + 1) % n
        ));
    }
    s
}

/// One function of `n` chained additions.
fn one_long_function(n: usize) -> String {
    let mut s = String::from("@main: fn(i32) -> i32 = func {\n^entry(%a: i32):\n");
    let mut prev = "%a".to_string();
    for i in 0..n {
        s.push_str(&format!("  %v{i}: i32 = iadd {prev}, %a\n"));
        prev = format!("%v{i}");
    }
    s.push_str(&format!("  ret {prev}\n}}\n"));
    s
}

#[test]
fn many_small_functions_parse_within_twenty_times_their_size() {
    let _serial = serial();
    let source = many_small_functions(20_000);
    let peak = peak_parsing(&source);
    assert!(
        peak <= 20 * source.len(),
        "{peak} bytes held for a {}-byte input",
        source.len()
    );
}

#[test]
fn one_long_function_parses_within_twenty_times_its_size() {
    let _serial = serial();
    let source = one_long_function(50_000);
    let peak = peak_parsing(&source);
    assert!(
        peak <= 20 * source.len(),
        "{peak} bytes held for a {}-byte input",
        source.len()
    );
}
