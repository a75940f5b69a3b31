//! The netc language server: the Language Server Protocol over [`netc::ide`].
//!
//! This crate translates; it does not analyze. Every answer comes from `netc::ide`, which
//! works on byte offsets and file names; [`convert`] maps them to UTF-16 positions and URIs.
//!
//! Concurrency (see ARCHITECTURE.md): one [`State`] behind a mutex owns the salsa database.
//! Notifications that change text (`didOpen`, `didChange`, `didSave`, `didClose`, watched
//! files) apply their edit under the lock before any `.await`, so a later edit can never
//! overtake an earlier one. Requests take a `db.clone()` under the lock, release it, and
//! compute on a blocking thread inside `salsa::Cancelled::catch`: a write cancels them (the
//! answer is then `ContentModified`, as is an answer computed on a document that has changed
//! since), and `$/cancelRequest` cancels their clone. Diagnostics are published by one
//! task, in order, for the open documents, once the changes pause for
//! [`DIAGNOSTICS_DELAY`].
//!
//! The server never writes files and never panics on what a client sends: positions out of
//! range are clamped, unknown documents get empty answers, a panic in the analysis becomes
//! an `InternalError` answer.

mod backend;
pub mod convert;
pub mod input;
pub mod state;

use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use netc::db::Db as _;
use netc::db::{Level, SourceFile, lookup_file};
use netc::diagnostics::{FileName, Place, TextRange};
use netc::host::Database;
use netc::ide::{self, HintConfig, ScenarioRef};
use salsa::Database as _;
use serde::Deserialize as _;
use serde_json::Value;
use tokio::sync::mpsc;
use tower_lsp_server::jsonrpc::{Error, ErrorCode, Result};
use tower_lsp_server::ls_types as lsp;
use tower_lsp_server::{Client, LanguageServer, LspService, Server};

use convert::{LineMap, Uris};
use state::Document;
pub use state::State;

pub use backend::Backend;
use backend::*;

/// The command that makes a scenario the active one: arguments `[uri, name]`.
pub const SET_ACTIVE_SCENARIO: &str = "netc.setActiveScenario";

/// The command that answers what a scenario would cost with other settings, without
/// editing the file: arguments `[uri, scenario name, settings]`, the settings as a scenario
/// writes them (`"batch 64  device h100_80gb"`) or as an object (`{ "batch": "64",
/// "no_grad": null }`); the answer `{ "report": ScenarioReport }` (as `netc report
/// --format json` prints one scenario) or `{ "errors": [message, ...] }`.
pub const WHAT_IF: &str = "netc.whatIf";

/// Serves the protocol on standard input and output until the client exits; the exit code
/// (see [`serve`]).
pub fn run_stdio() -> u8 {
    let runtime = match tokio::runtime::Builder::new_multi_thread().worker_threads(4).enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the language server: {e}");
            return 2;
        }
    };
    let code = runtime.block_on(serve(tokio::io::stdin(), tokio::io::stdout()));
    // Blocking tasks still computing stale answers are not waited for.
    runtime.shutdown_background();
    code
}

/// Serves the protocol on `input` and `output` until the `exit` notification or the end of
/// the input. The input goes through [`input::sanitize`] first, so that a malformed message
/// is answered with an error and the session goes on.
///
/// Returns the exit code the protocol asks for: 0 if a `shutdown` request came before the
/// session ended, 1 otherwise (an `exit` without `shutdown`, or a client that went away).
/// The input filter notes the request as it passes: the protocol library cancels what is
/// pending when `exit` comes, and a client may send `exit` before the answer to `shutdown`,
/// so the handler of `shutdown` may never run.
pub async fn serve<I, O>(input: I, output: O) -> u8
where
    I: tokio::io::AsyncRead + Unpin + Send + 'static,
    O: tokio::io::AsyncWrite,
{
    let (checked, reader) = tokio::io::duplex(1 << 16);
    let shut_down = Arc::new(AtomicBool::new(false));
    tokio::spawn(input::sanitize(input, checked, Arc::clone(&shut_down)));
    let (service, socket) = LspService::build(Backend::new)
        .custom_method("netc/stdlibSource", Backend::stdlib_source)
        .custom_method(input::MALFORMED, Backend::malformed)
        .finish();
    Server::new(reader, output, socket).serve(service).await;
    if shut_down.load(Ordering::SeqCst) { 0 } else { 1 }
}

