//! The tabs go-yaml refuses and yaml-rust2 reads. In block context go-yaml (kubectl's reader,
//! and the launcher's yaml.v3) eats tabs between tokens only where no key may begin; a key may
//! begin at a line's start and after a sequence entry's `-`. So a tab that begins a line (a
//! line of blanks, or of a comment, that starts with a tab) and a tab after a `-` (`- \titem`)
//! are refused by kubectl (`found character that cannot start any token`; in a block or plain
//! scalar, a tab where indentation is expected), while yaml-rust2 reads them. Inside a quoted
//! scalar and in flow context go-yaml reads tabs. After a mapping key's `:` a key may not
//! begin, and go-yaml reads `name:\tweb` (yaml-rust2 refuses it; the general reader reads the
//! document again with the tab taken for a space, as go-yaml takes it).

use std::cell::RefCell;
use std::collections::VecDeque;

use yaml_rust2::scanner::{Scanner, TScalarStyle, Token, TokenType};

use crate::source::Position;

/// Where a tab go-yaml refuses is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefusedTab {
    /// It begins a line (`said` is what go-yaml says of it: after a plain scalar, that it
    /// violates the scalar's indentation).
    LineStart {
        /// Where it is.
        at: Position,
        /// What go-yaml says of it.
        said: &'static str,
    },
    /// It follows a sequence entry's `-` (after spaces, or none).
    AfterDash(Position),
    /// It follows a complex key's `?` or the `:` of its value (after spaces, or none): in
    /// block context a key may begin there, so go-yaml does not eat the tab.
    AfterComplexKey {
        /// Where it is.
        at: Position,
        /// The indicator it follows.
        indicator: char,
    },
    /// It follows the spaces a line begins with, where go-yaml reads indentation (`said` is
    /// what go-yaml says of it): between tokens, before a plain scalar's indentation ends, or
    /// before a block scalar's.
    Indentation {
        /// Where it is.
        at: Position,
        /// What go-yaml says of it.
        said: &'static str,
    },
}

impl RefusedTab {
    /// Where it is.
    pub fn at(self) -> Position {
        match self {
            RefusedTab::LineStart { at, .. }
            | RefusedTab::AfterDash(at)
            | RefusedTab::AfterComplexKey { at, .. }
            | RefusedTab::Indentation { at, .. } => at,
        }
    }
}

/// What go-yaml says of a tab where no token may begin with one.
const CANNOT_START: &str = "found character that cannot start any token";
/// What go-yaml says of a tab in a plain scalar's continuation line, left of its indentation.
const VIOLATES_INDENTATION: &str = "found a tab character that violates indentation";
/// What go-yaml says of a tab in a block scalar's indentation.
const WHERE_SPACE_EXPECTED: &str = "found a tab character where an indentation space is expected";

/// What the text just walked is, as go-yaml reads the indentation of the lines that follow.
#[derive(Clone, Copy, Debug)]
enum After {
    /// Between tokens: a tab after a line's spaces is refused.
    Tokens,
    /// A plain scalar's text: go-yaml reads a tab after a continuation line's spaces as the
    /// scalar's blanks from column `indent` (counted from 0: one right of the innermost block
    /// collection) on, and refuses it left of that (yaml-rust2 reads it on a blank line), or
    /// once a comment has ended the scalar.
    Plain { indent: usize, comment: bool },
}

/// The first tab go-yaml refuses where yaml-rust2 reads it: where it is. `read` gives the
/// text's characters afresh; they are read twice (one for the tokens, one to look at the text
/// between them), so a long text is never held. yaml-rust2 is given every run of tabs after a
/// `:` that it could stop at (`TabsAfterColons`) as spaces, as go-yaml reads them after a
/// key: in text the tokens are the same with a space there, and none of the tabs looked at
/// here is in such a run (each follows a line's start, its spaces or a `-`).
pub fn go_yaml_refused_tab<I: Iterator<Item = char>>(read: impl Fn() -> Option<I>) -> Option<RefusedTab> {
    one_pass(TabsAfterColons::new(read()?, None), read()?)
}

