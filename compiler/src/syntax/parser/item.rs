//! The grammar of items (`use`, `op`, `block`, `model`, `train`, `infer`) and the parser's
//! top-level step: one item, or its recovery up to the next item keyword.

use super::*;

pub(super) fn use_item(i: In<'_>) -> PResult<'_, Item> {
    let cx = i.cx;
    let (rest, _) = keyword("use")(i)?;
    if rest.peek_is(TokenKind::Str) {
        let (rest, tok) = rest.bump();
        let id = cx.node(tok.range);
        let path = string_value(cx.text_of(tok));
        return Ok((rest, Item::Use(Use { target: Some(UseTarget::File { id, path }) })));
    }
    let (mut rest, first) = cut(name(rest).or_else(|_| expected(rest, "a module path or a file name in quotes")))?;
    let mut segments = vec![first];
    while rest.peek_is(TokenKind::Dot) {
        let (r, n) = cut(name(rest.bump().0))?;
        segments.push(n);
        rest = r;
    }
    let id = cx.node(i.bump().0.range_to(rest));
    Ok((rest, Item::Use(Use { target: Some(UseTarget::Module { id, segments }) })))
}

pub(super) fn op_outputs(i: In<'_>) -> PResult<'_, OpOutputs> {
    let cx = i.cx;
    if i.peek_is(TokenKind::LParen) {
        let (rest, open) = i.bump();
        let (rest, elems) = delimited_list(rest, open, TokenKind::RParen, "`tensor`", keyword("tensor"))?;
        if elems.is_empty() {
            return fail(i, "`tensor`, `tensors` or `(tensor, ...)`: an op returns at least one tensor");
        }
        return Ok((rest, OpOutputs::Fixed(elems.len() as u32)));
    }
    let tok = i.peek();
    match (tok.kind, cx.text_of(tok)) {
        (TokenKind::Ident, "tensor") => Ok((i.bump().0, OpOutputs::Fixed(1))),
        (TokenKind::Ident, "tensors") => Ok((i.bump().0, OpOutputs::Variadic)),
        _ => fail(i, "`tensor`, `tensors` or `(tensor, ...)`"),
    }
}

/// The header of an op, block or model whose parameter list failed to parse: the item is
/// kept with the parameters that did parse and `broken` set, so that it still defines its
/// name (calls of it are not checked).
pub(super) fn item(i: In<'_>) -> PResult<'_, Item> {
    let cx = i.cx;
    let tok = i.peek();
    let word = if tok.kind == TokenKind::Ident { cx.text_of(tok) } else { "" };
    match word {
        "use" => use_item(i),
        "op" => {
            let (rest, _) = i.bump();
            let (rest, n) = cut(name(rest))?;
            let (mut rest, ps) = params(rest)?;
            let mut outputs = OpOutputs::Fixed(1);
            if rest.peek_is(TokenKind::Arrow) {
                let (r, o) = cut(op_outputs(rest.bump().0))?;
                outputs = o;
                rest = r;
            }
            Ok((rest, Item::Op(OpDecl { name: n, params: ps, outputs, broken: false })))
        }
        "block" | "model" => {
            let (rest, _) = i.bump();
            let (rest, n) = cut(name(rest))?;
            let (rest, ps) = params(rest)?;
            let (rest, b) = cut(nested(rest, item_body))?;
            let callable = Callable { name: n, params: ps, body: b, broken: false };
            Ok((rest, if word == "block" { Item::Block(callable) } else { Item::Model(callable) }))
        }
        "train" | "infer" => {
            let kind = if word == "train" { ScenarioKind::Train } else { ScenarioKind::Infer };
            let (rest, _) = i.bump();
            let (rest, n) = cut(name(rest))?;
            let (rest, (settings, recovered)) = cut(scenario_body(rest))?;
            Ok((rest, Item::Scenario(Scenario { kind, name: n, settings, recovered })))
        }
        _ => expected(i, "an item (`use`, `op`, `block`, `model`, `train` or `infer`)"),
    }
}

/// Where to resume after an error in an item: the next line that starts with an item keyword.
pub(super) fn item_recovery_point(cx: &Ctx<'_>, start: usize, err_idx: usize) -> usize {
    let mut idx = start + 1;
    while idx < cx.all.len() {
        if cx.tok(idx).kind == TokenKind::Eof || (idx >= err_idx.min(idx) && cx.is_item_keyword_at(idx)) {
            return idx;
        }
        idx += 1;
    }
    cx.all.len() - 1
}

/// One step of the top-level loop from token index `at`, or `None` at the end of the file.
pub(super) fn step(cx: &Ctx<'_>, at: usize) -> Option<Step> {
    cx.read.set((at, at));
    cx.marks.borrow_mut().clear();
    // Node 0 is the item itself; its range is set once the item is parsed.
    cx.nodes.replace(vec![TextRange::default()]);
    cx.nesting.set(0);
    cx.tree_depth.set(0);
    cx.brackets.set(0);
    cx.in_settings.set(false);
    let mut rest = In { toks: &cx.all[at..], cx };
    while matches!(rest.peek().kind, TokenKind::Newline | TokenKind::Semicolon) {
        rest = rest.bump().0;
    }
    if rest.peek_is(TokenKind::Eof) {
        return None;
    }
    let start = cx.index_of(rest);
    let mut parsed = None;
    match item(rest) {
        Ok((r, it)) => {
            let range = rest.range_to(r);
            cx.set_range(NodeId(0), range);
            parsed = Some((Arc::new(it), ItemSpans::new(cx.nodes.take())));
            rest = r;
            let line_ends = matches!(rest.peek().kind, TokenKind::Newline | TokenKind::Semicolon | TokenKind::Eof);
            // After an unclosed body the next item already starts its own line.
            if !line_ends && !cx.is_item_keyword_at(cx.index_of(rest)) {
                let e = PErr {
                    remaining: rest.toks.len(),
                    expected: vec!["the end of the line"],
                    custom: None,
                    resume: false,
                };
                let err_idx = e.index(cx);
                cx.report(e.into_diagnostic(cx));
                rest = In { toks: &cx.all[item_recovery_point(cx, err_idx, err_idx)..], cx };
            }
        }
        Err(Fail::Error(e) | Fail::Failure(e)) => {
            let err_idx = e.index(cx);
            cx.report(e.into_diagnostic(cx));
            if let Some(partial) = partial_item(rest) {
                let end = In { toks: &cx.all[err_idx.max(start + 1)..], cx };
                cx.set_range(NodeId(0), rest.range_to(end));
                parsed = Some((Arc::new(partial), ItemSpans::new(cx.nodes.take())));
            }
            rest = In { toks: &cx.all[item_recovery_point(cx, start, err_idx)..], cx };
        }
    }
    let (low, high) = cx.read.get();
    Some(Step {
        start: at,
        end: cx.index_of(rest),
        low,
        high,
        item: parsed,
        errors: cx.errors.take(),
        documented: false,
        stmts: cx.marks.take().into_iter().map(|m| m.moved(-(at as isize))).collect(),
        reused_stmts: cx.reused.replace(0),
    })
}

/// After an error in an item's header or body, keeps what defines a name: a block or model
/// whose name parsed still exists (with an empty, recovered body), so that its callers do
/// not report it as undefined. Returns `None` when not even the name parsed.
pub(super) fn partial_item(i: In<'_>) -> Option<Item> {
    let cx = i.cx;
    let tok = i.peek();
    let word = if tok.kind == TokenKind::Ident { cx.text_of(tok) } else { "" };
    if !matches!(word, "block" | "model" | "op") {
        return None;
    }
    cx.nodes.replace(vec![TextRange::default()]);
    let (rest, _) = i.bump();
    let (mut rest, n) = name(rest).ok()?;
    let mut params = Vec::new();
    if rest.peek_is(TokenKind::LParen) {
        rest = rest.bump().0;
        cx.brackets.set(1);
        while let Ok((r, p)) = param(rest) {
            params.push(p);
            rest = r;
            if !rest.peek_is(TokenKind::Comma) {
                break;
            }
            rest = rest.bump().0;
        }
        cx.brackets.set(0);
    }
    let body = Body { id: NodeId(0), stmts: Vec::new(), recovered: true };
    Some(match word {
        "block" => Item::Block(Callable { name: n, params, body, broken: true }),
        "model" => Item::Model(Callable { name: n, params, body, broken: true }),
        _ => Item::Op(OpDecl { name: n, params, outputs: OpOutputs::Variadic, broken: true }),
    })
}