/// How long the edits must pause before the diagnostics are computed.
///
/// An editor asks for hints, semantic tokens and the like right after an edit; diagnostics
/// begun at once would take the cores from those answers (every scenario of the file
/// simulated, with the lints' what-if runs), and the next keystroke would cancel them half
/// done. Pushed 30 ms later, they are no later to the eye.
pub const DIAGNOSTICS_DELAY: std::time::Duration = std::time::Duration::from_millis(30);

/// Publishes the diagnostics of every open document once a burst of changes pauses for
/// [`DIAGNOSTICS_DELAY`], one batch at a time (so an older batch never overwrites a newer
/// one).
async fn publish_diagnostics(client: Client, state: Arc<Mutex<State>>, mut changed: mpsc::UnboundedReceiver<()>) {
    while changed.recv().await.is_some() {
        // Wait for a pause: each change in the meantime starts the wait again.
        loop {
            match tokio::time::timeout(DIAGNOSTICS_DELAY, changed.recv()).await {
                Ok(Some(())) => continue,
                Ok(None) => return,
                Err(_elapsed) => break,
            }
        }
        let (db, docs, uris) = {
            let state = state.lock().unwrap_or_else(|e| e.into_inner());
            let docs: Vec<(lsp::Uri, Document)> =
                state.docs.values().map(|(uri, d)| (uri.clone(), d.clone())).collect();
            (state.db.clone(), docs, state.uris.clone())
        };
        let outcome = tokio::task::spawn_blocking(move || {
            std::panic::catch_unwind(AssertUnwindSafe(|| {
                salsa::Cancelled::catch(AssertUnwindSafe(|| {
                    let db = &db;
                    docs.into_iter()
                        .map(|(uri, d)| {
                            let map = LineMap::with_index(d.file.text(db), d.lines);
                            (uri, d.version, d.edits, document_diagnostics(db, d.file, &map, &uris))
                        })
                        .collect::<Vec<_>>()
                }))
            }))
        })
        .await;
        let Ok(Ok(Ok(batches))) = outcome else { continue };
        for (uri, version, edits, list) in batches {
            // A document changed since: the batch after this one has its diagnostics.
            let current = {
                let state = state.lock().unwrap_or_else(|e| e.into_inner());
                state.doc(&uri).map(|d| d.edits)
            };
            if current != Some(edits) {
                continue;
            }
            client.publish_diagnostics(uri, list, Some(version)).await;
        }
    }
}

