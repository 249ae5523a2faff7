//! `skillbake lsp`: a Language Server over stdio for skill packs (`lsp-server` for the JSON-RPC
//! transport and `lsp-types` for the protocol's types, as rust-analyzer uses them).
//!
//! It keeps the text of every open `SKILL.md`, `schema.json` and `skillbake.toml` and, on every
//! change of a pack's file, checks the pack that holds it with `skillbake_build::check_overlay`
//! (the open buffers in place of the files on disk; the nearest `skillbake.toml` in the pack's
//! folder or above applies, its buffer when it is open), then publishes the diagnostics of each
//! open file of that pack: the codes, spans, help and related places of `skillbake check`, with
//! columns in UTF-16 units as the protocol counts them. On a change of a `skillbake.toml`, the
//! folder that holds it is checked as `check` on it would (its buffer as the configuration, the
//! open files of its packs over theirs) for the configuration's own diagnostics, and every open
//! pack under it is checked again under the new text. Code actions
//! are the diagnostics' fixes (`check --fix`); hover on a frontmatter key shows what the field
//! means; completion offers the keys not written yet and, in `permission`, the permission names.
//! Cross-pack rules (`duplicate-name`, routing between packs) need the whole skills folder and
//! are left to `skillbake check`.

mod analysis;
mod text;

use analysis::{check_pack, Config, CHECKED_FILES, CONFIG_FILE};
use anyhow::{Context, Result};
use lsp_server::{Connection, Message, Notification, Request, RequestId, Response};
use lsp_types::notification::{
    DidChangeTextDocument, DidCloseTextDocument, DidOpenTextDocument, DidSaveTextDocument,
    Notification as _, PublishDiagnostics,
};
use lsp_types::request::{CodeActionRequest, Completion, HoverRequest, Request as _};
use lsp_types::{
    CodeActionOrCommand, CodeActionParams, CodeActionProviderCapability, CompletionOptions,
    CompletionParams, CompletionResponse, DidChangeTextDocumentParams, DidCloseTextDocumentParams,
    DidOpenTextDocumentParams, HoverParams, HoverProviderCapability, InitializeResult,
    PublishDiagnosticsParams, ServerCapabilities, ServerInfo, TextDocumentSyncCapability,
    TextDocumentSyncKind, Url,
};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The open documents: path → text.
#[derive(Default)]
struct Documents {
    open: BTreeMap<PathBuf, String>,
}

impl Documents {
    /// The pack folder and file name of a document the server checks.
    fn pack_of(path: &Path) -> Option<(PathBuf, String)> {
        let name = path.file_name()?.to_str()?;
        CHECKED_FILES
            .contains(&name)
            .then(|| Some((path.parent()?.to_path_buf(), name.to_string())))
            .flatten()
    }

    /// The open buffers of the files of `pack`, by file name.
    fn buffers(&self, pack: &Path) -> BTreeMap<String, String> {
        CHECKED_FILES
            .iter()
            .filter_map(|name| {
                let text = self.open.get(&pack.join(name))?;
                Some((name.to_string(), text.clone()))
            })
            .collect()
    }

    /// The configuration of `pack`: the nearest `skillbake.toml` in its folder or the folders
    /// above, open in the editor or on disk.
    fn config_of(&self, pack: &Path) -> Option<Config<'_>> {
        let path = pack
            .ancestors()
            .take(9)
            .map(|d| d.join(CONFIG_FILE))
            .find(|p| self.open.contains_key(p) || p.is_file())?;
        let text = self.open.get(&path).map(String::as_str);
        Some(Config { path, text })
    }

    /// The check of `pack` as the editor holds it.
    fn check(&self, pack: &Path) -> analysis::PackCheck {
        check_pack(pack, &self.buffers(pack), self.config_of(pack).as_ref())
    }

    /// The folders under `dir` that hold an open file of a pack.
    fn packs_under(&self, dir: &Path) -> BTreeSet<PathBuf> {
        self.open
            .keys()
            .filter_map(|p| Self::pack_of(p))
            .map(|(pack, _)| pack)
            .filter(|pack| pack.starts_with(dir))
            .collect()
    }

    /// The open files of the packs under `dir`, as `/`-separated paths relative to it.
    fn overlay_under(&self, dir: &Path) -> Vec<(String, Vec<u8>)> {
        self.open
            .iter()
            .filter(|(p, _)| Self::pack_of(p).is_some())
            .filter_map(|(p, text)| {
                let rel = p.strip_prefix(dir).ok()?;
                let parts: Option<Vec<&str>> =
                    rel.components().map(|c| c.as_os_str().to_str()).collect();
                Some((parts?.join("/"), text.clone().into_bytes()))
            })
            .collect()
    }
}

