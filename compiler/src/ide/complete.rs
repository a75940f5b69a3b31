//! Completion and signature help.
//!
//! The text being typed rarely parses, so the context of the cursor comes from the tokens
//! before it: which item it is in (an item keyword at the start of a line starts one, as in
//! the parser's recovery), and the open braces, parentheses and brackets around it. The
//! candidates come from the file's scope (ops, blocks, models with their signatures and
//! `##` documentation), the locals defined above the cursor, the catalogue of scenario
//! settings ([`crate::syntax::settings::SETTINGS`]) and the accepted setting values.

use std::collections::HashSet;

use crate::db::{SourceFile, lookup_file};
use crate::diagnostics::{FileName, TextRange};
use crate::elaborate::Db;
use crate::knobs::{CacheDtype, CacheKind, ConvAlgorithm, DeviceModel, Loss, Optimizer, Precision};
use crate::semantics::Builtin;
use crate::semantics::check::DTYPES;
use crate::semantics::files::{file_scope, parse_file};
use crate::semantics::kinds::ValueKind;
use crate::semantics::scenario::DATALOADER_ARGS;
use crate::semantics::scope::{Binding, DefKind};
use crate::syntax::KEYWORDS;
use crate::syntax::lexer::{Token, TokenKind, lex};
use crate::syntax::settings::{SETTINGS, SettingForm, setting};

use super::resolve::{LocalKind, Symbol, occurrences, param_decl};
use super::{clamp_offset, item_doc, item_header};

/// What a completion is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CompletionKind {
    /// A built-in op.
    Op,
    /// A block.
    Block,
    /// A model.
    Model,
    /// A local: parameter, input, variable, dimension.
    Variable,
    /// A language keyword or an item keyword.
    Keyword,
    /// A built-in function (`min`, `max`, `len`).
    Builtin,
    /// A scenario setting key.
    Setting,
    /// A value of a setting (a device preset, an optimizer...).
    Value,
    /// A keyword argument `name=`.
    KeywordArg,
    /// A type or dtype.
    Type,
    /// A module (`std.nn`).
    Module,
    /// A field (`shape`, `ndim`).
    Field,
}

/// One completion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    /// What the list shows.
    pub label: String,
    /// What it is.
    pub kind: CompletionKind,
    /// One line beside the label (a signature, a default).
    pub detail: Option<String>,
    /// Markdown documentation.
    pub documentation: Option<String>,
    /// The text inserted.
    pub insert_text: String,
    /// The text it replaces: the word before the cursor.
    pub replace: TextRange,
}

/// Signature help: the callee's parameters and the one being written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignatureInfo {
    /// `conv2d(x: tensor, out_channels: int, ...)`.
    pub label: String,
    /// Each parameter's declaration, as it appears in `label`.
    pub params: Vec<String>,
    /// The parameter the cursor is on, if known.
    pub active: Option<u32>,
    /// The callee's `##` documentation.
    pub documentation: Option<String>,
}

/// An open delimiter before the cursor.
#[derive(Debug, Clone)]
enum Frame {
    /// The body of a block, model, `if` or `else`.
    Body,
    /// A scenario's settings; `kind` is `train` or `infer`.
    Scenario { kind: &'static str, open: usize },
    /// Parentheses: a call (with its callee), a parameter list, or a grouping.
    Paren { callee: Option<String>, params: bool, open: usize },
    /// Square brackets.
    Bracket,
}

/// The context of the cursor.
struct Context<'a> {
    text: &'a str,
    tokens: Vec<Token>,
    /// Open delimiters, outermost first.
    stack: Vec<Frame>,
    /// The keyword of the item the cursor is in.
    item_keyword: Option<&'a str>,
    /// The start of the word being typed.
    word_start: u32,
    /// The cursor is in a comment or a string: nothing to complete.
    in_comment_or_string: bool,
}

impl<'a> Context<'a> {
    fn new(file: &FileName, text: &'a str, offset: u32) -> Self {
        let offset = clamp_offset(text, offset);
        let word_start = text[..offset as usize]
            .char_indices()
            .rev()
            .take_while(|(_, c)| c.is_ascii_alphanumeric() || *c == '_')
            .last()
            .map_or(offset, |(i, _)| i as u32);
        let lexed = lex(file, &text[..word_start as usize]);
        // A comment or an unterminated string runs up to the cursor.
        let in_comment_or_string = lexed.comments.last().is_some_and(|c| c.range.end == word_start)
            || lexed.errors.iter().any(|e| {
                e.code == crate::diagnostics::Code::UnterminatedString
                    && matches!(e.primary().place, crate::diagnostics::Place::Range(r) if r.end == word_start)
            });
        let tokens: Vec<Token> = lexed.tokens.into_iter().filter(|t| t.kind != TokenKind::Eof).collect();
        let mut cx = Context { text, tokens, stack: Vec::new(), item_keyword: None, word_start, in_comment_or_string };
        cx.scan();
        cx
    }