impl LanguageServer for Backend {
    async fn initialize(&self, params: lsp::InitializeParams) -> Result<lsp::InitializeResult> {
        {
            let mut state = self.lock();
            let mut roots: Vec<PathBuf> = Vec::new();
            for folder in params.workspace_folders.iter().flatten() {
                if let Some(p) = folder.uri.to_file_path() {
                    roots.push(p.into_owned());
                }
            }
            #[allow(deprecated)]
            if roots.is_empty()
                && let Some(p) = params.root_uri.as_ref().and_then(|u| u.to_file_path())
            {
                roots.push(p.into_owned());
            }
            state.roots = roots;
        }
        if let Some(options) = &params.initialization_options {
            self.configure(options);
        }
        let legend = lsp::SemanticTokensLegend {
            token_types: convert::TOKEN_TYPES.to_vec(),
            token_modifiers: convert::TOKEN_MODIFIERS.to_vec(),
        };
        let pull = params.capabilities.text_document.as_ref().is_some_and(|t| t.diagnostic.is_some());
        self.pull_diagnostics.store(pull, Ordering::Relaxed);
        let refresh =
            params.capabilities.workspace.as_ref().and_then(|w| w.diagnostics.as_ref()).and_then(|d| d.refresh_support);
        self.refresh_diagnostics.store(refresh.unwrap_or(false), Ordering::Relaxed);
        let capabilities = lsp::ServerCapabilities {
            diagnostic_provider: pull.then(|| {
                lsp::DiagnosticServerCapabilities::Options(lsp::DiagnosticOptions {
                    identifier: Some("netc".into()),
                    inter_file_dependencies: true,
                    workspace_diagnostics: false,
                    work_done_progress_options: Default::default(),
                })
            }),
            position_encoding: Some(lsp::PositionEncodingKind::UTF16),
            text_document_sync: Some(text_document_sync()),
            hover_provider: Some(lsp::HoverProviderCapability::Simple(true)),
            completion_provider: Some(lsp::CompletionOptions {
                trigger_characters: Some([".", "(", ",", "=", ":"].iter().map(|s| s.to_string()).collect()),
                ..Default::default()
            }),
            signature_help_provider: Some(lsp::SignatureHelpOptions {
                trigger_characters: Some(vec!["(".into(), ",".into()]),
                retrigger_characters: Some(vec![",".into(), "=".into()]),
                work_done_progress_options: Default::default(),
            }),
            definition_provider: Some(lsp::OneOf::Left(true)),
            references_provider: Some(lsp::OneOf::Left(true)),
            document_symbol_provider: Some(lsp::OneOf::Left(true)),
            workspace_symbol_provider: Some(lsp::OneOf::Left(true)),
            code_lens_provider: Some(lsp::CodeLensOptions { resolve_provider: Some(false) }),
            document_formatting_provider: Some(lsp::OneOf::Left(true)),
            code_action_provider: Some(lsp::CodeActionProviderCapability::Simple(true)),
            folding_range_provider: Some(lsp::FoldingRangeProviderCapability::Simple(true)),
            inlay_hint_provider: Some(lsp::OneOf::Left(true)),
            semantic_tokens_provider: Some(lsp::SemanticTokensServerCapabilities::SemanticTokensOptions(
                lsp::SemanticTokensOptions {
                    legend,
                    range: Some(false),
                    full: Some(lsp::SemanticTokensFullOptions::Bool(true)),
                    work_done_progress_options: Default::default(),
                },
            )),
            execute_command_provider: Some(lsp::ExecuteCommandOptions {
                commands: vec![SET_ACTIVE_SCENARIO.to_string(), WHAT_IF.to_string()],
                work_done_progress_options: Default::default(),
            }),
            ..Default::default()
        };
        let watch = params
            .capabilities
            .workspace
            .as_ref()
            .and_then(|w| w.did_change_watched_files.as_ref())
            .and_then(|d| d.dynamic_registration)
            .unwrap_or(false);
        self.watch_files.store(watch, Ordering::Relaxed);
        let workspace = params.capabilities.workspace.as_ref();
        let hints = workspace.and_then(|w| w.inlay_hint.as_ref()).and_then(|h| h.refresh_support);
        let lenses = workspace.and_then(|w| w.code_lens.as_ref()).and_then(|c| c.refresh_support);
        self.refresh_hints.store(hints.unwrap_or(false), Ordering::Relaxed);
        self.refresh_lenses.store(lenses.unwrap_or(false), Ordering::Relaxed);
        Ok(lsp::InitializeResult {
            capabilities,
            server_info: Some(lsp::ServerInfo { name: "netc".into(), version: Some(env!("CARGO_PKG_VERSION").into()) }),
            offset_encoding: None,
        })
    }

    async fn initialized(&self, _: lsp::InitializedParams) {
        if self.watch_files.load(Ordering::Relaxed) {
            let options = lsp::DidChangeWatchedFilesRegistrationOptions {
                watchers: ["**/*.net", "**/netc.toml"]
                    .into_iter()
                    .map(|glob| lsp::FileSystemWatcher {
                        glob_pattern: lsp::GlobPattern::String(glob.into()),
                        kind: None,
                    })
                    .collect(),
            };
            let registration = lsp::Registration {
                id: "netc-watch-net-files".into(),
                method: "workspace/didChangeWatchedFiles".into(),
                register_options: serde_json::to_value(options).ok(),
            };
            let client = self.client.clone();
            tokio::spawn(async move {
                let _ = client.register_capability(vec![registration]).await;
            });
        }
        // Read the workspace's files on a blocking thread, without the lock; then add them.
        let roots = self.lock().roots.clone();
        if let Ok(files) = tokio::task::spawn_blocking(move || state::scan(&roots)).await {
            self.lock().add_disk_files(files);
            self.configure_project();
            self.changed();
        }
    }

