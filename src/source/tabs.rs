//! The tabs go-yaml refuses and yaml-rust2 reads. In block context go-yaml (kubectl's reader,
//! and the launcher's yaml.v3) eats tabs between tokens only where no key may begin, and a
//! key may begin after a sequence entry's `-`: so `- \titem` (a tab after the dash, with or
//! without spaces before it) is refused by kubectl (`found character that cannot start any
//! token`), while yaml-rust2 reads it. After a mapping key's `:` a key may not begin, and
//! go-yaml reads `name:\tweb` (which yaml-rust2 refuses, before any of this is asked).

use yaml_rust2::scanner::{Scanner, Token, TokenType};

use super::Position;

/// The first tab go-yaml refuses after a block sequence entry's `-`: where it is. `scan` and
/// `walk` are the same text's characters, read twice (one for the tokens, one to look at the
/// blanks before each entry), so a long text is never held.
pub fn go_yaml_refused_tab(
    scan: impl Iterator<Item = char>,
    walk: impl Iterator<Item = char>,
) -> Option<Position> {
    let mut walk = Walk {
        chars: walk.peekable(),
        index: 0,
        at: Position { line: 1, column: 1 },
        blank_after: None,
        first_tab: None,
        spaces_only: true,
        last: '\n',
    };
    let mut flow = 0usize;
    for Token(mark, kind) in Scanner::new(scan) {
        match kind {
            TokenType::FlowSequenceStart | TokenType::FlowMappingStart => flow += 1,
            TokenType::FlowSequenceEnd | TokenType::FlowMappingEnd => flow = flow.saturating_sub(1),
            TokenType::BlockEntry if flow == 0 => {
                // Its mark is where the entry's node begins, past the blanks after the `-`.
                while walk.index < mark.index() {
                    walk.step()?;
                }
                if walk.index == mark.index() && walk.blank_after == Some('-') {
                    if let Some(tab) = walk.first_tab {
                        return Some(tab);
                    }
                }
            }
            _ => {}
        }
    }
    None
}

/// The second reading of the text: where it stands.
struct Walk<I: Iterator<Item = char>> {
    chars: std::iter::Peekable<I>,
    /// The index of the next character (as the scanner's marks count).
    index: usize,
    /// Its line and column.
    at: Position,
    /// In a run of spaces and tabs on a line: the character before the run.
    blank_after: Option<char>,
    /// In that run: its first tab, when only spaces come before it.
    first_tab: Option<Position>,
    /// Whether the run so far is spaces.
    spaces_only: bool,
    /// The last character that is not a space or a tab.
    last: char,
}

impl<I: Iterator<Item = char>> Walk<I> {
    /// One character on; `None` at the text's end.
    fn step(&mut self) -> Option<()> {
        let c = self.chars.next()?;
        match c {
            ' ' | '\t' => {
                if self.blank_after.is_none() {
                    self.blank_after = Some(self.last);
                    self.first_tab = None;
                    self.spaces_only = true;
                }
                if c == '\t' && self.spaces_only {
                    self.first_tab = Some(self.at);
                }
                self.spaces_only &= c == ' ';
            }
            _ => {
                self.blank_after = None;
                self.last = c;
            }
        }
        self.at = if c == '\n' {
            Position { line: self.at.line + 1, column: 1 }
        } else {
            Position { column: self.at.column + 1, ..self.at }
        };
        self.index += 1;
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(text: &str) -> Option<(usize, usize)> {
        go_yaml_refused_tab(text.chars(), text.chars()).map(|at| (at.line, at.column))
    }

    #[test]
    fn a_tab_after_a_block_entry_is_refused_where_go_yaml_refuses_it() {
        // Read by go-yaml: spaces after a dash, tabs after a key's colon or a scalar, tabs in
        // flow and in text, a dash in text.
        for ok in [
            "l:\n- b\n",
            "a: \tb\n",
            "a:\t\"8080\"\n",
            "spec:\t\n  a: b\n",
            "l:\n- b\t# c\n",
            "m: [b,\tc]\n",
            "a: \"- \tx\"\n",
            "a: |\n  - \tx\n",
            "a: b - \tc\n",
        ] {
            assert_eq!(refused(ok), None, "{ok:?}");
        }
        assert_eq!(refused("l:\n  - \tx\n"), Some((2, 5)));
        assert_eq!(refused("l:\n  -\tx\n"), Some((2, 4)));
        assert_eq!(refused("l:\n- a\n-  \t\n  b: c\n"), Some((3, 4)));
        assert_eq!(refused("- - \tx\n"), Some((1, 5)));
    }
}