/// The runs of tabs after a mapping key's `:` that go-yaml reads as the space it separates
/// with and yaml-rust2 refuses (`name:\tweb`): for each, the index (in characters, as the
/// scanner's marks count) of the character after it, in the text's order. Found in one
/// reading of the text, not one a tab: every run of tabs between a `:` and a letter, a digit,
/// `_` or `-` is taken for spaces, and yaml-rust2's tokens say which of those `:` are value
/// indicators. A run in a quoted or block scalar, or in a comment, is text, which a space in
/// place of its tabs scans the same, so the tokens are the text's own. Runs past an error
/// yaml-rust2 stops at are not looked at: a reading of the text stops there too.
pub(crate) fn tabs_after_colons(chars: impl Iterator<Item = char>) -> Vec<usize> {
    let runs = RefCell::new(VecDeque::new());
    let mut found = Vec::new();
    for Token(mark, kind) in Scanner::new(TabsAfterColons::new(chars, Some(&runs))) {
        if kind != TokenType::Value {
            continue;
        }
        // Value indicators come in the text's order, each after the runs before it were read.
        let mut runs = runs.borrow_mut();
        while let Some((colon, after)) = runs.front().copied().filter(|(colon, _)| *colon <= mark.index()) {
            runs.pop_front();
            if colon == mark.index() {
                found.push(after);
            }
        }
    }
    found
}

/// Characters with every run of tabs between a `:` and a letter, a digit, `_` or `-` given as
/// spaces: the runs yaml-rust2 refuses after a value indicator. Each run's `:` and the index
/// after it are kept in `runs`, when given.
struct TabsAfterColons<'r, I: Iterator<Item = char>> {
    chars: std::iter::Peekable<I>,
    index: usize,
    /// Characters of a run still to give, and which: a space, or the tab itself.
    held: usize,
    held_as: char,
    runs: Option<&'r RefCell<VecDeque<(usize, usize)>>>,
}

impl<'r, I: Iterator<Item = char>> TabsAfterColons<'r, I> {
    fn new(chars: I, runs: Option<&'r RefCell<VecDeque<(usize, usize)>>>) -> Self {
        TabsAfterColons { chars: chars.peekable(), index: 0, held: 0, held_as: ' ', runs }
    }
}

impl<I: Iterator<Item = char>> Iterator for TabsAfterColons<'_, I> {
    type Item = char;

    fn next(&mut self) -> Option<char> {
        if self.held > 0 {
            self.held -= 1;
            self.index += 1;
            return Some(self.held_as);
        }
        let c = self.chars.next()?;
        self.index += 1;
        if c == ':' && self.chars.peek() == Some(&'\t') {
            // The run is held back to see what follows it.
            let mut run = 0;
            while self.chars.next_if_eq(&'\t').is_some() {
                run += 1;
            }
            let refused =
                self.chars.peek().is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'));
            if let Some(runs) = self.runs.filter(|_| refused) {
                runs.borrow_mut().push_back((self.index - 1, self.index + run));
            }
            (self.held, self.held_as) = (run, if refused { ' ' } else { '\t' });
        }
        Some(c)
    }
}

