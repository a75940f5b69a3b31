//! The server's state and machinery behind the protocol handlers: the [`Backend`] with its
//! client capabilities, reads on a database snapshot (a clone computed on a blocking thread,
//! cancelled by a write or `$/cancelRequest`), settings, and the refresh and diagnostics
//! tasks.

use super::*;

/// Where the stdlib sources are on disk when netc runs from its repository.
pub(super) fn stdlib_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../stdlib");
    dir.is_dir().then(|| dir.canonicalize().unwrap_or(dir))
}

/// The language server.
pub struct Backend {
    pub(super) client: Client,
    pub(super) state: Arc<Mutex<State>>,
    pub(super) changed: mpsc::UnboundedSender<()>,
    /// The client can watch files for us.
    pub(super) watch_files: AtomicBool,
    /// The client can refresh inlay hints when asked.
    pub(super) refresh_hints: AtomicBool,
    /// The client can refresh code lenses when asked.
    pub(super) refresh_lenses: AtomicBool,
    /// The client pulls diagnostics (`textDocument/diagnostic`): nothing is pushed, so that
    /// it does not show every problem twice.
    pub(super) pull_diagnostics: AtomicBool,
    /// The client can be asked to pull the diagnostics of every document again.
    pub(super) refresh_diagnostics: AtomicBool,
}

/// What a request computes on: a database clone and the document's file.
pub(super) struct Snapshot {
    pub(super) db: Database,
    pub(super) file: SourceFile,
    /// The line index of the file's text, when it is an open document (kept between its
    /// changes).
    pub(super) lines: Option<Arc<crate::convert::LineIndex>>,
    pub(super) uris: Uris,
    pub(super) chosen: Option<ScenarioRef>,
    pub(super) hints: HintConfig,
}

impl Snapshot {
    pub(super) fn text(&self) -> &str {
        self.file.text(&self.db)
    }

    /// The positions of the file's text.
    pub(super) fn map(&self) -> LineMap<'_> {
        match &self.lines {
            Some(index) => LineMap::with_index(self.text(), Arc::clone(index)),
            None => LineMap::new(self.text()),
        }
    }

    pub(super) fn location(&self, target: &ide::NavTarget) -> Option<lsp::Location> {
        let uri = self.uris.uri(&target.file)?;
        let file = lookup_file(&self.db, &target.file)?;
        let map = LineMap::new(file.text(&self.db));
        Some(lsp::Location { uri, range: map.range(target.focus_range) })
    }
}

/// Cancels a database clone when the request that uses it is dropped (`$/cancelRequest`).
pub(super) struct CancelOnDrop(Option<salsa::CancellationToken>);

impl CancelOnDrop {
    /// The request finished: nothing to cancel.
    pub(super) fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(token) = self.0.take() {
            token.cancel();
        }
    }
}

pub(super) fn content_modified() -> Error {
    Error::content_modified()
}