    async fn shutdown(&self) -> Result<()> {
        Ok(())
    }

    async fn did_open(&self, params: lsp::DidOpenTextDocumentParams) {
        let d = params.text_document;
        self.lock().open(d.uri, d.version, d.text);
        // A document outside the workspace folders may have a netc.toml of its own.
        self.configure_project();
        self.changed();
    }

    async fn did_change(&self, params: lsp::DidChangeTextDocumentParams) {
        let d = params.text_document;
        self.lock().change(&d.uri, d.version, params.content_changes);
        self.changed();
    }

    async fn did_save(&self, params: lsp::DidSaveTextDocumentParams) {
        if let Some(text) = params.text {
            let mut state = self.lock();
            if let Some(version) = state.doc(&params.text_document.uri).map(|d| d.version) {
                let change = lsp::TextDocumentContentChangeEvent { range: None, range_length: None, text };
                state.change(&params.text_document.uri, version, vec![change]);
            }
        }
        self.dependencies_changed();
    }

    async fn did_close(&self, params: lsp::DidCloseTextDocumentParams) {
        let uri = params.text_document.uri;
        self.lock().close(&uri);
        self.changed();
        self.client.publish_diagnostics(uri, Vec::new(), None).await;
    }

    async fn did_change_watched_files(&self, params: lsp::DidChangeWatchedFilesParams) {
        {
            let mut state = self.lock();
            for change in params.changes {
                state.disk_change(&change.uri, change.typ == lsp::FileChangeType::DELETED);
            }
        }
        // New files need their levels too, so this runs after any change.
        self.configure_project();
        self.dependencies_changed();
    }

    async fn did_change_configuration(&self, params: lsp::DidChangeConfigurationParams) {
        self.configure(&params.settings);
        self.refresh();
        // Lint levels change the diagnostics of every document.
        self.dependencies_changed();
    }

    async fn hover(&self, params: lsp::HoverParams) -> Result<Option<lsp::Hover>> {
        let p = params.text_document_position_params;
        self.read(&p.text_document.uri, move |s| {
            let map = s.map();
            let hover = ide::hover(&s.db, s.file, map.offset(p.position), s.chosen.as_ref())?;
            Some(lsp::Hover {
                contents: lsp::HoverContents::Markup(convert::markdown(hover.markdown)),
                range: Some(map.range(hover.range)),
            })
        })
        .await
    }

    async fn inlay_hint(&self, params: lsp::InlayHintParams) -> Result<Option<Vec<lsp::InlayHint>>> {
        self.read(&params.text_document.uri, move |s| {
            let map = s.map();
            let range = map.text_range(params.range);
            let hints = ide::inlay_hints(&s.db, s.file, Some(range), s.chosen.as_ref(), &s.hints);
            Some(
                hints
                    .into_iter()
                    .map(|h| lsp::InlayHint {
                        position: map.position(h.offset),
                        label: lsp::InlayHintLabel::String(h.label),
                        kind: None,
                        text_edits: None,
                        tooltip: Some(lsp::InlayHintTooltip::MarkupContent(convert::markdown(h.tooltip))),
                        padding_left: Some(true),
                        padding_right: None,
                        data: None,
                    })
                    .collect(),
            )
        })
        .await
    }

    async fn code_lens(&self, params: lsp::CodeLensParams) -> Result<Option<Vec<lsp::CodeLens>>> {
        let uri = params.text_document.uri;
        self.read(&uri.clone(), move |s| {
            let map = s.map();
            let lenses = ide::code_lenses(&s.db, s.file, s.chosen.as_ref());
            Some(
                lenses
                    .into_iter()
                    .map(|l| lsp::CodeLens {
                        range: map.range(l.range),
                        command: Some(lsp::Command {
                            title: l.title,
                            command: SET_ACTIVE_SCENARIO.to_string(),
                            arguments: Some(vec![
                                Value::String(uri.as_str().to_string()),
                                Value::String(l.scenario.name.clone()),
                            ]),
                        }),
                        // The figures as numbers, for clients that show them elsewhere (a
                        // status bar) and should not parse the title.
                        data: Some(serde_json::json!({
                            "scenario": l.scenario.name,
                            "active": l.active,
                            "totalBytes": l.total_bytes.map(|b| b as f64),
                            "budgetBytes": l.budget_bytes.map(|b| b as f64),
                            "fitsBatch": l.fits_batch.map(|b| b as f64),
                        })),
                    })
                    .collect(),
            )
        })
        .await
    }