    fn src(&self, i: usize) -> &'a str {
        &self.text[self.tokens[i].range.to_range()]
    }

    fn starts_line(&self, i: usize) -> bool {
        i == 0 || self.tokens[i - 1].kind == TokenKind::Newline
    }

    fn scan(&mut self) {
        for i in 0..self.tokens.len() {
            let kind = self.tokens[i].kind;
            match kind {
                TokenKind::Ident if self.starts_line(i) => {
                    let word = self.src(i);
                    let in_scenario = matches!(self.stack.last(), Some(Frame::Scenario { .. }));
                    let brace_follows = self.tokens[i..]
                        .iter()
                        .take_while(|t| t.kind != TokenKind::Newline)
                        .any(|t| t.kind == TokenKind::LBrace);
                    let item_starts = matches!(word, "use" | "op" | "block" | "model" | "train" | "infer")
                        && !(word == "model" && in_scenario && !brace_follows)
                        && !self.stack.iter().any(|f| matches!(f, Frame::Paren { .. } | Frame::Bracket));
                    if item_starts {
                        self.stack.clear();
                        self.item_keyword = Some(word);
                    }
                }
                TokenKind::LBrace => {
                    let scenario = self.stack.is_empty() && matches!(self.item_keyword, Some("train" | "infer"));
                    self.stack.push(if scenario {
                        let kind = if self.item_keyword == Some("train") { "train" } else { "infer" };
                        Frame::Scenario { kind, open: i }
                    } else {
                        Frame::Body
                    });
                }
                TokenKind::RBrace => {
                    while let Some(f) = self.stack.pop() {
                        if matches!(f, Frame::Body | Frame::Scenario { .. }) {
                            break;
                        }
                    }
                }
                TokenKind::LParen => {
                    let prev = self.prev_significant(i);
                    let callee =
                        prev.filter(|&p| self.tokens[p].kind == TokenKind::Ident && !KEYWORDS.contains(&self.src(p)));
                    let params = self.stack.is_empty()
                        && callee.is_some()
                        && prev
                            .and_then(|p| self.prev_significant(p))
                            .is_some_and(|pp| matches!(self.src(pp), "block" | "model" | "op"));
                    self.stack.push(Frame::Paren { callee: callee.map(|c| self.src(c).to_string()), params, open: i });
                }
                TokenKind::LBracket => self.stack.push(Frame::Bracket),
                TokenKind::RParen | TokenKind::RBracket => {
                    if matches!(self.stack.last(), Some(Frame::Paren { .. } | Frame::Bracket)) {
                        self.stack.pop();
                    }
                }
                _ => {}
            }
        }
    }

    fn prev_significant(&self, i: usize) -> Option<usize> {
        (0..i).rev().find(|&j| self.tokens[j].kind != TokenKind::Newline)
    }

    /// The last token before the word, line breaks included.
    fn last(&self) -> Option<&Token> {
        self.tokens.last()
    }

    /// The last token before the word that is not a line break.
    fn last_significant(&self) -> Option<usize> {
        self.prev_significant(self.tokens.len())
    }

    /// Whether the cursor starts a statement, a setting or an item.
    fn at_line_start(&self) -> bool {
        match self.last() {
            None => true,
            Some(t) => matches!(t.kind, TokenKind::Newline | TokenKind::LBrace | TokenKind::Semicolon),
        }
    }

    /// The innermost call around the cursor: its callee, the `(`, and the argument index.
    fn call(&self) -> Option<(String, usize, usize)> {
        let (callee, open) = self.stack.iter().rev().find_map(|f| match f {
            Frame::Paren { callee: Some(c), params: false, open } => Some((c.clone(), *open)),
            _ => None,
        })?;
        // Commas at the call's own level.
        let mut depth = 0i32;
        let mut commas = 0;
        for t in &self.tokens[open + 1..] {
            match t.kind {
                TokenKind::LParen | TokenKind::LBracket | TokenKind::LBrace => depth += 1,
                TokenKind::RParen | TokenKind::RBracket | TokenKind::RBrace => depth -= 1,
                TokenKind::Comma if depth == 0 => commas += 1,
                _ => {}
            }
        }
        Some((callee, open, commas))
    }

    /// Keyword arguments already given in the call opened at `open`.
    fn given_keywords(&self, open: usize) -> Vec<&'a str> {
        let mut out = Vec::new();
        let mut depth = 0i32;
        for i in open + 1..self.tokens.len() {
            match self.tokens[i].kind {
                TokenKind::LParen | TokenKind::LBracket => depth += 1,
                TokenKind::RParen | TokenKind::RBracket => depth -= 1,
                TokenKind::Eq if depth == 0 && i > 0 && self.tokens[i - 1].kind == TokenKind::Ident => {
                    out.push(self.src(i - 1));
                }
                _ => {}
            }
        }
        out
    }

    /// The keyword of the argument being written (`stride=` before the cursor), if any.
    fn current_keyword(&self, open: usize) -> Option<&'a str> {
        let mut depth = 0i32;
        let mut start = open + 1;
        for i in open + 1..self.tokens.len() {
            match self.tokens[i].kind {
                TokenKind::LParen | TokenKind::LBracket => depth += 1,
                TokenKind::RParen | TokenKind::RBracket => depth -= 1,
                TokenKind::Comma if depth == 0 => start = i + 1,
                _ => {}
            }
        }
        let significant: Vec<usize> =
            (start..self.tokens.len()).filter(|&i| self.tokens[i].kind != TokenKind::Newline).collect();
        match significant.as_slice() {
            [k, eq, ..] if self.tokens[*k].kind == TokenKind::Ident && self.tokens[*eq].kind == TokenKind::Eq => {
                Some(self.src(*k))
            }
            _ => None,
        }
    }
}

