//! The grammar of expressions: precedence climbing over the binary operators, unary minus
//! and `not`, calls, fields and indexing, literals (numbers with units in scenario settings),
//! lists, shapes and types.

use super::*;

/// An expression.
pub(super) fn expr(i: In<'_>) -> PResult<'_, Expr> {
    nested(i, |i| binary(i, 0))
}

/// The binary operator at the next token, with its level (see [`binary`]).
pub(super) fn binary_op_at(i: In<'_>) -> Option<(BinaryOp, u8)> {
    let tok = i.peek();
    use BinaryOp::*;
    Some(match tok.kind {
        TokenKind::Ident => match i.cx.text_of(tok) {
            "or" => (Or, 0),
            "and" => (And, 1),
            _ => return None,
        },
        TokenKind::EqEq => (Eq, 3),
        TokenKind::NotEq => (Ne, 3),
        TokenKind::Lt => (Lt, 3),
        TokenKind::Le => (Le, 3),
        TokenKind::Gt => (Gt, 3),
        TokenKind::Ge => (Ge, 3),
        TokenKind::Plus => (Add, 4),
        TokenKind::Minus => (Sub, 4),
        TokenKind::Star => (Mul, 5),
        TokenKind::Slash => (Div, 5),
        TokenKind::SlashSlash => (FloorDiv, 5),
        TokenKind::Percent => (Rem, 5),
        TokenKind::At => (MatMul, 5),
        TokenKind::StarStar => (Pow, 7),
        _ => return None,
    })
}

/// An expression whose operators are all of level `level` or higher: 0 `or`, 1 `and`, 2
/// `not`, 3 comparisons, 4 `+ -`, 5 `* / % @`, 6 unary `-`, 7 `**`, then postfix and primary
/// expressions. Binary operators are left-associative, except `**`: as in Python its right
/// operand is a unary expression (`2 ** -1`) and it groups to the right (`a ** b ** c` is
/// `a ** (b ** c)`), and it binds tighter than a unary minus on its left (`-x ** 2` is
/// `-(x ** 2)`).
///
/// Precedence climbing: the operand is parsed once, then each operator of a high enough
/// level takes the operand and the expression of higher level after it, so that an
/// expression without operators costs one look at the next token, not one per level. Each
/// operator of a chain of one level makes the tree one level deeper (a lower level's chain
/// starts again from the depth the expression began at).
pub(super) fn binary(i: In<'_>, level: u8) -> PResult<'_, Expr> {
    let cx = i.cx;
    let start = i;
    let (mut i, mut lhs) = if level <= 2 && i.peek_word("not") {
        unary(i, UnaryOp::Not, 2)?
    } else if i.peek_is(TokenKind::Minus) {
        unary(i, UnaryOp::Neg, 6)?
    } else {
        postfix(i)?
    };
    let entry = cx.tree_depth.get();
    let mut chain_level = u8::MAX;
    let result = loop {
        let Some((op, op_level)) = binary_op_at(i).filter(|&(_, l)| l >= level) else { break Ok((i, lhs)) };
        if op_level < chain_level {
            cx.tree_depth.set(entry);
            chain_level = op_level;
        }
        if cx.tree_depth.get() >= MAX_TREE_DEPTH {
            break too_deep(i, format!("expression deeper than {MAX_TREE_DEPTH} levels"));
        }
        cx.tree_depth.set(cx.tree_depth.get() + 1);
        let (rest, _) = i.bump();
        // `**`'s right operand starts again at unary minus, which takes in a further `**`.
        let rhs_level = if op == BinaryOp::Pow { 6 } else { op_level + 1 };
        let (rest, rhs) = match cut(binary(rest, rhs_level)) {
            Ok(ok) => ok,
            Err(e) => break Err(e),
        };
        let id = cx.node(start.range_to(rest));
        lhs = Expr { id, kind: ExprKind::Binary { op, lhs: Box::new(lhs), rhs: Box::new(rhs) } };
        i = rest;
    };
    cx.tree_depth.set(entry);
    result
}

pub(super) fn unary(i: In<'_>, op: UnaryOp, level: u8) -> PResult<'_, Expr> {
    let (rest, _) = i.bump();
    let (rest, operand) = cut(nested(rest, |r| binary(r, level)))?;
    let id = i.cx.node(i.range_to(rest));
    Ok((rest, Expr { id, kind: ExprKind::Unary { op, operand: Box::new(operand) } }))
}

pub(super) fn postfix(i: In<'_>) -> PResult<'_, Expr> {
    let saved = i.cx.tree_depth.get();
    let result = postfix_chain(i);
    i.cx.tree_depth.set(saved);
    result
}

/// A primary expression and its calls, fields and indexes; each one makes the tree deeper.
pub(super) fn postfix_chain(i: In<'_>) -> PResult<'_, Expr> {
    let cx = i.cx;
    let start = i;
    let (mut i, mut e) = primary(i)?;
    loop {
        let tok = i.peek();
        if matches!(tok.kind, TokenKind::LParen | TokenKind::Dot | TokenKind::LBracket) {
            if cx.tree_depth.get() >= MAX_TREE_DEPTH {
                return too_deep(i, format!("expression deeper than {MAX_TREE_DEPTH} levels"));
            }
            cx.tree_depth.set(cx.tree_depth.get() + 1);
        }
        match tok.kind {
            TokenKind::LParen => {
                let ExprKind::Name(callee) = &e.kind else {
                    return fail_with(
                        i,
                        Diagnostic::new(
                            Code::UnexpectedToken,
                            "only a name can be called",
                            cx.file,
                            Place::Range(tok.range),
                        )
                        .with_primary_message("call of something that is not a name"),
                    );
                };
                let callee = callee.clone();
                let (rest, open) = i.bump();
                let (rest, args) = delimited_list(rest, open, TokenKind::RParen, "an argument", argument)?;
                let id = cx.node(start.range_to(rest));
                e = Expr { id, kind: ExprKind::Call { callee, args } };
                i = rest;
            }
            TokenKind::Dot => {
                let (rest, _) = i.bump();
                let (rest, field) = cut(name(rest))?;
                let id = cx.node(start.range_to(rest));
                e = Expr { id, kind: ExprKind::Field { base: Box::new(e), field } };
                i = rest;
            }
            TokenKind::LBracket => {
                let (rest, open) = i.bump();
                let (rest, mut index) = delimited_list(rest, open, TokenKind::RBracket, "an index", expr)?;
                if index.len() != 1 {
                    return fail_with(
                        rest,
                        Diagnostic::new(
                            Code::UnexpectedToken,
                            format!("expected one index, found {}", index.len()),
                            cx.file,
                            Place::Range(i.range_to(rest)),
                        )
                        .with_primary_message("index with exactly one value: `x.shape[1]`"),
                    );
                }
                let id = cx.node(start.range_to(rest));
                e = Expr { id, kind: ExprKind::Index { base: Box::new(e), index: Box::new(index.remove(0)) } };
                i = rest;
            }
            _ => return Ok((i, e)),
        }
    }
}

/// `value` or `keyword=value`.
pub(super) fn argument(i: In<'_>) -> PResult<'_, Arg> {
    let cx = i.cx;
    let keyword_arg = i.peek().kind == TokenKind::Ident && i.peek2().is_some_and(|t| t.kind == TokenKind::Eq);
    if keyword_arg {
        let (rest, kw) = word(i)?;
        if KEYWORDS.contains(&kw.text.as_str()) {
            return expected(i, "an argument");
        }
        let (rest, _) = token(TokenKind::Eq)(rest)?;
        let (rest, value) = cut(expr(rest))?;
        let id = cx.node(i.range_to(rest));
        return Ok((rest, Arg { id, keyword: Some(kw), value }));
    }
    let (rest, value) = expr(i)?;
    let id = cx.node(i.range_to(rest));
    Ok((rest, Arg { id, keyword: None, value }))
}

pub(super) fn parse_int(text: &str) -> Option<i64> {
    // Most literals have no `_`: parsed without a copy.
    if text.contains('_') { text.replace('_', "").parse().ok() } else { text.parse().ok() }
}

pub(super) fn primary(i: In<'_>) -> PResult<'_, Expr> {
    let cx = i.cx;
    let tok = i.peek();
    match tok.kind {
        TokenKind::Int | TokenKind::Float => number_literal(i),
        TokenKind::Str => {
            let (rest, tok) = i.bump();
            let id = cx.node(tok.range);
            Ok((rest, Expr { id, kind: ExprKind::Str(string_value(cx.text_of(tok))) }))
        }
        TokenKind::Ident => {
            match cx.text_of(tok) {
                "true" | "false" => {
                    let (rest, tok) = i.bump();
                    let id = cx.node(tok.range);
                    Ok((rest, Expr { id, kind: ExprKind::Bool(cx.text_of(tok) == "true") }))
                }
                "repeat" => {
                    let (rest, _) = i.bump();
                    if let Some(args) = python_call_after(rest) {
                        // Python's `x.repeat(1, 2)` or `repeat(x, ...)`: the keyword is not a call.
                        return fail_with(
                            rest,
                            Diagnostic::new(
                                Code::UnexpectedToken,
                                "`repeat` is not a function",
                                cx.file,
                                Place::Range(args),
                            )
                            .with_primary_message("several values, as a call's arguments")
                            .with_help(
                                "`repeat N block(x)` calls a block N times; Python's `x.repeat(1, 2)` \
                                 (Tensor.repeat) is `tile(x, [1, 2])`",
                            ),
                        );
                    }
                    let (rest, count) = cut(nested(rest, postfix))?;
                    let (rest, call) = cut(nested(rest, postfix))?;
                    if !matches!(call.kind, ExprKind::Call { .. }) {
                        return fail_with(
                        rest,
                        Diagnostic::new(
                            Code::UnexpectedToken,
                            "expected a call after `repeat COUNT`",
                            cx.file,
                            Place::Range(cx.nodes.borrow()[call.id.0 as usize]),
                        )
                        .with_primary_message("not a call")
                        .with_help("write `repeat 3 block(x, ...)`; parenthesize a computed count: `repeat (n - 1) block(x)`"),
                    );
                    }
                    let id = cx.node(i.range_to(rest));
                    Ok((rest, Expr { id, kind: ExprKind::Repeat { count: Box::new(count), call: Box::new(call) } }))
                }
                w if KEYWORDS.contains(&w) => expected(i, "an expression"),
                _ => {
                    let (rest, n) = name(i)?;
                    Ok((rest, Expr { id: n.id, kind: ExprKind::Name(n) }))
                }
            }
        }
        TokenKind::LParen => {
            let (rest, open) = i.bump();
            let (rest, mut inner) = delimited_list(rest, open, TokenKind::RParen, "an expression", expr)?;
            if inner.len() != 1 {
                return fail_with(
                    rest,
                    Diagnostic::new(
                        Code::UnexpectedToken,
                        "expected one expression in parentheses",
                        cx.file,
                        Place::Range(i.range_to(rest)),
                    )
                    .with_primary_message("tuples are not values; use a list `[a, b]`"),
                );
            }
            let mut e = inner.remove(0);
            // The parentheses belong to the expression's range.
            cx.set_range(e.id, i.range_to(rest));
            e = Expr { id: e.id, kind: e.kind };
            Ok((rest, e))
        }
        TokenKind::LBracket => {
            let (rest, open) = i.bump();
            let (rest, elems) = delimited_list(rest, open, TokenKind::RBracket, "an expression", expr)?;
            let id = cx.node(i.range_to(rest));
            Ok((rest, Expr { id, kind: ExprKind::List(elems) }))
        }
        _ => expected(i, "an expression"),
    }
}

/// Whether a word after a number reads as a size unit, even misspelled (`mb`, `Gib`).
pub(super) fn looks_like_unit(word: &str) -> bool {
    matches!(word.to_ascii_lowercase().as_str(), "b" | "kb" | "mb" | "gb" | "tb" | "kib" | "mib" | "gib" | "tib")
}

/// A number, optionally followed by a size unit (`12 GiB`).
pub(super) fn number_literal(i: In<'_>) -> PResult<'_, Expr> {
    let cx = i.cx;
    let (rest, tok) = i.bump();
    let text = cx.text_of(tok);
    let is_int = tok.kind == TokenKind::Int;
    // A unit follows on the same line: any word in a scenario that is not a setting key,
    // elsewhere a word ending in `B`/`b` (every unit does).
    let unit_tok = rest.get(0).filter(|t| {
        t.kind == TokenKind::Ident && {
            let w = cx.text_of(t);
            if cx.in_settings.get() { setting(w).is_none() && !KEYWORDS.contains(&w) } else { looks_like_unit(w) }
        }
    });
    let value: Option<f64> =
        if is_int { parse_int(text).map(|v| v as f64) } else { text.replace('_', "").parse().ok() };
    let int_value = if is_int { parse_int(text) } else { None };
    let bad_number =
        |what: &str| Diagnostic::new(Code::InvalidNumber, format!("{what} `{text}`"), cx.file, Place::Range(tok.range));
    if let Some(unit_tok) = unit_tok {
        let rest = In { toks: &rest.toks[1..], cx };
        let unit_id = cx.node(unit_tok.range);
        let unit = Name { id: unit_id, text: cx.text_of(unit_tok).into() };
        let id = cx.node(i.range_to(rest));
        let kind = match value {
            Some(v) if v.is_finite() => ExprKind::Size { value: v.to_bits(), integer: is_int, unit },
            _ => {
                cx.report(bad_number("number too large").with_primary_message("does not fit in a 64-bit float"));
                ExprKind::Error
            }
        };
        return Ok((rest, Expr { id, kind }));
    }
    let id = cx.node(tok.range);
    let kind = if is_int {
        match int_value {
            Some(v) => ExprKind::Int(v),
            None => {
                cx.report(
                    bad_number("integer literal too large")
                        .with_primary_message(format!("larger than the largest integer, {}", i64::MAX)),
                );
                ExprKind::Error
            }
        }
    } else {
        match value {
            Some(v) if v.is_finite() => ExprKind::Float(v.to_bits()),
            _ => {
                cx.report(bad_number("number too large").with_primary_message("does not fit in a 64-bit float"));
                ExprKind::Error
            }
        }
    };
    Ok((rest, Expr { id, kind }))
}

pub(super) fn type_expr(i: In<'_>) -> PResult<'_, TypeExpr> {
    nested(i, type_expr_inner)
}

pub(super) fn type_expr_inner(i: In<'_>) -> PResult<'_, TypeExpr> {
    let cx = i.cx;
    if i.peek_is(TokenKind::LBracket) {
        let (rest, open) = i.bump();
        let (rest, mut elems) = delimited_list(rest, open, TokenKind::RBracket, "a type", type_expr)?;
        if elems.len() != 1 {
            return fail(i, "a list type with one element type, `[int]`");
        }
        let id = cx.node(i.range_to(rest));
        return Ok((rest, TypeExpr::List { id, elem: Box::new(elems.remove(0)) }));
    }
    let (rest, n) = name(i).or_else(|_| expected(i, "a type"))?;
    if rest.get(0).is_some_and(|t| t.kind == TokenKind::LBracket) {
        let (rest2, open) = rest.bump();
        let (rest2, dims) = delimited_list(rest2, open, TokenKind::RBracket, "a dimension", expr)?;
        let id = cx.node(i.range_to(rest2));
        return Ok((rest2, TypeExpr::Tensor { id, dtype: n, dims }));
    }
    Ok((rest, TypeExpr::Named(n)))
}

/// The range of `( ... )` at the start of `i` when a comma separates values at its top level:
/// arguments of a call, which no parenthesized expression has.
fn python_call_after(i: In<'_>) -> Option<TextRange> {
    let open = i.peek();
    if open.kind != TokenKind::LParen {
        return None;
    }
    let mut depth = 0usize;
    let mut comma = false;
    for tok in i.toks {
        match tok.kind {
            TokenKind::LParen | TokenKind::LBracket | TokenKind::LBrace => depth += 1,
            TokenKind::RParen | TokenKind::RBracket | TokenKind::RBrace => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return comma.then(|| TextRange::new(open.range.start, tok.range.end));
                }
            }
            TokenKind::Comma if depth == 1 => comma = true,
            TokenKind::Eof => return None,
            _ => {}
        }
    }
    None
}