    async fn execute_command(&self, params: lsp::ExecuteCommandParams) -> Result<Option<lsp::LSPAny>> {
        if params.command == WHAT_IF {
            return self.what_if(params.arguments).await;
        }
        if params.command != SET_ACTIVE_SCENARIO {
            return Err(Error::invalid_params(format!("unknown command `{}`", params.command)));
        }
        // `[uri, name]` chooses a scenario; `[uri, null]` (or no name) goes back to the default.
        let (uri, name) = match params.arguments.as_slice() {
            [Value::String(uri), Value::String(name), ..] => (uri.clone(), Some(name.clone())),
            [Value::String(uri)] | [Value::String(uri), Value::Null, ..] => (uri.clone(), None),
            _ => return Err(Error::invalid_params("expected the arguments [uri, scenario name or null]")),
        };
        {
            let mut state = self.lock();
            let file = match uri.parse::<lsp::Uri>() {
                Ok(u) => state.uris.name(&u),
                Err(_) => FileName::new(uri),
            };
            state.chosen = name.map(|name| ScenarioRef { file, name });
        }
        self.refresh();
        Ok(None)
    }

    async fn goto_definition(&self, params: lsp::GotoDefinitionParams) -> Result<Option<lsp::GotoDefinitionResponse>> {
        let p = params.text_document_position_params;
        self.read(&p.text_document.uri, move |s| {
            let map = s.map();
            let targets = ide::goto_definition(&s.db, s.file, map.offset(p.position));
            let locations: Vec<lsp::Location> = targets.iter().filter_map(|t| s.location(t)).collect();
            (!locations.is_empty()).then_some(lsp::GotoDefinitionResponse::Array(locations))
        })
        .await
    }

    async fn references(&self, params: lsp::ReferenceParams) -> Result<Option<Vec<lsp::Location>>> {
        let p = params.text_document_position;
        let include = params.context.include_declaration;
        self.read(&p.text_document.uri, move |s| {
            let map = s.map();
            let targets = ide::references(&s.db, s.file, map.offset(p.position), include);
            Some(targets.iter().filter_map(|t| s.location(t)).collect())
        })
        .await
    }

    async fn document_symbol(&self, params: lsp::DocumentSymbolParams) -> Result<Option<lsp::DocumentSymbolResponse>> {
        self.read(&params.text_document.uri, move |s| {
            let map = s.map();
            #[allow(deprecated)]
            fn convert(sym: ide::DocumentSymbol, map: &LineMap<'_>) -> lsp::DocumentSymbol {
                lsp::DocumentSymbol {
                    name: if sym.name.is_empty() { "_".into() } else { sym.name },
                    detail: sym.detail,
                    kind: convert::symbol_kind(sym.kind),
                    tags: None,
                    deprecated: None,
                    range: map.range(sym.range),
                    selection_range: map.range(sym.selection_range),
                    children: Some(sym.children.into_iter().map(|c| convert(c, map)).collect()),
                }
            }
            let symbols = ide::document_symbols(&s.db, s.file);
            Some(lsp::DocumentSymbolResponse::Nested(symbols.into_iter().map(|x| convert(x, &map)).collect()))
        })
        .await
    }