/// Completions at `offset`.
pub fn completions(db: &dyn Db, file: SourceFile, offset: u32) -> Vec<Completion> {
    let text = file.text(db);
    let offset = clamp_offset(text, offset);
    let cx = Context::new(file.name(db), text, offset);
    if cx.in_comment_or_string {
        return Vec::new();
    }
    let replace = TextRange::new(cx.word_start, offset);
    let mut out = Vec::new();
    let push = |out: &mut Vec<Completion>,
                label: &str,
                kind: CompletionKind,
                detail: Option<String>,
                documentation: Option<String>| {
        out.push(Completion {
            label: label.to_string(),
            kind,
            detail,
            documentation,
            insert_text: label.to_string(),
            replace,
        });
    };
    let last = cx.last_significant();
    let last_text = last.map(|i| cx.src(i)).unwrap_or("");
    let last_kind = last.map(|i| cx.tokens[i].kind);
    match cx.stack.last() {
        None => {
            if last_text == "use" {
                for module in db.stdlib().modules(db).keys() {
                    push(&mut out, module, CompletionKind::Module, Some("standard-library module".into()), None);
                }
            } else if cx.at_line_start() {
                for kw in ["use", "op", "block", "model", "train", "infer"] {
                    push(&mut out, kw, CompletionKind::Keyword, None, None);
                }
            }
        }
        Some(Frame::Scenario { kind, open }) => {
            let same_line = cx.last().is_some_and(|t| t.kind != TokenKind::Newline);
            let key = last.filter(|_| same_line).and_then(|i| setting(cx.src(i)));
            match key {
                Some(spec) if spec.form == SettingForm::Value => {
                    let values: &[&str] = match spec.key {
                        "device" => DeviceModel::NAMES,
                        "precision" => Precision::NAMES,
                        "optimizer" => Optimizer::NAMES,
                        "conv_algorithm" => ConvAlgorithm::NAMES,
                        "loss" => Loss::NAMES,
                        "cache" => CacheKind::NAMES,
                        "cache_dtype" => CacheDtype::NAMES,
                        _ => &[],
                    };
                    for v in values {
                        push(&mut out, v, CompletionKind::Value, Some(format!("{} value", spec.key)), None);
                    }
                    if spec.key == "model" {
                        items(db, file, &[DefKind::Model], &mut out, replace);
                    }
                }
                Some(_) => {}
                None => {
                    let given: Vec<&str> =
                        (open + 1..cx.tokens.len()).map(|i| cx.src(i)).filter(|w| setting(w).is_some()).collect();
                    for spec in SETTINGS {
                        let applies = spec.only.is_none_or(|only| only == *kind);
                        if applies && (spec.key == "dim" || !given.contains(&spec.key)) {
                            push(
                                &mut out,
                                spec.key,
                                CompletionKind::Setting,
                                Some(form_of(spec.form).into()),
                                Some(spec.doc.into()),
                            );
                        }
                    }
                }
            }
        }
        Some(Frame::Paren { params: true, .. }) => {
            if last_kind == Some(TokenKind::Colon) {
                types(&mut out, replace, false);
            }
        }
        Some(Frame::Paren { .. }) | Some(Frame::Bracket) | Some(Frame::Body) => {
            if last_kind == Some(TokenKind::Dot) {
                push(
                    &mut out,
                    "shape",
                    CompletionKind::Field,
                    Some("[int]".into()),
                    Some("the dimensions of a tensor".into()),
                );
                push(
                    &mut out,
                    "ndim",
                    CompletionKind::Field,
                    Some("int".into()),
                    Some("the number of dimensions".into()),
                );
                return out;
            }
            if last_kind == Some(TokenKind::Colon) {
                types(&mut out, replace, true);
                return out;
            }
            let in_scenario = cx.stack.iter().any(|f| matches!(f, Frame::Scenario { .. }));
            if let Some((callee, open, _)) = cx.call()
                && matches!(cx.stack.last(), Some(Frame::Paren { .. }))
                && matches!(last_kind, Some(TokenKind::LParen | TokenKind::Comma))
            {
                keyword_args(db, file, &cx, &callee, open, &mut out, replace);
            }
            if in_scenario {
                return out;
            }
            if matches!(cx.stack.last(), Some(Frame::Body)) && cx.at_line_start() {
                for kw in ["input", "buffer", "return", "if", "for"] {
                    push(&mut out, kw, CompletionKind::Keyword, None, None);
                }
            } else if !matches!(last_kind, Some(TokenKind::Ident) | Some(TokenKind::Int) | Some(TokenKind::RParen)) {
                for kw in ["repeat", "not", "true", "false"] {
                    push(&mut out, kw, CompletionKind::Keyword, None, None);
                }
            }
            if matches!(last_kind, Some(TokenKind::Ident)) && last_text != "return" && !KEYWORDS.contains(&last_text) {
                // Right after a name: an operator or `=` comes next, not another name.
                return out;
            }
            locals(db, file, offset, &mut out, replace);
            items(db, file, &[DefKind::Op, DefKind::Block], &mut out, replace);
            for builtin in Builtin::ALL {
                if !out.iter().any(|c| c.label == builtin.name()) {
                    let detail = Some(builtin.signature().to_string());
                    push(&mut out, builtin.name(), CompletionKind::Builtin, detail, Some(builtin.doc().to_string()));
                }
            }
        }
    }
    out
}

