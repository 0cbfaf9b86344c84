//! Text from inputs, escaped for where it is shown.
//!
//! A string that came from outside (a node's error message, an archive member's name, a
//! result file's field, a child process's stderr) may hold control characters: an escape
//! sequence that recolours, moves the cursor, retitles the window or hides what follows, a
//! carriage return that overwrites the line, a newline that forges a line of our own output,
//! a bidirectional override that shows text in another order than it is. [`printable`] shows
//! each of them as a visible escape (`\u{1b}`, `\n`), and leaves everything else as it is.
//! [`markdown_cell`] also escapes what would end or restyle a markdown table cell.

use std::{borrow::Cow, fmt};

/// Whether `c` must not reach a terminal as it is: every Unicode control character (C0,
/// DEL, C1: escape sequences, carriage return, newline, tab, backspace, bell) and the
/// invisible formatting characters that reorder or hide text (bidirectional embeddings,
/// overrides and isolates, the line and paragraph separators, zero-width characters and
/// the byte-order mark).
pub fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}'
                | '\u{200b}'..='\u{200f}'
                | '\u{2028}'..='\u{202e}'
                | '\u{2060}'..='\u{2069}'
                | '\u{feff}'
        )
}

fn push_escaped(out: &mut impl fmt::Write, c: char) -> fmt::Result {
    match c {
        '\n' => out.write_str("\\n"),
        '\r' => out.write_str("\\r"),
        '\t' => out.write_str("\\t"),
        c => write!(out, "\\u{{{:x}}}", c as u32),
    }
}

/// `s` with every [`is_unsafe`] character shown as a visible escape (`\n`, `\r`, `\t`,
/// `\u{1b}`); borrowed when there is nothing to escape.
pub fn printable(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_unsafe) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if is_unsafe(c) {
            // Writing into a String cannot fail.
            let _ = push_escaped(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Multi-line text (a table, a report, an error chain) with each line [`printable`]: the
/// line breaks stay, every other control character is shown as an escape.
pub fn printable_lines(s: &str) -> Cow<'_, str> {
    if !s.chars().any(|c| c != '\n' && is_unsafe(c)) {
        return Cow::Borrowed(s);
    }
    let lines: Vec<Cow<'_, str>> = s.split('\n').map(printable).collect();
    Cow::Owned(lines.join("\n"))
}

/// Bytes of unknown encoding (a child's output, a tar header) as printable text: invalid
/// UTF-8 shown as U+FFFD, then [`printable`].
pub fn printable_bytes(bytes: &[u8]) -> String {
    printable(&String::from_utf8_lossy(bytes)).into_owned()
}

/// A [`fmt::Display`] of a string with [`printable`]'s escapes, written without an
/// intermediate allocation: `format!("{}", Shown(name))`.
#[derive(Debug, Clone, Copy)]
pub struct Shown<'a>(pub &'a str);

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in self.0.chars() {
            if is_unsafe(c) {
                push_escaped(f, c)?;
            } else {
                fmt::Write::write_char(f, c)?;
            }
        }
        Ok(())
    }
}

/// A cell of a markdown table: [`printable`] (so no newline ends the row), `\\` and `|`
/// escaped with a backslash (so no pipe opens another cell), and `<`, `>` as entities (so
/// no raw HTML is rendered by a markdown viewer).
pub fn markdown_cell(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            c if is_unsafe(c) => {
                let _ = push_escaped(&mut out, c);
            }
            '\\' => out.push_str("\\\\"),
            '|' => out.push_str("\\|"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

/// The last `lines` non-empty lines of `text`, each [`printable`], joined with ` | `, and at
/// most `max_chars` characters of them (the end kept, `…` in front when cut): the part of a
/// child's output an error message quotes.
pub fn tail(text: &str, lines: usize, max_chars: usize) -> String {
    let kept: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .take(lines)
        .collect();
    let joined = kept
        .into_iter()
        .rev()
        .map(|l| printable(l.trim_end()).into_owned())
        .collect::<Vec<_>>()
        .join(" | ");
    let count = joined.chars().count();
    if count <= max_chars {
        return joined;
    }
    let cut: String = joined.chars().skip(count - max_chars).collect();
    format!("…{cut}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn escape_sequences_and_line_breaks_are_shown_not_sent() {
        assert_eq!(printable("ok"), "ok");
        assert!(matches!(printable("plain text"), Cow::Borrowed(_)));
        assert_eq!(printable("\u{1b}[31mred"), "\\u{1b}[31mred");
        assert_eq!(printable("a\nb\rc\td"), "a\\nb\\rc\\td");
        assert_eq!(printable("\u{202e}txt.exe"), "\\u{202e}txt.exe");
        assert_eq!(printable("\u{9b}2J"), "\\u{9b}2J");
        assert_eq!(printable("\u{7f}"), "\\u{7f}");
        assert_eq!(printable("héllo ✓"), "héllo ✓");
        assert_eq!(Shown("x\u{7}y").to_string(), "x\\u{7}y");
        assert_eq!(
            printable_lines("a\u{1b}[2J\nb\rc\n"),
            "a\\u{1b}[2J\nb\\rc\n"
        );
        assert!(matches!(printable_lines("a\nb\n"), Cow::Borrowed(_)));
        assert_eq!(
            printable_bytes(b"\xff\x1b]0;title\x07"),
            "\u{fffd}\\u{1b}]0;title\\u{7}"
        );
    }

    #[test]
    fn markdown_cells_cannot_open_cells_rows_or_tags() {
        assert_eq!(
            markdown_cell("a|b\n|c|<script>\\|"),
            r"a\|b\n\|c\|&lt;script&gt;\\\|"
        );
    }

    #[test]
    fn tails_are_bounded_and_printable() {
        let log = "first\n\nsecond\nthird \u{1b}[2J\n";
        assert_eq!(tail(log, 2, 100), "second | third \\u{1b}[2J");
        assert_eq!(tail(log, 10, 5), "…b}[2J");
        assert_eq!(tail("", 3, 10), "");
        assert!(tail(&"x".repeat(1 << 20), 5, 200).chars().count() <= 201);
    }

    proptest! {
        /// Whatever the input, the output holds no character a terminal would act on, and
        /// the escaping is exactly the identity on safe text.
        #[test]
        fn nothing_unsafe_survives(s in any::<String>()) {
            let shown = printable(&s);
            prop_assert!(!shown.chars().any(is_unsafe), "{shown:?}");
            prop_assert_eq!(Shown(&s).to_string(), shown.as_ref());
            if !s.chars().any(is_unsafe) {
                prop_assert_eq!(shown.as_ref(), s.as_str());
            }
            let cell = markdown_cell(&s);
            prop_assert!(!cell.chars().any(is_unsafe));
            prop_assert!(!cell.contains('<') && !cell.contains('>'));
            // Every pipe left in a cell follows an odd number of backslashes: escaped.
            let chars: Vec<char> = cell.chars().collect();
            for (i, _) in chars.iter().enumerate().filter(|(_, c)| **c == '|') {
                let slashes = chars[..i].iter().rev().take_while(|c| **c == '\\').count();
                prop_assert!(slashes % 2 == 1, "{cell:?}");
            }
        }
    }
}