    async fn symbol(&self, params: lsp::WorkspaceSymbolParams) -> Result<Option<lsp::WorkspaceSymbolResponse>> {
        let (db, uris) = {
            let state = self.lock();
            (state.db.clone(), state.uris.clone())
        };
        let outcome = tokio::task::spawn_blocking(move || {
            std::panic::catch_unwind(AssertUnwindSafe(|| {
                salsa::Cancelled::catch(AssertUnwindSafe(|| {
                    let mut out = Vec::new();
                    for sym in ide::workspace_symbols(&db, &params.query) {
                        let (Some(uri), Some(file)) = (uris.uri(&sym.file), lookup_file(&db, &sym.file)) else {
                            continue;
                        };
                        let range = LineMap::new(file.text(&db)).range(sym.range);
                        out.push(lsp::WorkspaceSymbol {
                            name: sym.name,
                            kind: convert::symbol_kind(sym.kind),
                            tags: None,
                            container_name: Some(sym.file.to_string()),
                            location: lsp::OneOf::Left(lsp::Location { uri, range }),
                            data: None,
                        });
                    }
                    out
                }))
            }))
        })
        .await;
        match outcome {
            Ok(Ok(Ok(symbols))) => Ok(Some(lsp::WorkspaceSymbolResponse::Nested(symbols))),
            Ok(Ok(Err(_))) => Err(content_modified()),
            _ => Err(Error::internal_error()),
        }
    }

    async fn completion(&self, params: lsp::CompletionParams) -> Result<Option<lsp::CompletionResponse>> {
        let p = params.text_document_position;
        self.read(&p.text_document.uri, move |s| {
            let map = s.map();
            let items = ide::completions(&s.db, s.file, map.offset(p.position));
            let items: Vec<lsp::CompletionItem> = items
                .into_iter()
                .map(|c| lsp::CompletionItem {
                    label: c.label.clone(),
                    kind: Some(convert::completion_kind(c.kind)),
                    detail: c.detail,
                    documentation: c.documentation.map(|d| lsp::Documentation::MarkupContent(convert::markdown(d))),
                    sort_text: Some(format!("{}{}", convert::completion_sort(c.kind), c.label)),
                    text_edit: Some(lsp::CompletionTextEdit::Edit(lsp::TextEdit {
                        range: map.range(c.replace),
                        new_text: c.insert_text,
                    })),
                    ..Default::default()
                })
                .collect();
            Some(lsp::CompletionResponse::Array(items))
        })
        .await
    }

    async fn signature_help(&self, params: lsp::SignatureHelpParams) -> Result<Option<lsp::SignatureHelp>> {
        let p = params.text_document_position_params;
        self.read(&p.text_document.uri, move |s| {
            let map = s.map();
            let sig = ide::signature_help(&s.db, s.file, map.offset(p.position))?;
            let parameters = sig
                .params
                .into_iter()
                .map(|label| lsp::ParameterInformation {
                    label: lsp::ParameterLabel::Simple(label),
                    documentation: None,
                })
                .collect();
            Some(lsp::SignatureHelp {
                signatures: vec![lsp::SignatureInformation {
                    label: sig.label,
                    documentation: sig.documentation.map(|d| lsp::Documentation::MarkupContent(convert::markdown(d))),
                    parameters: Some(parameters),
                    active_parameter: sig.active,
                }],
                active_signature: Some(0),
                active_parameter: sig.active,
            })
        })
        .await
    }

    async fn semantic_tokens_full(
        &self,
        params: lsp::SemanticTokensParams,
    ) -> Result<Option<lsp::SemanticTokensResult>> {
        self.read(&params.text_document.uri, move |s| {
            let map = s.map();
            let tokens = ide::semantic_tokens(&s.db, s.file);
            Some(lsp::SemanticTokensResult::Tokens(lsp::SemanticTokens {
                result_id: None,
                data: convert::semantic_tokens(tokens, &map),
            }))
        })
        .await
    }

    async fn folding_range(&self, params: lsp::FoldingRangeParams) -> Result<Option<Vec<lsp::FoldingRange>>> {
        self.read(&params.text_document.uri, move |s| {
            let folds = ide::folding_ranges(&s.db, s.file);
            Some(
                folds
                    .into_iter()
                    .map(|f| lsp::FoldingRange {
                        start_line: f.start_line,
                        start_character: None,
                        end_line: f.end_line,
                        end_character: None,
                        kind: Some(match f.kind {
                            ide::FoldKind::Region => lsp::FoldingRangeKind::Region,
                            ide::FoldKind::Comment => lsp::FoldingRangeKind::Comment,
                            ide::FoldKind::Imports => lsp::FoldingRangeKind::Imports,
                        }),
                        collapsed_text: None,
                    })
                    .collect(),
            )
        })
        .await
    }