/// `skillbake lsp`.
pub fn run() -> Result<ExitCode> {
    let (connection, io_threads) = Connection::stdio();
    let capabilities = ServerCapabilities {
        text_document_sync: Some(TextDocumentSyncCapability::Kind(TextDocumentSyncKind::FULL)),
        code_action_provider: Some(CodeActionProviderCapability::Simple(true)),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        completion_provider: Some(CompletionOptions {
            trigger_characters: Some(vec!["-".to_string(), " ".to_string()]),
            ..CompletionOptions::default()
        }),
        ..ServerCapabilities::default()
    };
    let init = InitializeResult {
        capabilities,
        server_info: Some(ServerInfo {
            name: "skillbake".to_string(),
            version: Some(env!("CARGO_PKG_VERSION").to_string()),
        }),
    };
    let (id, _params) = connection
        .initialize_start()
        .context("the client did not initialize")?;
    connection
        .initialize_finish(id, serde_json::to_value(init)?)
        .context("the client did not initialize")?;
    serve(&connection)?;
    drop(connection);
    io_threads
        .join()
        .context("the connection ended abnormally")?;
    Ok(ExitCode::SUCCESS)
}

/// The message loop, until the client asks to shut down (or goes away).
fn serve(connection: &Connection) -> Result<()> {
    let mut docs = Documents::default();
    for msg in &connection.receiver {
        match msg {
            Message::Request(req) => {
                if connection.handle_shutdown(&req)? {
                    return Ok(());
                }
                let response = answer(&docs, req);
                connection.sender.send(Message::Response(response))?;
            }
            Message::Notification(n) => {
                if let Some(path) = notified(&mut docs, n) {
                    publish(connection, &docs, &path)?;
                }
            }
            Message::Response(_) => {}
        }
    }
    Ok(())
}

fn path_of(uri: &Url) -> Option<PathBuf> {
    uri.to_file_path().ok()
}

/// Applies a notification to the documents; the document to check again, if any.
fn notified(docs: &mut Documents, n: Notification) -> Option<PathBuf> {
    match n.method.as_str() {
        DidOpenTextDocument::METHOD => {
            let p: DidOpenTextDocumentParams = serde_json::from_value(n.params).ok()?;
            let path = path_of(&p.text_document.uri)?;
            docs.open.insert(path.clone(), p.text_document.text);
            Some(path)
        }
        DidChangeTextDocument::METHOD => {
            let p: DidChangeTextDocumentParams = serde_json::from_value(n.params).ok()?;
            let path = path_of(&p.text_document.uri)?;
            // Full synchronisation: the last change holds the whole text.
            let text = p.content_changes.into_iter().last()?.text;
            docs.open.insert(path.clone(), text);
            Some(path)
        }
        DidSaveTextDocument::METHOD => {
            let uri = n.params.get("textDocument")?.get("uri")?.as_str()?;
            path_of(&Url::parse(uri).ok()?)
        }
        DidCloseTextDocument::METHOD => {
            let p: DidCloseTextDocumentParams = serde_json::from_value(n.params).ok()?;
            let path = path_of(&p.text_document.uri)?;
            docs.open.remove(&path);
            Some(path)
        }
        _ => None,
    }
}

/// Publishes what a change of `path` changed: for a pack's file, the diagnostics of that pack;
/// for a `skillbake.toml`, its own and those of every open pack under it.
fn publish(connection: &Connection, docs: &Documents, path: &Path) -> Result<()> {
    if path.file_name().is_some_and(|n| n == CONFIG_FILE) {
        let Some(dir) = path.parent() else {
            return Ok(());
        };
        let text = docs.open.get(path).map(String::as_str);
        let checked = analysis::check_config(dir, text, &docs.overlay_under(dir));
        publish_file(connection, &checked, dir, CONFIG_FILE)?;
        for pack in docs.packs_under(dir) {
            publish_pack(connection, docs, &pack, None)?;
        }
        return Ok(());
    }
    match Documents::pack_of(path) {
        Some((pack, _)) => publish_pack(connection, docs, &pack, Some(path)),
        None => Ok(()),
    }
}