/// One pass: yaml-rust2's tokens of `scan`, and `walk` (the same text) walked to each.
fn one_pass(scan: impl Iterator<Item = char>, walk: impl Iterator<Item = char>) -> Option<RefusedTab> {
    let mut walk = Walk {
        chars: walk.peekable(),
        index: 0,
        at: Position { line: 1, column: 1 },
        blank_after: None,
        first_tab: None,
        spaces_only: true,
        last: '\n',
        block: true,
        line_start_tab: None,
        indicator: None,
        indicator_tab: None,
        blanks_only: true,
        after: After::Tokens,
        indentation_tab: None,
    };
    let mut flow = 0usize;
    // The columns (from 0) of the open block collections, as go-yaml's indentation stack.
    let mut indents: Vec<usize> = Vec::new();
    let scanner = Scanner::new(scan);
    // A block mapping begun, whose column its first key's mark gives (its own mark is at the
    // key's `:`).
    let mut mapping_begun = false;
    for Token(mark, kind) in scanner {
        // Up to the token: a tab beginning a line on the way, in block context, is refused.
        walk.block = flow == 0;
        // A block scalar's mark is at its text, past its header and its first line's
        // indentation, where go-yaml judges tabs otherwise: walked through from here.
        if flow == 0 && matches!(kind, TokenType::Scalar(TScalarStyle::Literal | TScalarStyle::Folded, _)) {
            if let Err(tab) = walk.through_block_scalar(indents.last().copied())? {
                return Some(tab);
            }
        }
        while walk.index < mark.index() {
            walk.step()?;
        }
        if let Some(tab) = walk.line_start_tab.or(walk.indicator_tab) {
            return Some(tab);
        }
        if let Some(tab) = walk.indentation_tab {
            return Some(tab);
        }
        // A continuation line's indentation, were this a plain scalar.
        let indent = indents.last().map_or(0, |c| c + 1);
        walk.after = After::Tokens;
        // A complex key's `?`, and the `:` of a value that begins its line (a complex key's,
        // or an empty key's): go-yaml allows a key after either, so it eats no tab there.
        let at = walk.chars.peek().copied().filter(|_| flow == 0 && walk.index == mark.index());
        walk.indicator = match (&kind, at) {
            (TokenType::Key, Some('?')) => Some((mark.index(), '?')),
            (TokenType::Value, Some(':')) if walk.blanks_only => Some((mark.index(), ':')),
            _ => None,
        };
        match kind {
            TokenType::BlockSequenceStart => indents.push(mark.col()),
            TokenType::BlockMappingStart => mapping_begun = true,
            TokenType::Key if mapping_begun => {
                indents.push(mark.col());
                mapping_begun = false;
            }
            TokenType::BlockEnd => {
                indents.pop();
            }
            TokenType::Scalar(TScalarStyle::Plain, _) if flow == 0 => {
                walk.after = After::Plain { indent, comment: false };
            }
            TokenType::FlowSequenceStart | TokenType::FlowMappingStart => flow += 1,
            TokenType::FlowSequenceEnd | TokenType::FlowMappingEnd => flow = flow.saturating_sub(1),
            // Its mark is where the entry's node begins, past the blanks after the `-`.
            TokenType::BlockEntry
                if flow == 0 && walk.index == mark.index() && walk.blank_after == Some('-') =>
            {
                if let Some(tab) = walk.first_tab {
                    return Some(RefusedTab::AfterDash(tab));
                }
            }
            // A quoted scalar's lines may begin with tabs: walked through to its closing quote.
            TokenType::Scalar(style @ (TScalarStyle::SingleQuoted | TScalarStyle::DoubleQuoted), _)
                if walk.index == mark.index() =>
            {
                walk.block = false;
                walk.step()?;
                walk.through_quote(style == TScalarStyle::DoubleQuoted)?;
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
    /// Whether the walk is in block context (outside flow collections and quoted scalars).
    block: bool,
    /// The first tab met in block context at a line's start.
    line_start_tab: Option<RefusedTab>,
    /// A complex key's `?`, or the `:` of its value, just walked to: its index, and which.
    indicator: Option<(usize, char)>,
    /// The first tab met in the blanks right after such an indicator.
    indicator_tab: Option<RefusedTab>,
    /// Whether the line so far is spaces.
    blanks_only: bool,
    /// What the text walked since the last token is.
    after: After,
    /// The first tab met in block context after a line's spaces, where go-yaml refuses it.
    indentation_tab: Option<RefusedTab>,
}

impl<I: Iterator<Item = char>> Walk<I> {
    /// One character on; `None` at the text's end.
    fn step(&mut self) -> Option<()> {
        let c = self.chars.next()?;
        if let Some((_, indicator)) = self.indicator.filter(|(index, _)| self.index > *index) {
            match c {
                ' ' => {}
                '\t' => {
                    self.indicator_tab =
                        self.indicator_tab.or(Some(RefusedTab::AfterComplexKey { at: self.at, indicator }));
                    self.indicator = None;
                }
                _ => self.indicator = None,
            }
        }
        if c == '\t' && self.at.column == 1 && self.block && self.line_start_tab.is_none() {
            let said = match self.after {
                After::Plain { comment: false, .. } => VIOLATES_INDENTATION,
                After::Tokens | After::Plain { .. } => CANNOT_START,
            };
            self.line_start_tab = Some(RefusedTab::LineStart { at: self.at, said });
        }
        if c == '\t' && self.at.column > 1 && self.blanks_only && self.block && self.indentation_tab.is_none()
        {
            let said = match self.after {
                After::Tokens | After::Plain { comment: true, .. } => Some(CANNOT_START),
                After::Plain { indent, .. } if self.at.column - 1 < indent => Some(VIOLATES_INDENTATION),
                After::Plain { .. } => None,
            };
            self.indentation_tab = said.map(|said| RefusedTab::Indentation { at: self.at, said });
        }
        // A `#` after a blank (or first on a line) begins a comment, which ends a plain scalar.
        if let After::Plain { comment, .. } = &mut self.after {
            *comment |= c == '#' && (self.blanks_only || self.blank_after.is_some());
        }
        self.blanks_only = c == '\n' || self.blanks_only && c == ' ';
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

    /// Through a block scalar, from before its indicator (`|`, `>`; blanks may come first)
    /// through its header and its lines, as go-yaml reads them: its indentation is the header's indicator added to the innermost block
    /// collection's column (`parent`), or else the widest of the leading blank lines and the
    /// first line of text; a tab left of it, after a line's spaces, is refused (while it is
    /// not known yet, any such tab). Stops at the first line whose text begins left of the
    /// indentation, before that text: the scalar has ended there. `Some(Err)` at a refused
    /// tab, `None` at the text's end.
    fn through_block_scalar(&mut self, parent: Option<usize>) -> Option<Result<(), RefusedTab>> {
        // The blanks (and any comment, anchor or tag, which may hold a `|` or `>`) before the
        // indicator are between tokens, as stepped to any token.
        loop {
            match *self.chars.peek()? {
                '|' | '>' => break,
                first @ ('#' | '&' | '!') => {
                    let end = move |c: &char| *c == '\n' || first != '#' && matches!(c, ' ' | '\t');
                    while self.chars.peek().is_some_and(|c| !end(c)) {
                        self.step()?;
                    }
                }
                _ => self.step()?,
            }
        }
        // Its tabs are judged here, not as tokens' indentation.
        self.block = false;
        // The header, to its line's end: an indentation indicator is a digit 1-9.
        let mut increment = 0;
        let mut in_indicators = true;
        loop {
            let c = *self.chars.peek()?;
            self.step()?;
            match c {
                '\n' => break,
                '1'..='9' if in_indicators => increment = c as usize - '0' as usize,
                '|' | '>' | '+' | '-' if in_indicators => {}
                _ => in_indicators = false,
            }
        }
        let mut indent = match (increment, parent) {
            (0, _) => None,
            (n, Some(p)) => Some(p + n),
            (n, None) => Some(n),
        };
        let mut widest = 0;
        loop {
            // The line's spaces, to its indentation when it is known.
            while self.chars.peek() == Some(&' ') && indent.is_none_or(|i| self.at.column - 1 < i) {
                self.step()?;
            }
            let column = self.at.column - 1;
            widest = widest.max(column);
            let c = *self.chars.peek()?;
            if c == '\t' && indent.is_none_or(|i| column < i) {
                return Some(Err(RefusedTab::Indentation { at: self.at, said: WHERE_SPACE_EXPECTED }));
            }
            if !matches!(c, '\n' | '\r') {
                let known = *indent.get_or_insert(widest.max(parent.map_or(0, |p| p + 1)).max(1));
                if column < known {
                    return Some(Ok(()));
                }
            }
            // A line of the scalar (or a blank one): walked to its end.
            loop {
                let c = *self.chars.peek()?;
                self.step()?;
                if c == '\n' {
                    break;
                }
            }
        }
    }

    /// From just past a quoted scalar's opening quote to just past its closing one.
    fn through_quote(&mut self, double: bool) -> Option<()> {
        loop {
            let c = *self.chars.peek()?;
            self.step()?;
            match c {
                '\\' if double => self.step()?,
                '"' if double => return Some(()),
                '\'' if !double => {
                    if self.chars.peek() != Some(&'\'') {
                        return Some(());
                    }
                    self.step()?;
                }
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(text: &str) -> Option<(usize, usize)> {
        go_yaml_refused_tab(|| Some(text.chars())).map(|tab| (tab.at().line, tab.at().column))
    }

    #[test]
    fn a_tab_that_begins_a_line_or_follows_a_dash_is_refused_where_go_yaml_refuses_it() {
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
        // A tab that begins a line, outside quoted scalars and flow collections.
        assert_eq!(refused("a: 1\n\t\nb: 2\n"), Some((2, 1)));
        assert_eq!(refused("a:\n  b: 1\n\t# a comment\n  c: 2\n"), Some((3, 1)));
        assert_eq!(refused("a: |\n  x\n\t\n  y\n"), Some((3, 1)));
        assert_eq!(refused("a: \"x\n\ty \\\" z\n\t\"\nb: 'it''s\n\tq'\nc: [1,\n\t2]\nd: 1\n"), None);
        assert_eq!(refused("a: \"x\"\n\t\n"), Some((2, 1)));
        assert_eq!(refused("a: 1\n\t\n"), Some((2, 1)), "after the last token");
        // Past tabs after keys' colons, which yaml-rust2 stops at and go-yaml reads.
        assert_eq!(refused("a:\tb\nc:\t\td\nl:\n- \tx\n"), Some((4, 3)));
        assert_eq!(refused("q: \"\tx\"\na:\tb\n"), None);
        // However many there are: all are found in one reading, after the first pass.
        let keys: String = (0..200).map(|i| format!("k{i}:\tv\n")).collect();
        assert_eq!(refused(&format!("{keys}\t# c\n")), Some((201, 1)));
        assert_eq!(refused(&keys), None);
        // After a plain scalar, a blank line's tab right of its indentation is read as its
        // trailing blanks.
        assert_eq!(refused("a: 1\n  \t\n"), None);
    }

    #[test]
    fn a_tab_after_a_complex_key_s_indicators_is_refused_as_go_yaml_refuses_it() {
        let after = |text: &str| match go_yaml_refused_tab(|| Some(text.chars())) {
            Some(RefusedTab::AfterComplexKey { at, indicator }) => Some((at.line, at.column, indicator)),
            _ => None,
        };
        // After the `:` of a complex key's value, or of an empty key's, a key may begin: the
        // tab is refused, before text, a quoted scalar or a line's end, after spaces or none.
        assert_eq!(after("? a\n:\tb\n"), Some((2, 2, ':')));
        assert_eq!(after("m:\n  ? a\n  : \tb\n"), Some((3, 5, ':')));
        assert_eq!(after("? a\n:\t\"b\"\n"), Some((2, 2, ':')));
        assert_eq!(after("? a\n:\t\n"), Some((2, 2, ':')));
        assert_eq!(after("- ? a\n  :\tb\n"), Some((2, 4, ':')));
        assert_eq!(after(":\tb\n"), Some((1, 2, ':')));
        // Not after a simple key's `:`, a `?` in a plain scalar, in flow, or after spaces.
        for read in ["? a\n:  b\n", "a:\tb\n", "key?\t: v\n", "{? a :\tb}\n", "? a\n: b\t# c\n"] {
            assert_eq!(go_yaml_refused_tab(|| Some(read.chars())), None, "{read:?}");
        }
    }

    #[test]
    fn a_tab_that_begins_a_line_is_named_as_go_yaml_names_it() {
        let said = |text: &str| match go_yaml_refused_tab(|| Some(text.chars())) {
            Some(RefusedTab::LineStart { said, .. }) => Some(said),
            _ => None,
        };
        // After a plain scalar, go-yaml is still reading its blanks; after a quoted one, or a
        // comment that ended the plain one, it is between tokens.
        assert_eq!(said("a: b\n\t# c\n"), Some(VIOLATES_INDENTATION));
        assert_eq!(said("a: b\n\t"), Some(VIOLATES_INDENTATION));
        assert_eq!(said("a: \"b\"\n\t\n"), Some(CANNOT_START));
        assert_eq!(said("a: b\n  # c\n\t\n"), Some(CANNOT_START));
    }

    #[test]
    fn the_tabs_after_keys_colons_are_found_in_one_reading() {
        let at = |text: &str| {
            let mut runs: Vec<usize> = tabs_after_colons(text.chars()).into_iter().collect();
            runs.sort_unstable();
            runs
        };
        // After a key, a flow key and a quoted key; not in a quoted or block scalar, a
        // comment or a plain scalar's text, nor before what yaml-rust2 reads after a tab.
        let text = "a:\tb\nc:\t\t-d\ne: {f:\tg}\n\"h\":\ti\nq: \"x:\ty\"\ns: 'u:\tv'\nl: |\n  z:\tw\n# m:\tn\np: a:b\nr:\t\"t\"\n";
        let after =
            |needle: &str| text.find(needle).map(|i| text[..i].chars().count() + needle.len()).unwrap();
        assert_eq!(at(text), [after("a:\t"), after("c:\t\t"), after("{f:\t"), after("\"h\":\t")]);
        // Past an error yaml-rust2 stops at, none.
        assert_eq!(at("a:\tb\nc: [\nd:\te\n"), [3]);
    }

    #[test]
    fn a_tab_after_a_line_s_spaces_is_refused_where_go_yaml_reads_indentation() {
        let indentation = |text: &str| match go_yaml_refused_tab(|| Some(text.chars())) {
            Some(RefusedTab::Indentation { at, said }) => Some((at.line, at.column, said)),
            other => panic!("{text:?}: {other:?}"),
        };
        // Between tokens: after a key's `:`, a quoted scalar, a flow collection, a `---`, at
        // the text's start, and after a comment has ended a plain scalar.
        for (text, at) in [
            ("a:\n  \tb: c\n", (2, 3)),
            ("a: 'x'\n  \tb: c\n", (2, 3)),
            ("a: [1]\n  \t\n", (2, 3)),
            ("---\n \ta: 1\n", (2, 2)),
            (" \ta: 1\n", (1, 2)),
            ("a: b # note\n  \t\n", (2, 3)),
            ("a: b\n  # note\n   \t\n", (3, 4)),
            ("a: |\n  x\n# c\n  \t\n", (4, 3)),
        ] {
            assert_eq!(indentation(text), Some((at.0, at.1, CANNOT_START)), "{text:?}");
        }
        // Left of a plain scalar's continuation indentation, on a blank line yaml-rust2 reads
        // (an indentless sequence opens no indentation of its own, as in go-yaml).
        for (text, at) in [
            ("c:\n    args:\n    - --verbose\n  \t\n    - --port=80\n", (4, 3)),
            ("c:\n  args:\n  - --verbose\n  \t\n  - --port=80\n", (4, 3)),
            ("l:\n  - a\n  \t\n  - b\n", (3, 3)),
        ] {
            assert_eq!(indentation(text), Some((at.0, at.1, VIOLATES_INDENTATION)), "{text:?}");
        }
        // Left of a block scalar's indentation, or any while it is not known yet.
        for (text, at) in [
            ("a: |\n    x\n  \ty\n", (3, 3)),
            ("a: |\n  \tx\n", (2, 3)),
            ("a: # a |\n  >-\n \t\n  x\n", (3, 2)),
            ("a: &x|1 !<tag:yaml.org,2002:str> |\n  \tx\n", (2, 3)),
            ("a:\n  b: |2\n     x\n   \ty\n", (4, 4)),
            ("a: |\n  x\n\t\n  y\n", (3, 1)),
        ] {
            assert_eq!(indentation(text), Some((at.0, at.1, WHERE_SPACE_EXPECTED)), "{text:?}");
        }
        // Read by go-yaml: a block scalar's text from its indentation on, a plain scalar's
        // continuation from its indentation on, quoted and flow text, tabs after a token.
        for ok in [
            "a: |\n  x\n  \ty\n",
            "a: !<tag:yaml.org,2002:str> |2\n  x\n  \ty\n",
            "a: >-\n    x\n     \t\n    y\nb: 1\n",
            "a: |\n  x\n  \t\nb: 1\n",
            "a:\n  b: |2\n     x\n    \ty\n",
            "a: foo\n  \tbar\n",
            "a:\n  b: foo\n   \tbar\n",
            "a: 1\n \t\nb: 2\n",
            "args:\n- --verbose\n \t\n- --port=80\n",
            "a: \"x\n  \ty\"\n",
            "a: [1,\n  \t2]\n",
            "a: b\t\nc: d \t# e\n",
            "a: b\n  \t# c\nd: e\n",
        ] {
            assert_eq!(refused(ok), None, "{ok:?}");
        }
    }
}