fn form_of(form: SettingForm) -> &'static str {
    match form {
        SettingForm::Flag => "flag",
        SettingForm::Value => "KEY VALUE",
        SettingForm::Dim => "dim NAME = VALUE",
        SettingForm::Args => "KEY(NAME=VALUE, ...)",
    }
}

/// The types after a colon: a parameter takes a value kind or a tensor type (a dtype, then
/// its shape), an input only a tensor type; a name that is both (`bool`) is offered once.
fn types(out: &mut Vec<Completion>, replace: TextRange, input: bool) {
    let kinds: &[&str] = if input { &[] } else { ValueKind::TYPE_NAMES };
    for t in kinds.iter().chain(DTYPES.iter().filter(|d| !kinds.contains(d))) {
        out.push(simple(t, CompletionKind::Type, replace));
    }
}

fn simple(label: &str, kind: CompletionKind, replace: TextRange) -> Completion {
    Completion { label: label.into(), kind, detail: None, documentation: None, insert_text: label.into(), replace }
}

/// Ops, blocks or models visible in `file`, with their headers and documentation.
fn items(db: &dyn Db, file: SourceFile, kinds: &[DefKind], out: &mut Vec<Completion>, replace: TextRange) {
    for (name, binding) in &file_scope(db, file).names {
        let Binding::Unique(def) = binding else { continue };
        if !kinds.contains(&def.kind) {
            continue;
        }
        let kind = match def.kind {
            DefKind::Op => CompletionKind::Op,
            DefKind::Block => CompletionKind::Block,
            _ => CompletionKind::Model,
        };
        let def_file = lookup_file(db, &def.file);
        let detail = def_file.and_then(|f| item_header(db, f, def.item));
        let documentation = def_file.and_then(|f| item_doc(db, f, def.item));
        out.push(Completion { label: name.clone(), kind, detail, documentation, insert_text: name.clone(), replace });
    }
}