impl Backend {
    pub(super) fn new(client: Client) -> Self {
        let state = Arc::new(Mutex::new(State::new(stdlib_dir().as_deref())));
        let (changed, rx) = mpsc::unbounded_channel();
        tokio::spawn(publish_diagnostics(client.clone(), state.clone(), rx));
        Backend {
            client,
            state,
            changed,
            watch_files: AtomicBool::new(false),
            refresh_hints: AtomicBool::new(false),
            refresh_lenses: AtomicBool::new(false),
            pull_diagnostics: AtomicBool::new(false),
            refresh_diagnostics: AtomicBool::new(false),
        }
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while the lock was held left the state as it was: keep serving.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `f` on a snapshot of the document `uri` on a blocking thread. `None` when the
    /// document is not open (and not a file on disk). When a change elsewhere (a file read
    /// from disk, the configuration) cancels the computation, it runs again on a new
    /// snapshot; only a change of the document itself answers `ContentModified`.
    pub(super) async fn read<T, F>(&self, uri: &lsp::Uri, f: F) -> Result<Option<T>>
    where
        T: Send + 'static,
        F: Fn(&Snapshot) -> Option<T> + Send + Sync + 'static,
    {
        /// Runs after a cancellation by another change; a burst of disk changes (a branch
        /// switch) could cancel without end, so the last cancellation is answered as such.
        const ATTEMPTS: usize = 3;
        let f = Arc::new(f);
        for _ in 0..ATTEMPTS {
            let (snapshot, edits) = {
                let mut state = self.lock();
                let file = match state.doc(uri) {
                    Some(doc) => doc.file,
                    None => {
                        // Not open: a workspace file (or the stdlib), if the database has it.
                        let name = state.uris.name(uri);
                        match lookup_file(&state.db, &name) {
                            Some(f) => f,
                            None => {
                                state.disk_change(uri, false);
                                match state.db.file(&name) {
                                    Some(f) => f,
                                    None => return Ok(None),
                                }
                            }
                        }
                    }
                };
                let edits = state.doc(uri).map(|d| d.edits);
                let snapshot = Snapshot {
                    db: state.db.clone(),
                    file,
                    lines: state.doc(uri).map(|d| Arc::clone(&d.lines)),
                    uris: state.uris.clone(),
                    chosen: state.chosen.clone(),
                    hints: state.hints,
                };
                (snapshot, edits)
            };
            let guard = CancelOnDrop(Some(snapshot.db.cancellation_token()));
            let run = Arc::clone(&f);
            let outcome = tokio::task::spawn_blocking(move || {
                std::panic::catch_unwind(AssertUnwindSafe(|| {
                    salsa::Cancelled::catch(AssertUnwindSafe(|| run(&snapshot)))
                }))
            })
            .await;
            guard.disarm();
            let document_changed = self.lock().doc(uri).map(|d| d.edits) != edits;
            match outcome {
                Ok(Ok(Ok(value))) if !document_changed => return Ok(value),
                Ok(Ok(Ok(_))) => return Err(content_modified()),
                Ok(Ok(Err(_cancelled))) if document_changed => return Err(content_modified()),
                Ok(Ok(Err(_cancelled))) => continue,
                Ok(Err(_)) | Err(_) => return Err(Error::internal_error()),
            }
        }
        Err(content_modified())
    }

    /// Applies the workspace's `netc.toml` files; their problems go to the client's log and,
    /// for a malformed file, a message (the files it governs keep the default levels).
    pub(super) fn configure_project(&self) {
        // The files are read without the lock: other requests go on meanwhile.
        let (names, command_line) = self.lock().configuration_inputs();
        let (overrides, configured) = netc::workspace::read_configuration(&names, &command_line);
        self.lock().set_overrides(overrides);
        let problems = configured.diagnostics;
        if problems.is_empty() {
            return;
        }
        let malformed = problems.iter().any(|d| d.severity == netc::diagnostics::Severity::Error);
        let text = problems
            .iter()
            .map(|d| format!("{}: {} [{}]", d.primary().file, d.message, d.code.info().code))
            .collect::<Vec<_>>()
            .join("\n");
        let client = self.client.clone();
        tokio::spawn(async move {
            client.log_message(lsp::MessageType::WARNING, text.clone()).await;
            if malformed {
                client.show_message(lsp::MessageType::ERROR, text).await;
            }
        });
    }

    pub(super) fn changed(&self) {
        if !self.pull_diagnostics.load(Ordering::Relaxed) {
            let _ = self.changed.send(());
        }
    }

    /// Another file changed (on disk or saved): the diagnostics of open documents that
    /// import it may have changed too. A pulling client is asked to pull again; a pushing
    /// client gets them from [`Backend::changed`].
    pub(super) fn dependencies_changed(&self) {
        self.changed();
        if self.pull_diagnostics.load(Ordering::Relaxed) && self.refresh_diagnostics.load(Ordering::Relaxed) {
            let client = self.client.clone();
            tokio::spawn(async move {
                let _ = client.workspace_diagnostic_refresh().await;
            });
        }
    }

    /// `netc/stdlibSource`: the text of a standard-library URI (`netc-std:///nn.net`), for
    /// editors that show it.
    pub(super) async fn stdlib_source(&self, params: lsp::TextDocumentIdentifier) -> Result<Option<String>> {
        Ok(self.lock().uris.stdlib_text(&params.uri).map(str::to_string))
    }

    /// The answer to a message that was not JSON-RPC (see [`input`]).
    pub(super) async fn malformed(&self, params: Value) -> Result<Value> {
        let code = params.get("code").and_then(Value::as_i64).unwrap_or(-32700);
        let message = if code == -32600 { "Invalid request" } else { "Parse error" };
        Err(Error { code: ErrorCode::from(code), message: message.into(), data: None })
    }

    pub(super) fn configure(&self, settings: &Value) {
        let settings = settings.get("netc").unwrap_or(settings);
        let mut state = self.lock();
        if let Some(h) = settings.get("inlayHints") {
            let flag = |key: &str, default: bool| h.get(key).and_then(Value::as_bool).unwrap_or(default);
            let d = HintConfig::default();
            state.hints = HintConfig {
                enabled: flag("enabled", d.enabled),
                shape: flag("shape", d.shape),
                bytes: flag("bytes", d.bytes),
                params: flag("params", d.params),
                macs: flag("macs", d.macs),
                instances: flag("instances", d.instances),
                max_length: h
                    .get("maxLength")
                    .and_then(Value::as_u64)
                    .map_or(d.max_length, |n| n.clamp(8, 200) as usize),
            };
        }
        if let Some(s) = settings.get("activeScenario") {
            let file = s.get("file").and_then(Value::as_str);
            let name = s.get("name").and_then(Value::as_str);
            if let (Some(file), Some(name)) = (file, name) {
                let file = file.parse::<lsp::Uri>().map(|u| state.uris.name(&u)).unwrap_or(FileName::new(file));
                state.chosen = Some(ScenarioRef { file, name: name.to_string() });
            }
        }
        if let Some(Value::Object(lints)) = settings.get("lints") {
            // As `netc check -A/-W/-D` takes them: by name or code, or `warnings`. A value
            // that is no level is ignored (and said once in the client's log).
            let mut levels = std::collections::BTreeMap::new();
            let mut ignored = Vec::new();
            for (name, value) in lints {
                match Level::deserialize(value) {
                    Ok(l) => {
                        levels.insert(name.clone(), l);
                    }
                    Err(_) => ignored.push(format!("{name} = {value}")),
                }
            }
            if state.db.config().levels(&state.db) != &levels {
                state.db.set_levels(levels);
            }
            if !ignored.is_empty() {
                let client = self.client.clone();
                let message = format!(
                    "netc: ignored lint levels (expected \"allow\", \"warn\" or \"deny\"): {}",
                    ignored.join(", ")
                );
                tokio::spawn(async move { client.log_message(lsp::MessageType::WARNING, message).await });
            }
        }
    }

    /// Asks the client to ask again for hints and lenses. The requests are sent from a task
    /// of their own: a handler that waited for the client's answer could hold up `exit`.
    pub(super) fn refresh(&self) {
        let client = self.client.clone();
        let (hints, lenses) = (self.refresh_hints.load(Ordering::Relaxed), self.refresh_lenses.load(Ordering::Relaxed));
        tokio::spawn(async move {
            if hints {
                let _ = client.inlay_hint_refresh().await;
            }
            if lenses {
                let _ = client.code_lens_refresh().await;
            }
        });
    }
}

/// The diagnostics of `file`, in LSP terms.
pub(super) fn document_diagnostics(
    db: &Database,
    file: SourceFile,
    map: &LineMap<'_>,
    uris: &Uris,
) -> Vec<lsp::Diagnostic> {
    let texts = |name: &FileName| lookup_file(db, name).map(|f| f.text(db).clone());
    ide::diagnostics(db, file).iter().map(|d| convert::diagnostic(d, map, uris, &texts)).collect()
}

pub(super) fn text_document_sync() -> lsp::TextDocumentSyncCapability {
    lsp::TextDocumentSyncCapability::Options(lsp::TextDocumentSyncOptions {
        open_close: Some(true),
        change: Some(lsp::TextDocumentSyncKind::INCREMENTAL),
        will_save: None,
        will_save_wait_until: None,
        save: Some(lsp::TextDocumentSyncSaveOptions::SaveOptions(lsp::SaveOptions { include_text: Some(true) })),
    })
}

impl Backend {
    /// `netc.whatIf`: the scenario's report with the settings changed, computed on a copy of
    /// the files (the documents are not edited).
    pub(super) async fn what_if(&self, arguments: Vec<Value>) -> Result<Option<Value>> {
        let invalid = || {
            Error::invalid_params(
                "expected the arguments [uri, scenario name, settings text or { setting: value or null, ... }]",
            )
        };
        let [Value::String(uri), Value::String(name), settings] = arguments.as_slice() else {
            return Err(invalid());
        };
        let uri: lsp::Uri = uri.parse().map_err(|_| invalid())?;
        let mut changes = Vec::new();
        match settings {
            // As a scenario writes them: `batch 64  device h100_80gb`.
            Value::String(text) => match netc::whatif::parse_changes(text) {
                Ok(parsed) => changes = parsed,
                Err(message) => return Ok(Some(serde_json::json!({ "errors": [message] }))),
            },
            Value::Object(settings) => {
                for (key, value) in settings {
                    let value = match value {
                        Value::Null => None,
                        Value::String(v) => Some(v.clone()),
                        Value::Number(n) => Some(n.to_string()),
                        _ => return Err(invalid()),
                    };
                    changes.push(netc::whatif::Change { key: key.clone(), value });
                }
            }
            _ => return Err(invalid()),
        }
        let name = name.clone();
        let answer = self
            .read(&uri, move |s| {
                Some(match netc::whatif::what_if(&s.db, s.file, &name, &changes) {
                    Ok(report) => serde_json::json!({ "report": report }),
                    Err(errors) => serde_json::json!({ "errors": errors }),
                })
            })
            .await?;
        Ok(answer)
    }
}