/// Checks `pack` and publishes the diagnostics of its open files (and of `also`, the file that
/// changed, open or not).
fn publish_pack(
    connection: &Connection,
    docs: &Documents,
    pack: &Path,
    also: Option<&Path>,
) -> Result<()> {
    let checked = docs.check(pack);
    for name in CHECKED_FILES {
        let file = pack.join(name);
        if docs.open.contains_key(&file) || also == Some(file.as_path()) {
            publish_file(connection, &checked, pack, name)?;
        }
    }
    Ok(())
}

/// Publishes the diagnostics `checked` found in `name` (relative to `root`): an empty list for
/// a file without any, so the editor clears what it showed.
fn publish_file(
    connection: &Connection,
    checked: &analysis::PackCheck,
    root: &Path,
    name: &str,
) -> Result<()> {
    let Ok(uri) = Url::from_file_path(root.join(name)) else {
        return Ok(());
    };
    let uri_of = |file: &str| Url::from_file_path(root.join(file)).ok();
    let diags = checked
        .by_file
        .get(name)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let text = checked
        .texts
        .get(name)
        .map(String::as_str)
        .unwrap_or_default();
    let params = PublishDiagnosticsParams {
        uri,
        diagnostics: analysis::to_lsp(diags, text, &checked.texts, &uri_of),
        version: None,
    };
    connection
        .sender
        .send(Message::Notification(Notification::new(
            PublishDiagnostics::METHOD.to_string(),
            params,
        )))?;
    Ok(())
}

/// The reply to a request.
fn answer(docs: &Documents, req: Request) -> Response {
    let id = req.id.clone();
    let result = match req.method.as_str() {
        CodeActionRequest::METHOD => serde_json::from_value::<CodeActionParams>(req.params)
            .map(|p| serde_json::to_value(actions(docs, &p))),
        HoverRequest::METHOD => serde_json::from_value::<HoverParams>(req.params).map(|p| {
            let at = p.text_document_position_params;
            let hover = skill_md_text(docs, &at.text_document.uri)
                .and_then(|t| analysis::hover(t, at.position));
            serde_json::to_value(hover)
        }),
        Completion::METHOD => serde_json::from_value::<CompletionParams>(req.params).map(|p| {
            let at = p.text_document_position;
            let items = skill_md_text(docs, &at.text_document.uri)
                .map(|t| analysis::completion(t, at.position))
                .unwrap_or_default();
            serde_json::to_value(CompletionResponse::Array(items))
        }),
        _ => return unknown(id, &req.method),
    };
    match result {
        Ok(Ok(value)) => Response::new_ok(id, value),
        Ok(Err(e)) | Err(e) => Response::new_err(
            id,
            lsp_server::ErrorCode::InvalidParams as i32,
            e.to_string(),
        ),
    }
}

fn unknown(id: RequestId, method: &str) -> Response {
    Response::new_err(
        id,
        lsp_server::ErrorCode::MethodNotFound as i32,
        format!("skillbake lsp does not answer `{method}`"),
    )
}

/// The text of an open `SKILL.md`.
fn skill_md_text<'d>(docs: &'d Documents, uri: &Url) -> Option<&'d str> {
    let path = path_of(uri)?;
    (path.file_name()? == "SKILL.md")
        .then(|| docs.open.get(&path).map(String::as_str))
        .flatten()
}

/// The fixes of the diagnostics in the requested range, checked on the current text.
fn actions(docs: &Documents, p: &CodeActionParams) -> Vec<CodeActionOrCommand> {
    let uri = &p.text_document.uri;
    let Some(path) = path_of(uri) else {
        return Vec::new();
    };
    let Some((pack, name)) = Documents::pack_of(&path) else {
        return Vec::new();
    };
    let checked = docs.check(&pack);
    let (Some(diags), Some(text)) = (checked.by_file.get(&name), checked.texts.get(&name)) else {
        return Vec::new();
    };
    analysis::code_actions(diags, text, uri, p.range)
        .into_iter()
        .map(CodeActionOrCommand::CodeAction)
        .collect()
}