    /// Pull diagnostics: the same list a push would carry, for the document as it is now.
    async fn diagnostic(&self, params: lsp::DocumentDiagnosticParams) -> Result<lsp::DocumentDiagnosticReportResult> {
        let items = self
            .read(&params.text_document.uri, |s| Some(document_diagnostics(&s.db, s.file, &s.map(), &s.uris)))
            .await?;
        let report = lsp::RelatedFullDocumentDiagnosticReport {
            related_documents: None,
            full_document_diagnostic_report: lsp::FullDocumentDiagnosticReport {
                result_id: None,
                items: items.unwrap_or_default(),
            },
        };
        Ok(lsp::DocumentDiagnosticReportResult::Report(lsp::DocumentDiagnosticReport::Full(report)))
    }

    /// Quick fixes: the fixes of the diagnostics that overlap the requested range.
    async fn code_action(&self, params: lsp::CodeActionParams) -> Result<Option<lsp::CodeActionResponse>> {
        let range = params.range;
        let actions = self
            .read(&params.text_document.uri, move |s| {
                let text = s.text();
                let map = LineMap::new(text);
                let wanted = map.text_range(range);
                let texts = |name: &FileName| lookup_file(&s.db, name).map(|f| f.text(&s.db).clone());
                let mut actions = Vec::new();
                for d in ide::diagnostics(&s.db, s.file).iter() {
                    let Place::Range(at) = d.primary().place else { continue };
                    if at.end < wanted.start || at.start > wanted.end || d.fixes.is_empty() {
                        continue;
                    }
                    for fix in &d.fixes {
                        let mut changes: std::collections::HashMap<lsp::Uri, Vec<lsp::TextEdit>> = Default::default();
                        for edit in &fix.edits {
                            let (Place::Range(r), Some(uri), Some(edit_text)) =
                                (&edit.place, s.uris.uri(&edit.file), texts(&edit.file))
                            else {
                                continue;
                            };
                            let edit_map = LineMap::new(&edit_text);
                            let target = if edit.insert_after { TextRange::empty(r.end) } else { *r };
                            changes
                                .entry(uri)
                                .or_default()
                                .push(lsp::TextEdit { range: edit_map.range(target), new_text: edit.text.clone() });
                        }
                        if changes.is_empty() {
                            continue;
                        }
                        actions.push(lsp::CodeActionOrCommand::CodeAction(lsp::CodeAction {
                            title: fix.title.clone(),
                            kind: Some(lsp::CodeActionKind::QUICKFIX),
                            diagnostics: Some(vec![convert::diagnostic(d, &map, &s.uris, &texts)]),
                            edit: Some(lsp::WorkspaceEdit { changes: Some(changes), ..Default::default() }),
                            is_preferred: Some(true),
                            ..Default::default()
                        }));
                    }
                }
                Some(actions)
            })
            .await?;
        Ok(actions.filter(|a| !a.is_empty()))
    }

    async fn formatting(&self, params: lsp::DocumentFormattingParams) -> Result<Option<Vec<lsp::TextEdit>>> {
        let result = self
            .read(&params.text_document.uri, move |s| {
                let text = s.text();
                let map = LineMap::new(text);
                Some(match ide::formatted(&s.db, s.file) {
                    Ok(out) if out == text => Ok(Vec::new()),
                    Ok(out) => {
                        let whole = netc::diagnostics::TextRange::new(0, text.len() as u32);
                        Ok(vec![lsp::TextEdit { range: map.range(whole), new_text: out }])
                    }
                    Err(e) => Err(e.to_string()),
                })
            })
            .await?;
        match result {
            None => Ok(None),
            Some(Ok(edits)) => Ok(Some(edits)),
            Some(Err(message)) => Err(Error {
                code: ErrorCode::ServerError(-32803),
                message: format!("cannot format: {message}").into(),
                data: None,
            }),
        }
    }
}
