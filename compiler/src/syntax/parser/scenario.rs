//! The grammar of scenarios: `train`/`infer` bodies of settings, one per line, with recovery
//! at the next setting after an error.

use super::*;

pub(super) fn setting_entry(i: In<'_>) -> PResult<'_, Setting> {
    let cx = i.cx;
    let (rest, key) = word(i)?;
    let Some(spec) = setting(&key.text) else {
        let suggestion = crate::suggest::closest(&key.text, crate::syntax::settings::SETTINGS.iter().map(|s| s.key));
        let mut d = Diagnostic::new(
            Code::UnknownSetting,
            format!("unknown scenario setting `{}`", key.text),
            cx.file,
            Place::Range(cx.nodes.borrow()[key.id.0 as usize]),
        )
        .with_primary_message("not a setting");
        d = match suggestion {
            Some(s) => d.with_help(format!("did you mean `{s}`?")),
            None => d.with_note("the settings are listed in spec/language.md, section Scenarios"),
        };
        return fail_with(i, d);
    };
    let (rest, value) = match spec.form {
        SettingForm::Flag => (rest, SettingValue::Flag),
        SettingForm::Value => {
            let (r, v) = cut(expr(rest))?;
            (r, SettingValue::Value(v))
        }
        SettingForm::Dim => {
            let (r, n) = cut(name(rest))?;
            let (r, _) = cut(token(TokenKind::Eq)(r))?;
            let (r, v) = cut(expr(r))?;
            (r, SettingValue::Dim { name: n, value: v })
        }
        SettingForm::Args => {
            let (r, open) = cut(token(TokenKind::LParen)(rest))?;
            let (r, args) = delimited_list(r, open, TokenKind::RParen, "an argument", argument)?;
            (r, SettingValue::Args(args))
        }
    };
    let id = cx.node(i.range_to(rest));
    Ok((rest, Setting { id, key, value }))
}

/// Where to resume after an error in a setting that started at `start`: the next word that
/// is a setting key, the end of the line, or the closing brace.
pub(super) fn setting_recovery_point(cx: &Ctx<'_>, start: usize, err_idx: usize) -> usize {
    let mut balance: i64 = 0;
    let mut idx = start + 1;
    while idx < cx.all.len() {
        let tok = cx.tok(idx);
        match tok.kind {
            TokenKind::Eof => return idx,
            TokenKind::LParen | TokenKind::LBracket => balance += 1,
            TokenKind::RParen | TokenKind::RBracket => balance -= 1,
            // Braces never appear inside a setting: a `}` ends the scenario.
            TokenKind::RBrace => return idx,
            _ if cx.is_item_keyword_at(idx) && cx.text_of(tok) != "model" => return idx,
            TokenKind::Newline if balance <= 0 && idx >= err_idx => return idx,
            TokenKind::Ident if balance <= 0 && idx >= err_idx && setting(cx.text_of(tok)).is_some() => return idx,
            _ => {}
        }
        idx += 1;
    }
    cx.all.len() - 1
}

pub(super) fn scenario_body(i: In<'_>) -> PResult<'_, (Vec<Setting>, bool)> {
    let cx = i.cx;
    let (mut rest, open) = token(TokenKind::LBrace)(i).or_else(|_| fail(i, "`{`"))?;
    let mut settings = Vec::new();
    let mut recovered = false;
    cx.in_settings.set(true);
    loop {
        while matches!(rest.peek().kind, TokenKind::Newline | TokenKind::Semicolon | TokenKind::Comma) {
            rest = rest.bump().0;
        }
        let idx = cx.index_of(rest);
        if rest.peek_is(TokenKind::RBrace) {
            rest = rest.bump().0;
            break;
        }
        // `model` at the start of a line is a new item only if a `{` follows on that line.
        let item_starts = cx.is_item_keyword_at(idx)
            && (cx.text_of(cx.tok(idx)) != "model"
                || (idx..cx.all.len())
                    .map(|at| cx.tok(at))
                    .take_while(|t| t.kind != TokenKind::Newline)
                    .any(|t| t.kind == TokenKind::LBrace));
        if rest.peek_is(TokenKind::Eof) || item_starts {
            cx.report(
                Diagnostic::new(Code::UnclosedDelimiter, "unclosed `{`", cx.file, Place::Range(open.range))
                    .with_primary_message("this scenario is never closed")
                    .with_help("add `}` after its last setting"),
            );
            recovered = true;
            break;
        }
        match setting_entry(rest) {
            Ok((r, s)) => {
                settings.push(s);
                rest = r;
            }
            Err(Fail::Error(e) | Fail::Failure(e)) => {
                let err_idx = e.index(cx);
                cx.report(e.into_diagnostic(cx));
                recovered = true;
                rest = In { toks: &cx.all[setting_recovery_point(cx, idx, err_idx)..], cx };
            }
        }
    }
    cx.in_settings.set(false);
    Ok((rest, (settings, recovered)))
}
