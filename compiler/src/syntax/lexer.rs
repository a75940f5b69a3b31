//! The lexer: source text to tokens, with nom over `nom_locate` spans.
//!
//! It never fails. Characters that start no token are reported once per run (E0101) and
//! dropped, so the parser sees the program as if the stray characters were not there; an
//! unterminated string becomes a string token up to the end of the line (E0102). Comments
//! are not tokens: they are returned beside the tokens (the formatter and hover docs use them).
//! Lines end at `\n`, `\r\n` or a lone `\r` (as LSP counts them); comments and strings end
//! with their line.

use nom::bytes::complete::{take, take_while, take_while1};
use nom::character::complete::{char, digit1, one_of};
use nom::combinator::{opt, recognize};
use nom::{IResult, Parser};
use nom_locate::LocatedSpan;

use crate::diagnostics::{Code, Diagnostic, FileName, Place, TextRange};

type Span<'a> = LocatedSpan<&'a str>;

/// What kind of token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TokenKind {
    /// A name or keyword: `[A-Za-z_][A-Za-z0-9_]*`.
    Ident,
    /// An integer literal: digits with optional `_` separators.
    Int,
    /// A float literal: digits with a fraction or an exponent.
    Float,
    /// A string literal in double quotes.
    Str,
    /// The end of a line (significant: statements end there): a `\n` (of a `\r\n` too) or
    /// a lone `\r`.
    Newline,
    /// `(`
    LParen,
    /// `)`
    RParen,
    /// `[`
    LBracket,
    /// `]`
    RBracket,
    /// `{`
    LBrace,
    /// `}`
    RBrace,
    /// `,`
    Comma,
    /// `:`
    Colon,
    /// `;`
    Semicolon,
    /// `.`
    Dot,
    /// `..` (a half-open range: `0..n`)
    DotDot,
    /// `=`
    Eq,
    /// `==`
    EqEq,
    /// `!=`
    NotEq,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `+`
    Plus,
    /// `-`
    Minus,
    /// `*`
    Star,
    /// `**` (power, as in Python)
    StarStar,
    /// `/`
    Slash,
    /// `//` (floor division, as in Python)
    SlashSlash,
    /// `%`
    Percent,
    /// `@` (matrix product)
    At,
    /// `->`
    Arrow,
    /// The end of the text (always the last token).
    Eof,
}

impl TokenKind {
    /// How the token is written, for messages (`` `(` ``, `a name`, ...).
    pub fn describe(self) -> &'static str {
        use TokenKind::*;
        match self {
            Ident => "a name",
            Int => "an integer",
            Float => "a number",
            Str => "a string",
            Newline => "the end of the line",
            LParen => "`(`",
            RParen => "`)`",
            LBracket => "`[`",
            RBracket => "`]`",
            LBrace => "`{`",
            RBrace => "`}`",
            Comma => "`,`",
            Colon => "`:`",
            Semicolon => "`;`",
            Dot => "`.`",
            DotDot => "`..`",
            Eq => "`=`",
            EqEq => "`==`",
            NotEq => "`!=`",
            Lt => "`<`",
            Le => "`<=`",
            Gt => "`>`",
            Ge => "`>=`",
            Plus => "`+`",
            Minus => "`-`",
            Star => "`*`",
            StarStar => "`**`",
            Slash => "`/`",
            SlashSlash => "`//`",
            Percent => "`%`",
            At => "`@`",
            Arrow => "`->`",
            Eof => "the end of the file",
        }
    }
}

/// One token: its kind and where it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token {
    /// What kind of token.
    pub kind: TokenKind,
    /// Its bytes in the source text.
    pub range: TextRange,
}

/// A `#` comment. `##` comments are documentation for the item below them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Comment {
    /// The comment, `#` included, without the line break.
    pub range: TextRange,
    /// Whether the comment starts with `##`.
    pub doc: bool,
    /// Whether code precedes the comment on its line.
    pub trailing: bool,
}

/// The lexer's result.
#[derive(Debug, Default)]
pub struct Lexed {
    /// The tokens, ending with one `Eof` token.
    pub tokens: Vec<Token>,
    /// The comments, in order.
    pub comments: Vec<Comment>,
    /// Lexical errors.
    pub errors: Vec<Diagnostic>,
}

fn offset(s: &Span<'_>) -> u32 {
    s.location_offset() as u32
}

fn range_of(s: &Span<'_>) -> TextRange {
    TextRange::new(offset(s), offset(s) + s.fragment().len() as u32)
}