/// The locals defined above `offset` in the item around it.
fn locals(db: &dyn Db, file: SourceFile, offset: u32, out: &mut Vec<Completion>, replace: TextRange) {
    let parse = parse_file(db, file);
    let Some(item) = parse.spans.iter().rposition(|s| s.whole().start <= offset) else { return };
    let mut seen: HashSet<&str> = HashSet::new();
    for o in occurrences(db, file) {
        if o.item != item as u32 || !o.def || o.range.end > offset {
            continue;
        }
        if let Symbol::Local { name, kind, .. } = &o.symbol
            && seen.insert(name.as_str())
        {
            let detail = Some(
                match kind {
                    LocalKind::Param => "parameter",
                    LocalKind::Input => "input",
                    LocalKind::Variable => "variable",
                    LocalKind::LoopVariable => "loop variable",
                    LocalKind::Dim => "dimension",
                }
                .to_string(),
            );
            out.push(Completion {
                label: name.clone(),
                kind: CompletionKind::Variable,
                detail,
                documentation: None,
                insert_text: name.clone(),
                replace,
            });
        }
    }
}

/// `name=` for each parameter of `callee` not yet given.
fn keyword_args(
    db: &dyn Db,
    file: SourceFile,
    cx: &Context<'_>,
    callee: &str,
    open: usize,
    out: &mut Vec<Completion>,
    replace: TextRange,
) {
    let given = cx.given_keywords(open);
    let mut push = |name: &str, detail: String| {
        if given.contains(&name) {
            return;
        }
        out.push(Completion {
            label: format!("{name}="),
            kind: CompletionKind::KeywordArg,
            detail: Some(detail),
            documentation: None,
            insert_text: format!("{name}="),
            replace,
        });
    };
    if callee == "dataloader" {
        for (name, kind) in DATALOADER_ARGS {
            push(name, format!("{name}: {}", kind.describe_type()));
        }
        return;
    }
    let scope = file_scope(db, file);
    // A mark's one keyword (`frozen(call, when=lora_r > 0)`), unless the file defines the name.
    if let Some(builtin) = Builtin::from_name(callee).filter(|b| b.takes_a_condition())
        && scope.get(callee).is_none()
    {
        push("when", format!("when: bool = true (`{}` applies where it holds)", builtin.name()));
        return;
    }
    let Some(def) = scope.get(callee) else { return };
    let Some(sig) = &def.signature else { return };
    let Some(def_file) = lookup_file(db, &def.file) else { return };
    for p in &sig.params {
        let decl = param_decl(db, def_file, def.item, &p.name).map_or_else(|| p.name.clone(), |(d, _)| d);
        push(&p.name, decl);
    }
}

/// Signature help at `offset`: the innermost call around it.
pub fn signature_help(db: &dyn Db, file: SourceFile, offset: u32) -> Option<SignatureInfo> {
    let text = file.text(db);
    let cx = Context::new(file.name(db), text, offset);
    let (callee, open, commas) = cx.call()?;
    if callee == "dataloader" {
        let params: Vec<String> = DATALOADER_ARGS.iter().map(|(n, k)| format!("{n}: {}", k.describe_type())).collect();
        let active =
            cx.current_keyword(open).and_then(|k| DATALOADER_ARGS.iter().position(|(n, _)| *n == k)).map(|i| i as u32);
        return Some(SignatureInfo {
            label: format!("dataloader({})", params.join(", ")),
            params,
            active,
            documentation: setting("dataloader").map(|s| s.doc.to_string()),
        });
    }
    let scope = file_scope(db, file);
    let def = scope.get(&callee)?;
    let sig = def.signature.as_ref()?;
    let def_file = lookup_file(db, &def.file)?;
    let params: Vec<String> = sig
        .params
        .iter()
        .map(|p| param_decl(db, def_file, def.item, &p.name).map_or_else(|| p.name.clone(), |(d, _)| d))
        .collect();
    let active = match cx.current_keyword(open) {
        Some(k) => sig.params.iter().position(|p| p.name == k),
        None => (commas < sig.params.len()).then_some(commas),
    };
    let outputs = match sig.outputs {
        crate::semantics::Outputs::Fixed(1) => String::new(),
        crate::semantics::Outputs::Fixed(n) => format!(" -> ({})", vec!["tensor"; n as usize].join(", ")),
        crate::semantics::Outputs::Variadic => " -> tensors".to_string(),
    };
    Some(SignatureInfo {
        label: format!("{callee}({}){outputs}", params.join(", ")),
        params,
        active: active.map(|a| a as u32),
        documentation: item_doc(db, def_file, def.item),
    })
}
