//! What-if: a scenario run with some settings changed (`netc report --batch 64`, `--device
//! h100_80gb`, the editor's `netc.whatIf`).
//!
//! A change is an edit of the scenario's text in a database, never on disk: the run is exactly
//! the run of the file with those settings (checked, elaborated and simulated by the same
//! queries), and a mistyped value gets the diagnostic the file would get. (`netc fit` edits
//! nothing: see `costs::fit`.)

use crate::db::SourceFile;
use crate::diagnostics::TextRange;
use crate::elaborate::Db;
use crate::host::Database;
use crate::semantics::files::{parse_file, syntax_tree};
use crate::syntax::{Item, NodeId};

/// One setting to change: `batch 64` is `key` "batch" and `value` "64"; a flag (`no_grad`)
/// has no value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The setting's keyword.
    pub key: String,
    /// Its value as written in a `.net` file (`64`, `bf16`, `80 GiB`), `None` for a flag.
    pub value: Option<String>,
}

impl Change {
    /// `key value` (or `key` for a flag).
    pub fn new(key: &str, value: Option<&str>) -> Change {
        Change { key: key.to_string(), value: value.map(str::to_string) }
    }

    /// The setting as written.
    fn text(&self) -> String {
        match &self.value {
            Some(v) => format!("{} {v}", self.key),
            None => self.key.clone(),
        }
    }
}

/// The changes written as a scenario's settings are (`batch 64  device h100_80gb  no_grad`,
/// `budget 12 GiB`): each setting's keyword, then its value up to the next keyword (a flag
/// has none); or why the text is not settings.
pub fn parse_changes(text: &str) -> Result<Vec<Change>, String> {
    use crate::syntax::settings::{SETTINGS, SettingForm, setting};
    let mut changes: Vec<Change> = Vec::new();
    let mut value: Vec<&str> = Vec::new();
    let finish = |changes: &mut Vec<Change>, value: &mut Vec<&str>| -> Result<(), String> {
        if let Some(last) = changes.last_mut() {
            let form = setting(&last.key).map(|s| s.form);
            match (form, value.is_empty()) {
                (Some(SettingForm::Flag), false) => {
                    return Err(format!("`{}` is a flag and takes no value, found `{}`", last.key, value.join(" ")));
                }
                (Some(SettingForm::Flag), true) => {}
                (_, true) => return Err(format!("`{}` needs a value", last.key)),
                (_, false) => last.value = Some(value.join(" ")),
            }
        } else if !value.is_empty() {
            return Err(format!("`{}` is not a scenario setting", value[0]));
        }
        value.clear();
        Ok(())
    };
    for token in text.split_whitespace() {
        if setting(token).is_some() {
            finish(&mut changes, &mut value)?;
            changes.push(Change::new(token, None));
        } else if changes.is_empty() {
            let hint = match crate::suggest::closest(token, SETTINGS.iter().map(|s| s.key)) {
                Some(close) => format!("; did you mean `{close}`?"),
                None => String::new(),
            };
            return Err(format!("`{token}` is not a scenario setting{hint}"));
        } else {
            value.push(token);
        }
    }
    finish(&mut changes, &mut value)?;
    Ok(changes)
}

/// The text of `file` with `changes` made to every scenario (or only to the one named
/// `only`): a setting that is there is replaced, one that is not is added after the last.
pub fn changed_text(db: &dyn Db, file: SourceFile, only: Option<&str>, changes: &[Change]) -> String {
    let parse = parse_file(db, file);
    let mut edits: Vec<(TextRange, String)> = Vec::new();
    for (item, spans) in parse.tree.items.iter().zip(&parse.spans) {
        let Item::Scenario(scenario) = item.as_ref() else { continue };
        if only.is_some_and(|name| name != scenario.name.text) {
            continue;
        }
        let mut added = String::new();
        for change in changes {
            match scenario.settings.iter().find(|s| s.key.text == change.key) {
                Some(setting) => edits.push((spans.range(setting.id), change.text())),
                None => {
                    added.push_str("  ");
                    added.push_str(&change.text());
                }
            }
        }
        if !added.is_empty() {
            let after: NodeId = scenario.settings.last().map_or(scenario.name.id, |s| s.id);
            edits.push((TextRange::empty(spans.range(after).end), added));
        }
    }
    let mut text = file.text(db).clone();
    // From the end, so that earlier offsets stay valid (the ranges do not overlap).
    edits.sort_by_key(|(r, _)| std::cmp::Reverse(r.start));
    for (range, new) in edits {
        text.replace_range(range.start as usize..range.end as usize, &new);
    }
    text
}

/// Applies `changes` to the scenarios of `files` (or to the one named `only`) in `db`.
pub fn apply(db: &mut Database, files: &[SourceFile], only: Option<&str>, changes: &[Change]) {
    if changes.is_empty() {
        return;
    }
    for &file in files {
        let text = changed_text(db, file, only, changes);
        if &text != file.text(db) {
            let name = file.name(db).clone();
            db.set_file(name, text);
        }
    }
}

/// What scenario `name` of `file` would cost with `changes` (the editor's what-if): the
/// files' texts are copied into a fresh database and the scenario's edited there, so the
/// database the editor reads is never changed. The scenario's report, or the messages of the
/// errors that stop it at those settings.
pub fn what_if(
    db: &dyn Db,
    file: SourceFile,
    name: &str,
    changes: &[Change],
) -> Result<crate::report::ScenarioReport, Vec<String>> {
    let mut copy = Database::new();
    copy.set_levels(db.config().levels(db).clone());
    for (file_name, &source) in db.workspace().files(db).iter() {
        copy.set_file(file_name.clone(), source.text(db).clone());
    }
    let target = copy.set_file(file.name(db).clone(), file.text(db).clone());
    let Some(index) =
        syntax_tree(&copy, target).iter().position(|item| matches!(item, Item::Scenario(s) if s.name.text == name))
    else {
        return Err(vec![format!("no scenario named `{name}`")]);
    };
    apply(&mut copy, &[target], Some(name), changes);
    let errors = crate::host::scenario_errors(&copy, target, index as u32);
    if !errors.is_empty() {
        return Err(errors.iter().map(|d| d.message.clone()).collect());
    }
    crate::report::scenario_report(&copy, target, index as u32)
        .ok_or_else(|| vec![format!("scenario `{name}` cannot be simulated at these settings")])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_are_read_as_scenario_settings() {
        let changes = parse_changes("batch 64  budget 12 GiB  no_grad  device h100_80gb").expect("settings");
        let written: Vec<String> = changes.iter().map(Change::text).collect();
        assert_eq!(written, ["batch 64", "budget 12 GiB", "no_grad", "device h100_80gb"]);
        assert_eq!(parse_changes("bach 64").unwrap_err(), "`bach` is not a scenario setting; did you mean `batch`?");
        assert_eq!(parse_changes("no_grad 1").unwrap_err(), "`no_grad` is a flag and takes no value, found `1`");
        assert_eq!(parse_changes("batch").unwrap_err(), "`batch` needs a value");
        assert_eq!(parse_changes("").expect("nothing"), []);
    }
}