/// Digits with `_` separators, starting with a digit.
fn digits(i: Span<'_>) -> IResult<Span<'_>, Span<'_>> {
    recognize((digit1, take_while(|c: char| c.is_ascii_digit() || c == '_'))).parse(i)
}

/// A number: integer part, optional fraction, optional exponent. Returns whether it is a float.
fn number(i: Span<'_>) -> IResult<Span<'_>, (Span<'_>, bool)> {
    let (rest, text) =
        recognize((digits, opt((char('.'), digits)), opt((one_of("eE"), opt(one_of("+-")), digits)))).parse(i)?;
    let is_float = text.fragment().contains(['.', 'e', 'E']);
    Ok((rest, (text, is_float)))
}

fn ident(i: Span<'_>) -> IResult<Span<'_>, Span<'_>> {
    recognize((
        take_while1(|c: char| c.is_ascii_alphabetic() || c == '_'),
        take_while(|c: char| c.is_ascii_alphanumeric() || c == '_'),
    ))
    .parse(i)
}

fn punct(i: Span<'_>) -> IResult<Span<'_>, (Span<'_>, TokenKind)> {
    use TokenKind::*;
    // A table on the next bytes, not a chain of `tag`s: this runs once per token and the
    // chain was the lexer's hottest spot. Two-character operators come first so that `==` is
    // not read as `=` `=`.
    let bytes = i.fragment().as_bytes();
    let two = match bytes.get(..2) {
        Some(b"->") => Some(Arrow),
        Some(b"==") => Some(EqEq),
        Some(b"!=") => Some(NotEq),
        Some(b"<=") => Some(Le),
        Some(b">=") => Some(Ge),
        Some(b"//") => Some(SlashSlash),
        Some(b"**") => Some(StarStar),
        Some(b"..") => Some(DotDot),
        _ => None,
    };
    let (len, kind) = match two {
        Some(kind) => (2usize, kind),
        None => {
            let kind = match bytes.first() {
                Some(b'(') => LParen,
                Some(b')') => RParen,
                Some(b'[') => LBracket,
                Some(b']') => RBracket,
                Some(b'{') => LBrace,
                Some(b'}') => RBrace,
                Some(b',') => Comma,
                Some(b':') => Colon,
                Some(b';') => Semicolon,
                Some(b'.') => Dot,
                Some(b'=') => Eq,
                Some(b'<') => Lt,
                Some(b'>') => Gt,
                Some(b'+') => Plus,
                Some(b'-') => Minus,
                Some(b'*') => Star,
                Some(b'/') => Slash,
                Some(b'%') => Percent,
                Some(b'@') => At,
                _ => return Err(nom::Err::Error(nom::error::Error::new(i, nom::error::ErrorKind::Tag))),
            };
            (1, kind)
        }
    };
    take(len).map(|s| (s, kind)).parse(i)
}

/// Splits `text` into tokens and comments. Never fails.
pub fn lex(file: &FileName, text: &str) -> Lexed {
    let mut out = Lexed::default();
    let mut input = Span::new(text);
    let mut line_has_code = false;
    // Start of a run of invalid characters, reported as one error when the run ends.
    let mut invalid_run: Option<(u32, u32)> = None;
    let flush_invalid = |run: &mut Option<(u32, u32)>, errors: &mut Vec<Diagnostic>| {
        if let Some((start, end)) = run.take() {
            let bad = &text[start as usize..end as usize];
            let shown: String = bad.chars().take(8).collect();
            errors.push(
                Diagnostic::new(
                    Code::InvalidCharacter,
                    format!(
                        "invalid character{} `{}`",
                        if bad.chars().count() > 1 { "s" } else { "" },
                        shown.escape_debug()
                    ),
                    file,
                    Place::Range(TextRange::new(start, end)),
                )
                .with_primary_message("not part of any token")
                .with_note(if bad.chars().count() > 1 {
                    "these characters are ignored; the rest of the line is read without them"
                } else {
                    "this character is ignored; the rest of the line is read without it"
                }),
            );
        }
    };

    while !input.fragment().is_empty() {
        let first = input.fragment().chars().next().unwrap_or('\0');
        let start = offset(&input);
        let mut push = |kind, range| out.tokens.push(Token { kind, range });

        if first == '\r' && input.fragment().as_bytes().get(1) == Some(&b'\n') {
            // The `\r` of a `\r\n`: the `\n` ends the line.
            input = nom::Input::take_from(&input, 1);
            continue;
        }
        if first == ' ' || first == '\t' || first == '\u{feff}' {
            let (rest, _) = take_while::<_, Span<'_>, ()>(|c| c == ' ' || c == '\t' || c == '\u{feff}')
                .parse(input)
                .expect("take_while cannot fail");
            input = rest;
            continue;
        }
        // A `\n`, or a lone `\r` (as LSP counts lines, spec/language.md 2.1).
        let line_break = first == '\n' || first == '\r';
        if !line_break && first != '#' && first != '"' {
            // Anything else must start a token; a character that cannot is invalid.
            let valid_start = first.is_ascii_alphanumeric() || first == '_' || punct(input).is_ok();
            if !valid_start {
                let end = start + first.len_utf8() as u32;
                invalid_run = Some(invalid_run.map_or((start, end), |(s, _)| (s, end)));
                input = nom::Input::take_from(&input, first.len_utf8());
                continue;
            }
        }
        flush_invalid(&mut invalid_run, &mut out.errors);

        if line_break {
            push(TokenKind::Newline, TextRange::new(start, start + 1));
            input = nom::Input::take_from(&input, 1);
            line_has_code = false;
        } else if first == '#' {
            let (rest, body) =
                take_while::<_, Span<'_>, ()>(|c| c != '\n' && c != '\r').parse(input).expect("take_while cannot fail");
            let doc = body.fragment().starts_with("##");
            let range = range_of(&body);
            out.comments.push(Comment { range, doc, trailing: line_has_code });
            input = rest;
        } else if first == '"' {
            input = lex_string(file, input, &mut out);
            line_has_code = true;
        } else if first.is_ascii_digit() {
            let (rest, (text, is_float)) = number(input).expect("starts with a digit");
            let kind = if is_float { TokenKind::Float } else { TokenKind::Int };
            out.tokens.push(Token { kind, range: range_of(&text) });
            input = rest;
            line_has_code = true;
        } else if first.is_ascii_alphabetic() || first == '_' {
            let (rest, name) = ident(input).expect("starts with a letter");
            out.tokens.push(Token { kind: TokenKind::Ident, range: range_of(&name) });
            input = rest;
            line_has_code = true;
        } else {
            let (rest, (text, kind)) = punct(input).expect("checked above");
            out.tokens.push(Token { kind, range: range_of(&text) });
            input = rest;
            line_has_code = true;
        }
    }
    flush_invalid(&mut invalid_run, &mut out.errors);
    let end = text.len() as u32;
    out.tokens.push(Token { kind: TokenKind::Eof, range: TextRange::empty(end) });
    // The tokens live as long as the file's parse (an edit relexes from them): not twice.
    out.tokens.shrink_to_fit();
    out.comments.shrink_to_fit();
    out
}

/// Lexes a string literal starting at `input` (which begins with `"`).
fn lex_string<'a>(file: &FileName, input: Span<'a>, out: &mut Lexed) -> Span<'a> {
    let text = input.fragment();
    let start = offset(&input);
    let mut escaped = false;
    for (i, c) in text.char_indices().skip(1) {
        match c {
            '\n' | '\r' => break,
            '\\' if !escaped => escaped = true,
            '"' if !escaped => {
                let len = i + 1;
                out.tokens.push(Token { kind: TokenKind::Str, range: TextRange::new(start, start + len as u32) });
                return nom::Input::take_from(&input, len);
            }
            _ => escaped = false,
        }
    }
    let len = text.find(['\n', '\r']).unwrap_or(text.len());
    let range = TextRange::new(start, start + len as u32);
    out.tokens.push(Token { kind: TokenKind::Str, range });
    out.errors.push(
        Diagnostic::new(Code::UnterminatedString, "unterminated string", file, Place::Range(range))
            .with_primary_message("this string has no closing `\"` on its line")
            .with_help("add a `\"` at the end of the string"),
    );
    nom::Input::take_from(&input, len)
}

/// The value of a string token: the text between the quotes with escapes resolved.
pub fn string_value(raw: &str) -> String {
    let inner = raw.strip_prefix('"').unwrap_or(raw);
    let inner = inner.strip_suffix('"').unwrap_or(inner);
    let mut value = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('n') => value.push('\n'),
                Some('t') => value.push('\t'),
                Some(other) => value.push(other),
                None => {}
            }
        } else {
            value.push(c);
        }
    }
    value
}
