//! The grammar of statements and bodies: assignments, `return`, `if`/`else`, `repeat`,
//! `input`; a body's statements with recovery at the next statement after an error.

use super::*;

pub(super) fn param(i: In<'_>) -> PResult<'_, Param> {
    let cx = i.cx;
    let (mut rest, n) = name(i).or_else(|_| expected(i, "a parameter"))?;
    let mut ty = None;
    let mut default = None;
    if rest.peek_is(TokenKind::Colon) {
        let (r, t) = cut(type_expr(rest.bump().0))?;
        ty = Some(t);
        rest = r;
    }
    if rest.peek_is(TokenKind::Eq) {
        let (r, d) = cut(expr(rest.bump().0))?;
        default = Some(d);
        rest = r;
    }
    let id = cx.node(i.range_to(rest));
    Ok((rest, Param { id, name: n, ty, default }))
}

pub(super) fn params(i: In<'_>) -> PResult<'_, Vec<Param>> {
    let (rest, open) = cut(token(TokenKind::LParen)(i))?;
    delimited_list(rest, open, TokenKind::RParen, "a parameter", param)
}

/// Whether `i` starts `name (, name)* =` (an assignment), looking ahead without parsing.
pub(super) fn starts_assignment(i: In<'_>) -> bool {
    let cx = i.cx;
    let toks = i.skip_newlines();
    let mut k = 0;
    loop {
        match toks.get(k) {
            Some(t) if t.kind == TokenKind::Ident && !KEYWORDS.contains(&cx.text_of(t)) => k += 1,
            _ => return false,
        }
        match toks.get(k).map(|t| t.kind) {
            Some(TokenKind::Comma) => k += 1,
            Some(TokenKind::Eq) => return true,
            _ => return false,
        }
    }
}

pub(super) fn statement(i: In<'_>) -> PResult<'_, Stmt> {
    let cx = i.cx;
    let tok = i.peek();
    let word = if tok.kind == TokenKind::Ident { cx.text_of(tok) } else { "" };
    let (rest, kind) = match word {
        "buffer" if starts_declaration(i, "buffer") => buffer_statement(i)?,
        "input" if starts_input(i) => {
            let (rest, _) = i.bump();
            let (rest, n) = cut(name(rest))?;
            let (rest, _) = cut(token(TokenKind::Colon)(rest))?;
            let (rest, ty) = cut(type_expr(rest))?;
            (rest, StmtKind::Input { name: n, ty })
        }
        "return" => {
            let (mut rest, _) = i.bump();
            let mut values = Vec::new();
            loop {
                let (r, v) = cut(expr(rest))?;
                values.push(v);
                rest = r;
                if !rest.peek_is(TokenKind::Comma) {
                    break;
                }
                rest = rest.bump().0;
            }
            values.shrink_to_fit();
            (rest, StmtKind::Return { values })
        }
        "if" => if_statement(i)?,
        "for" => for_statement(i)?,
        "else" => {
            return fail_with(
                i,
                Diagnostic::new(Code::UnexpectedToken, "`else` without `if`", cx.file, Place::Range(tok.range))
                    .with_primary_message("no `if` body ends right before this `else`")
                    .with_help("an `else` follows the `}` that closes an `if` body"),
            );
        }
        _ if starts_assignment(i) => {
            let (mut rest, first) = name(i)?;
            let mut targets = vec![first];
            while rest.peek_is(TokenKind::Comma) {
                let (r, n) = cut(name(rest.bump().0))?;
                targets.push(n);
                rest = r;
            }
            let (rest, _) = cut(token(TokenKind::Eq)(rest))?;
            // Python's `q, k = rope(q), rope(k)`: several values, as `return` takes them.
            let (mut rest, value) = cut(expr(rest))?;
            let mut values = vec![value];
            while rest.peek_is(TokenKind::Comma) {
                let (r, v) = cut(expr(rest.bump().0))?;
                values.push(v);
                rest = r;
            }
            (rest, StmtKind::Assign { targets, values })
        }
        _ => {
            // Parse the expression to give a precise message; it is not a statement.
            let (rest, e) = expr(i).map_err(|e| {
                e.map(|mut e| {
                    if e.expected == ["an expression"] {
                        e.expected = vec!["a statement"];
                    }
                    e
                })
            })?;
            let range = i.range_to(rest);
            let _ = e;
            return fail_with(
                rest,
                Diagnostic::new(
                    Code::ExpressionStatement,
                    "expression used as a statement",
                    cx.file,
                    Place::Range(range),
                )
                .with_primary_message("its value is not assigned to anything")
                .with_help("assign it to a name: `y = ...`, or return it: `return ...`"),
            );
        }
    };
    let id = cx.node(i.range_to(rest));
    Ok((rest, Stmt { id, kind }))
}

pub(super) fn if_statement(i: In<'_>) -> PResult<'_, StmtKind> {
    let (rest, _) = keyword("if")(i)?;
    let (rest, cond) = cut(expr(rest))?;
    if rest.peek_is(TokenKind::Eq) {
        let tok = rest.peek();
        return fail_with(
            rest,
            Diagnostic::new(Code::UnexpectedToken, "expected `{`, found `=`", i.cx.file, Place::Range(tok.range))
                .with_primary_message("`=` assigns; it cannot be a condition")
                .with_help("to compare, use `==`"),
        );
    }
    let (mut rest, then_body) = cut(nested(rest, body))?;
    let mut else_body = None;
    // `else` may follow the `}` on the same line or start the next line.
    let after_newlines = rest.skip_all_newlines();
    if after_newlines.peek_word("else") {
        let (r, _) = after_newlines.bump();
        if r.peek_word("if") {
            // `else if`: an `if` statement alone in the else body.
            let (r2, kind) = cut(nested(r, if_statement))?;
            let id = i.cx.node(r.range_to(r2));
            let stmt = Stmt { id, kind };
            let body_id = i.cx.node(r.range_to(r2));
            else_body = Some(Body { id: body_id, stmts: vec![stmt], recovered: false });
            rest = r2;
        } else {
            let (r2, b) = cut(nested(r, body))?;
            else_body = Some(b);
            rest = r2;
        }
    }
    Ok((rest, StmtKind::If { cond, then_body, else_body }))
}

/// Whether `i` starts an input statement: `input` and a name (`input x: f32[N, 8]`). A
/// name's `input` (`input = relu(x)`, `y = f(input)`) is followed by something else.
pub(super) fn starts_input(i: In<'_>) -> bool {
    starts_declaration(i, "input")
}

/// Whether `i` starts a declaration by the contextual keyword `word`: the word, then a name.
pub(super) fn starts_declaration(i: In<'_>, word: &str) -> bool {
    i.peek_word(word) && i.peek2().is_some_and(|t| t.kind == TokenKind::Ident && !KEYWORDS.contains(&i.cx.text_of(t)))
}

/// `buffer NAME: dtype[shape] { , option=value }`: a buffer registered by the module, as
/// `self.register_buffer("NAME", tensor, persistent=...)`. It is read as the assignment
/// `NAME = buffer([shape], "dtype", option=value, ...)` of the prelude's `buffer` op (whose
/// callee is the keyword), so checks, elaboration and the editor treat it as that call.
pub(super) fn buffer_statement(i: In<'_>) -> PResult<'_, StmtKind> {
    let cx = i.cx;
    let (rest, keyword) = i.bump();
    let callee = Name { id: cx.node(keyword.range), text: "buffer".into() };
    let (rest, target) = cut(name(rest))?;
    let (rest, _) = cut(token(TokenKind::Colon)(rest))?;
    let type_start = rest;
    let (mut rest, ty) = cut(type_expr(rest))?;
    let TypeExpr::Tensor { id, dtype, dims } = ty else {
        return fail_with(
            rest,
            Diagnostic::new(
                Code::UnexpectedToken,
                "expected a dtype and a shape",
                cx.file,
                Place::Range(type_start.range_to(rest)),
            )
            .with_primary_message("a buffer is a tensor")
            .with_help("write its dtype and shape: `buffer mask: bool[1, 1, 1024, 1024]`"),
        );
    };
    let shape = Expr { id, kind: ExprKind::List(dims) };
    let dtype = Expr { id: dtype.id, kind: ExprKind::Str(dtype.text.to_string()) };
    let mut args =
        vec![Arg { id: shape.id, keyword: None, value: shape }, Arg { id: dtype.id, keyword: None, value: dtype }];
    while rest.peek_is(TokenKind::Comma) {
        let (r, option) = cut(argument(rest.bump().0))?;
        if option.keyword.is_none() {
            return fail(r, "an option `name=value` (`persistent=false`)");
        }
        args.push(option);
        rest = r;
    }
    let value = Expr { id: cx.node(i.range_to(rest)), kind: ExprKind::Call { callee, args } };
    Ok((rest, StmtKind::Assign { targets: vec![target], values: vec![value] }))
}

/// `for NAME in start..end { ... }` or `for NAME in list { ... }`.
pub(super) fn for_statement(i: In<'_>) -> PResult<'_, StmtKind> {
    let (rest, _) = keyword("for")(i)?;
    let (rest, var) = cut(name(rest))?;
    let rest = if rest.peek_word("in") { rest.bump().0 } else { return cut(expected(rest, "`in`")) };
    let (rest, first) = cut(expr(rest))?;
    let (rest, iter) = if rest.peek_is(TokenKind::DotDot) {
        let (rest, end) = cut(expr(rest.bump().0))?;
        (rest, ForIter::Range { start: first, end })
    } else {
        (rest, ForIter::Each(first))
    };
    let (rest, body) = cut(nested(rest, body))?;
    Ok((rest, StmtKind::For { var, iter, body }))
}

/// Where to resume after a syntax error inside a statement that started at `start` and
/// failed at token index `err_idx`.
pub(super) fn recovery_point(cx: &Ctx<'_>, start: usize, err_idx: usize, resume: bool) -> usize {
    // An unclosed list ran into the next line's first token: resume there.
    if resume && err_idx > start && cx.starts_line(err_idx) && cx.tok(err_idx).kind != TokenKind::Eof {
        return err_idx;
    }
    // Brackets and braces are counted apart: a `}` that closes the enclosing body ends the
    // skip even inside an unclosed `(`.
    let (mut brackets, mut braces): (i64, i64) = (0, 0);
    let mut idx = start;
    while idx < cx.all.len() {
        let tok = cx.tok(idx);
        match tok.kind {
            TokenKind::Eof => return idx,
            TokenKind::LParen | TokenKind::LBracket => brackets += 1,
            TokenKind::RParen | TokenKind::RBracket => brackets -= 1,
            TokenKind::LBrace => braces += 1,
            TokenKind::RBrace => {
                braces -= 1;
                if braces < 0 && idx >= err_idx {
                    return idx;
                }
            }
            TokenKind::Newline if idx >= err_idx && brackets <= 0 && braces <= 0 => return idx + 1,
            _ if idx > start && cx.is_item_keyword_at(idx) => return idx,
            _ => {}
        }
        idx += 1;
    }
    cx.all.len() - 1
}

/// The body of a block or a model: its statements are marked for a reparse, which may reuse
/// them ([`StmtReuse`]).
pub(super) fn item_body(i: In<'_>) -> PResult<'_, Body> {
    statements(i, true)
}

/// The body of an `if` or an `else`.
pub(super) fn body(i: In<'_>) -> PResult<'_, Body> {
    statements(i, false)
}

/// `{ statements }`, recovering from errors statement by statement; `item_body`: the body of
/// an item (every statement starts in the same parser state).
pub(super) fn statements(i: In<'_>, item_body: bool) -> PResult<'_, Body> {
    let cx = i.cx;
    let (mut rest, open) = token(TokenKind::LBrace)(i).or_else(|_| fail(i, "`{`"))?;
    // Braces do not suppress newlines, even inside brackets.
    let saved_brackets = cx.brackets.replace(0);
    let mut stmts = Vec::new();
    let mut recovered = false;
    loop {
        while matches!(rest.peek().kind, TokenKind::Newline | TokenKind::Semicolon) {
            rest = rest.bump().0;
        }
        let idx = cx.index_of(rest);
        if rest.peek_is(TokenKind::RBrace) {
            rest = rest.bump().0;
            break;
        }
        if rest.peek_is(TokenKind::Eof) || cx.is_item_keyword_at(idx) {
            cx.report(
                Diagnostic::new(Code::UnclosedDelimiter, "unclosed `{`", cx.file, Place::Range(open.range))
                    .with_primary_message("this body is never closed")
                    .with_help("add `}` after its last statement"),
            );
            recovered = true;
            break;
        }
        if item_body && let Some((r, stmt)) = reused_statement(cx, idx, stmts.len()) {
            stmts.push(stmt);
            rest = r;
            continue;
        }
        // What the statement alone reads, then added to what its step read.
        let step_read = cx.read.replace((idx, idx));
        let (errors_before, first_node) = (cx.errors.borrow().len(), cx.nodes.borrow().len() as u32);
        let parsed = statement(rest).and_then(|(r, stmt)| {
            let terminated =
                matches!(r.peek().kind, TokenKind::Newline | TokenKind::Semicolon | TokenKind::RBrace | TokenKind::Eof);
            if terminated {
                Ok((r, stmt))
            } else {
                Err(Fail::Failure(PErr {
                    remaining: r.toks.len(),
                    expected: vec!["the end of the statement"],
                    custom: None,
                    resume: false,
                }))
            }
        });
        let (low, high) = cx.read.get();
        cx.read.set((step_read.0.min(low), step_read.1.max(high)));
        match parsed {
            Ok((r, stmt)) => {
                if item_body && cx.errors.borrow().len() == errors_before {
                    let end_node = cx.nodes.borrow().len() as u32;
                    let end = cx.index_of(r);
                    let index = stmts.len();
                    cx.marks.borrow_mut().push(StmtMark { start: idx, end, low, high, first_node, end_node, index });
                }
                stmts.push(stmt);
                rest = r;
            }
            // Too deep: let the outermost statement report it, once, and skip all of it.
            Err(Fail::Failure(e))
                if cx.nesting.get() > 1 && e.custom.as_ref().is_some_and(|d| d.code == Code::NestingTooDeep) =>
            {
                cx.brackets.set(saved_brackets);
                return Err(Fail::Failure(e));
            }
            Err(Fail::Error(e) | Fail::Failure(e)) => {
                let err_idx = e.index(cx);
                let resume = e.resume;
                cx.report(e.into_diagnostic(cx));
                recovered = true;
                let resume_idx = recovery_point(cx, idx, err_idx, resume);
                // Keep the names that the skipped code assigns defined, so that later lines
                // do not report them as undefined.
                let mut targets = Vec::new();
                // An input's name, or a loop's variable, is defined even when the rest of the
                // statement is broken.
                let broken_binding = (rest.peek_word("input") || rest.peek_word("buffer") || rest.peek_word("for"))
                    .then(|| name(rest.bump().0).ok())
                    .flatten();
                if let Some((_, bound)) = broken_binding {
                    targets.push(bound);
                }
                // Statements start outside brackets, after a line break, `{` or `;`.
                let mut depth = 0i64;
                for at in idx..resume_idx {
                    let after_break = at == idx
                        || matches!(cx.tok(at - 1).kind, TokenKind::Newline | TokenKind::LBrace | TokenKind::Semicolon);
                    let here = In { toks: &cx.all[at..], cx };
                    if depth <= 0 && after_break && starts_assignment(here) {
                        for target in assignment_targets(here).1 {
                            if !targets.iter().any(|t: &Name| t.text == target.text) {
                                targets.push(target);
                            }
                        }
                    }
                    match cx.tok(at).kind {
                        TokenKind::LParen | TokenKind::LBracket => depth += 1,
                        TokenKind::RParen | TokenKind::RBracket => depth -= 1,
                        _ => {}
                    }
                }
                if !targets.is_empty() {
                    let id = cx.node(cx.tok(idx).range);
                    let value = Expr { id, kind: ExprKind::Error };
                    stmts.push(Stmt { id, kind: StmtKind::Assign { targets, values: vec![value] } });
                }
                rest = In { toks: &cx.all[resume_idx..], cx };
            }
        }
    }
    cx.brackets.set(saved_brackets);
    let id = cx.node(i.range_to(rest));
    stmts.shrink_to_fit();
    Ok((rest, Body { id, stmts, recovered }))
}

pub(super) fn assignment_targets(i: In<'_>) -> (In<'_>, Vec<Name>) {
    let mut targets = Vec::new();
    let mut rest = i;
    while let Ok((r, n)) = name(rest) {
        targets.push(n);
        rest = r;
        if !rest.peek_is(TokenKind::Comma) {
            break;
        }
        rest = rest.bump().0;
    }
    targets.shrink_to_fit();
    (rest, targets)
}
