//! `cargo xtask mcp-check [--full] [--inspector VERSION]`: drives `skillbake serve` with the
//! official MCP Inspector CLI (`npx @modelcontextprotocol/inspector --cli`), over stdio and then
//! over Streamable HTTP (`skillbake serve --http` on a loopback port, without and then with
//! `--token-file`, the Inspector sending the bearer token with `--header`), and checks every answer
//! against the binary's own CLI (`tools --format mcp`, `load`, `list`, `cat`).
//!
//! Then the MCP Skills extension's own client SDK lists, gets, reads, verifies and browses every
//! skill over both transports ([`crate::skills_client`]).
//!
//! The Inspector is installed from npm into `target/mcp-inspector` (once per version). Each call
//! and its JSON result is printed (long strings abbreviated unless `--full`); any unexpected
//! result, error or exit status fails the check.

use serde_json::{json, Value};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The Inspector version installed by default.
const INSPECTOR_VERSION: &str = "2.12.0";
const PACKAGE: &str = "@modelcontextprotocol/inspector";
/// Longest string shown in the transcript without `--full`.
const SHOWN_CHARS: usize = 160;
const CALL_TIMEOUT: Duration = Duration::from_secs(120);

/// A check of a JSON result.
type Check = Box<dyn Fn(&Value) -> Result<(), String>>;

/// What a call must answer.
enum Expect {
    /// Exit status 0 and a JSON result that passes the check.
    Ok(Check),
    /// A tool result with `isError: true` (the Inspector exits non-zero) that passes the check.
    ToolError(Check),
    /// A JSON-RPC error whose message contains this text (the Inspector exits non-zero).
    RpcError(&'static str),
}

struct Call {
    args: Vec<String>,
    /// What the check compares, for the transcript.
    checks: &'static str,
    expect: Expect,
}

fn call(args: &[&str], checks: &'static str, expect: Expect) -> Call {
    Call {
        args: args.iter().map(|s| s.to_string()).collect(),
        checks,
        expect,
    }
}

/// Runs the check; `args` are the arguments after `mcp-check`.
pub fn run(args: &[String]) -> Result<(), String> {
    let (full, version) = parse_args(args)?;
    let root = super::root();
    let binary = build_skillbake(&root)?;
    let inspector_dir = target_dir(&root).join("mcp-inspector");
    install_inspector(&inspector_dir, &version)?;
    let refs = References::from_cli(&binary)?;
    let mut calls = tool_calls(&refs);
    calls.extend(resource_calls(refs));
    let shown_binary = binary
        .strip_prefix(&root)
        .map_or_else(|_| binary.clone(), Path::to_path_buf);
    println!(
        "MCP Inspector {version} (npx runs in {}) against `{} serve` over stdio, then `{} serve --http` over Streamable HTTP{}",
        shown(&root, &inspector_dir),
        shown_binary.display(),
        shown_binary.display(),
        if full {
            String::new()
        } else {
            format!(
                "; strings over {SHOWN_CHARS} characters are abbreviated here, never in the checks"
            )
        }
    );
    let stdio = [binary.display().to_string(), "serve".to_string()];
    drive(
        &calls,
        &stdio,
        &format!("{} serve", shown_binary.display()),
        &inspector_dir,
        full,
    )?;

    let server = HttpServer::start(&binary)?;
    println!("\n$ {} serve --http 127.0.0.1:0", shown_binary.display());
    println!("{}", server.banner.trim_end());
    let http = [
        server.url.clone(),
        "--transport".to_string(),
        "http".to_string(),
    ];
    drive(&calls, &http, &http.join(" "), &inspector_dir, full)?;
    drop(server);
    with_token(&root, &binary, &shown_binary, &calls, &inspector_dir, full)?;
    let total = calls.len();
    println!(
        "\nmcp-check: {total} Inspector calls over stdio, {total} over HTTP and {total} over HTTP with a bearer token (and one without, refused), all as expected"
    );
    crate::skills_client::check(&root, &binary)
}

/// `--full` and `--inspector VERSION`.
fn parse_args(args: &[String]) -> Result<(bool, String), String> {
    let mut full = false;
    let mut version = INSPECTOR_VERSION.to_string();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--full" => full = true,
            "--inspector" => {
                version = it
                    .next()
                    .ok_or("--inspector needs a version (e.g. 2.12.0)")?
                    .clone()
            }
            other => {
                return Err(format!(
                    "mcp-check: unknown argument `{other}` (usage: cargo xtask mcp-check [--full] [--inspector VERSION])"
                ))
            }
        }
    }

    Ok((full, version))
}

/// Builds the debug `skillbake` and returns its path.
fn build_skillbake(root: &Path) -> Result<PathBuf, String> {
    super::run(
        "cargo build --bin skillbake",
        super::cargo().args(["build", "--bin", "skillbake"]),
    )?;
    let binary = target_dir(root)
        .join("debug")
        .join(format!("skillbake{}", std::env::consts::EXE_SUFFIX));
    if !binary.is_file() {
        return Err(format!("{} was not built", binary.display()));
    }
    Ok(binary)
}

/// What the binary's own CLI answers: the reference for every check.
struct References {
    tools: Value,
    load_csv: String,
    load_missing: String,
    read_file_md: String,
    uris: Vec<String>,
}

impl References {
    fn from_cli(binary: &Path) -> Result<References, String> {
        let cli = |args: &[&str]| -> Result<Vec<u8>, String> {
            let out = Command::new(binary)
                .args(args)
                .output()
                .map_err(|e| format!("skillbake {}: {e}", args.join(" ")))?;
            Ok(out.stdout)
        };
        let tools: Value = serde_json::from_slice(&cli(&["tools", "--format", "mcp"])?)
            .map_err(|e| format!("skillbake tools --format mcp: {e}"))?;
        let load_csv = strip_newline(cli(&["load", "csv-data-analysis"])?)?;
        let load_missing = strip_newline(cli(&["load", "no-such-skill"])?)?;
        let list: Value = serde_json::from_slice(&cli(&["list", "--format", "json"])?)
            .map_err(|e| format!("skillbake list --format json: {e}"))?;
        let read_file_md = String::from_utf8(cli(&["cat", "read-file", "SKILL.md"])?)
            .map_err(|e| format!("skillbake cat read-file SKILL.md: {e}"))?;
        let mut uris = Vec::new();
        for skill in list.as_array().ok_or("skillbake list: not an array")? {
            let name = skill["name"].as_str().ok_or("skillbake list: no name")?;
            for file in skill["files"]
                .as_array()
                .ok_or("skillbake list: no files")?
            {
                let path = file["path"].as_str().ok_or("skillbake list: no path")?;
                uris.push(format!("skill://{name}/{path}"));
            }
        }
        Ok(References {
            tools,
            load_csv,
            load_missing,
            read_file_md,
            uris,
        })
    }
}

/// The calls of the tools: listing them, `load_skill` found and not found, a pack tool.
fn tool_calls(refs: &References) -> Vec<Call> {
    let (tools, load_csv, load_missing) = (
        refs.tools.clone(),
        refs.load_csv.clone(),
        refs.load_missing.clone(),
    );
    vec![
    call(
        &["--method", "tools/list"],
        "every tool equals `skillbake tools --format mcp`, then list_skills",
        Expect::Ok(Box::new(move |v| {
            let listed = v["tools"].as_array().ok_or("no tools array")?;
            let expected = tools.as_array().ok_or("tools --format mcp: not an array")?;
            if listed.len() != expected.len() + 1 {
                return Err(format!(
                    "{} tools listed, expected {} from `skillbake tools --format mcp` plus list_skills",
                    listed.len(),
                    expected.len()
                ));
            }
            for (l, e) in listed.iter().zip(expected) {
                if l != e {
                    return Err(format!(
                        "tool {} differs from `skillbake tools --format mcp`",
                        e["name"]
                    ));
                }
            }
            let last = listed.last().ok_or("no tools")?;
            if last["name"] != "list_skills" {
                return Err(format!(
                    "last tool is {}, expected list_skills",
                    last["name"]
                ));
            }
            Ok(())
        })),
    ),
    call(
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "load_skill",
            "--tool-arg",
            "skill_name=csv-data-analysis",
        ],
        "one text content, byte for byte `skillbake load csv-data-analysis`",
        Expect::Ok(Box::new(move |v| {
            if v["isError"] == json!(true) {
                return Err("isError is true".into());
            }
            single_text(v, &load_csv, "`skillbake load csv-data-analysis`")
        })),
    ),
    call(
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "read-file",
            "--tool-arg",
            "path=logs/app.log",
            "max_length=5000",
        ],
        "the pack's instructions, then the arguments (the schema's defaults applied) echoed with executed: false",
        Expect::Ok(Box::new(|v| {
            let echo: Value = v["content"][1]["text"]
                .as_str()
                .and_then(|t| serde_json::from_str(t).ok())
                .ok_or("no JSON echo of the arguments in content[1]")?;
            if echo["arguments"]
                != json!({"path": "logs/app.log", "max_length": 5000, "offset": 0, "encoding": "utf-8"})
                || echo["executed"] != json!(false)
            {
                return Err(format!("echo {echo}"));
            }
            Ok(())
        })),
    ),
    call(
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "load_skill",
            "--tool-arg",
            "skill_name=no-such-skill",
        ],
        "isError: true with `skillbake load no-such-skill`'s reply",
        Expect::ToolError(Box::new(move |v| {
            single_text(v, &load_missing, "`skillbake load no-such-skill`")
        })),
    ),
    ]
}

/// The calls of the resources: listing them and their template, reading one, a missing one.
fn resource_calls(refs: References) -> Vec<Call> {
    let References {
        read_file_md, uris, ..
    } = refs;
    vec![
    call(
        &["--method", "resources/list"],
        "one resource per embedded file (`skillbake list --format json`), each with a MIME type",
        Expect::Ok(Box::new(move |v| {
            let listed = v["resources"].as_array().ok_or("no resources array")?;
            let got: Vec<&str> = listed.iter().filter_map(|r| r["uri"].as_str()).collect();
            if got != uris {
                return Err(format!(
                    "resource URIs {got:?} differ from the embedded files {uris:?}"
                ));
            }
            for r in listed {
                let mime = r["mimeType"].as_str().unwrap_or("");
                let uri = r["uri"].as_str().unwrap_or("");
                if mime.is_empty() || (uri.ends_with(".md") && mime != "text/markdown") {
                    return Err(format!("{uri}: mimeType {mime:?}"));
                }
            }
            Ok(())
        })),
    ),
    call(
        &[
            "--method",
            "resources/read",
            "--uri",
            "skill://read-file/SKILL.md",
        ],
        "text/markdown, byte for byte `skillbake cat read-file SKILL.md`",
        Expect::Ok(Box::new(move |v| {
            let contents = v["contents"].as_array().ok_or("no contents array")?;
            let [c] = contents.as_slice() else {
                return Err(format!("{} contents, expected 1", contents.len()));
            };
            if c["uri"] != "skill://read-file/SKILL.md" || c["mimeType"] != "text/markdown" {
                return Err(format!("uri {} mimeType {}", c["uri"], c["mimeType"]));
            }
            if c["text"].as_str() != Some(read_file_md.as_str()) {
                return Err("text differs from `skillbake cat read-file SKILL.md`".into());
            }
            Ok(())
        })),
    ),
    call(
        &["--method", "resources/templates/list"],
        "the template skill://{name}/{path}",
        Expect::Ok(Box::new(|v| {
            match v["resourceTemplates"][0]["uriTemplate"].as_str() {
                Some("skill://{name}/{path}") => Ok(()),
                other => Err(format!("uriTemplate {other:?}")),
            }
        })),
    ),
    call(
        &[
            "--method",
            "resources/read",
            "--uri",
            "skill://no-such-skill/SKILL.md",
        ],
        "an MCP error naming the URI",
        Expect::RpcError("no embedded file at `skill://no-such-skill/SKILL.md`"),
    ),

    ]
}

/// The same calls over HTTP against `serve --http --token-file`, the Inspector sending the
/// token with `--header`; then one call without it, which the server must refuse with 401.
fn with_token(
    root: &Path,
    binary: &Path,
    shown_binary: &Path,
    calls: &[Call],
    inspector_dir: &Path,
    full: bool,
) -> Result<(), String> {
    // A token for this run only: the clock and the process id, never reused.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let token = format!("{nanos:032x}{:08x}", std::process::id());
    let file = target_dir(root).join("mcp-check-tokens.txt");
    std::fs::write(&file, format!("# mcp-check\ninspector {token}\n"))
        .map_err(|e| format!("{}: {e}", file.display()))?;
    let file_arg = file.display().to_string();
    let server = HttpServer::start_with(binary, &["--token-file", &file_arg])?;
    println!(
        "\n$ {} serve --http 127.0.0.1:0 --token-file {}",
        shown_binary.display(),
        shown(root, &file)
    );
    println!("{}", server.banner.trim_end());
    let header = format!("Authorization: Bearer {token}");
    let target = [
        server.url.clone(),
        "--transport".to_string(),
        "http".to_string(),
        "--header".to_string(),
        header,
    ];
    let shown_target = format!(
        "{} --transport http --header 'Authorization: Bearer <the token of {}>'",
        server.url,
        shown(root, &file)
    );
    drive(calls, &target, &shown_target, inspector_dir, full)?;
    println!(
        "\n$ npx {PACKAGE} --cli {} --transport http --method tools/list   (no token)",
        server.url
    );
    let mut cmd = Command::new(npx());
    cmd.current_dir(inspector_dir)
        .env("MCP_INSPECTOR_SECRET_STORE", "memory")
        .args(["--no", "--", PACKAGE, "--cli", &server.url])
        .args(["--transport", "http", "--method", "tools/list"]);
    let out = run_with_timeout(cmd, CALL_TIMEOUT)?;
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    println!("{}", said.trim_end());
    // The Inspector reads a 401 as a server that wants OAuth, and says so (`auth_required`).
    let refused = said.contains("401") || said.contains("auth_required");
    if out.status.success() || !refused || said.contains("\"tools\"") {
        return Err(format!(
            "mcp-check: a call without a token was not refused with 401 (exit status {})",
            out.status
        ));
    }
    println!("ok: refused (401, which the Inspector reports as `auth_required`), no tools listed");
    let _ = std::fs::remove_file(&file);
    Ok(())
}

/// A `skillbake serve --http 127.0.0.1:0` (for the Inspector here, for the clients of
/// `bench http`); killed when dropped.
pub(crate) struct HttpServer {
    child: std::process::Child,
    /// The MCP endpoint, `http://127.0.0.1:PORT/mcp`.
    pub(crate) url: String,
    /// The address it listens on.
    pub(crate) addr: std::net::SocketAddr,
    /// Its first line on stderr.
    pub(crate) banner: String,
}

impl HttpServer {
    pub(crate) fn start(binary: &Path) -> Result<HttpServer, String> {
        HttpServer::start_with(binary, &[])
    }

    /// The same with more `serve` arguments.
    pub(crate) fn start_with(binary: &Path, extra: &[&str]) -> Result<HttpServer, String> {
        let mut cmd = Command::new(binary);
        cmd.args(["serve", "--http", "127.0.0.1:0"]).args(extra);
        HttpServer::spawn(cmd, &format!("{} serve --http", binary.display()))
    }

    /// Starts `cmd`, a `serve --http` command line of any form (`what` names it in errors),
    /// and waits for its banner.
    pub(crate) fn spawn(mut cmd: Command, what: &str) -> Result<HttpServer, String> {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start {what}: {e}"))?;
        let mut banner = String::new();
        if let Some(stderr) = child.stderr.take() {
            let mut stderr = std::io::BufReader::new(stderr);
            let _ = std::io::BufRead::read_line(&mut stderr, &mut banner);
            // Keep draining stderr so the server never blocks on it.
            std::thread::spawn(move || {
                let mut sink = Vec::new();
                let _ = stderr.read_to_end(&mut sink);
            });
        }
        let found = banner.split_whitespace().find_map(|w| {
            let addr = w
                .strip_prefix("http://")?
                .strip_suffix("/mcp")?
                .parse()
                .ok()?;
            Some((w.to_string(), addr))
        });
        match found {
            Some((url, addr)) => Ok(HttpServer {
                child,
                url,
                addr,
                banner,
            }),
            None => {
                let _ = child.kill();
                let _ = child.wait();
                Err(format!("{what} printed no MCP URL: {banner:?}"))
            }
        }
    }
}

impl HttpServer {
    /// Its process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends SIGTERM (what a container runtime sends to stop it) and waits at most `within`
    /// for the exit; killed if it is still running then.
    #[cfg(unix)]
    pub(crate) fn terminate(
        &mut self,
        within: Duration,
    ) -> Result<std::process::ExitStatus, String> {
        let pid = self.child.id().to_string();
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .map_err(|e| format!("kill -TERM {pid}: {e}"))?;
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().map_err(|e| e.to_string())? {
                return Ok(status);
            }
            if start.elapsed() > within {
                return Err(format!("still running {}s after SIGTERM", within.as_secs()));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Makes every call with the Inspector against `target` (its arguments before `--method`).
fn drive(
    calls: &[Call],
    target: &[String],
    shown_target: &str,
    inspector_dir: &Path,
    full: bool,
) -> Result<(), String> {
    let total = calls.len();
    for (i, c) in calls.iter().enumerate() {
        println!(
            "\n[{}/{total}] $ npx {PACKAGE} --cli {shown_target} {}",
            i + 1,
            c.args.join(" ")
        );
        let mut cmd = Command::new(npx());
        cmd.current_dir(inspector_dir)
            .env("MCP_INSPECTOR_SECRET_STORE", "memory")
            .args(["--no", "--", PACKAGE, "--cli"])
            .args(target)
            .args(&c.args);
        let out = run_with_timeout(cmd, CALL_TIMEOUT)?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let result = first_json(&stdout);
        match &result {
            Some(v) => println!("{}", pretty(v, full)),
            None if !stdout.trim().is_empty() => println!("{}", stdout.trim_end()),
            None => {}
        }
        let fail = |why: String| -> Result<(), String> {
            eprintln!("stderr:\n{}", stderr.trim_end());
            Err(format!(
                "mcp-check: {shown_target} {}: {why}",
                c.args.join(" ")
            ))
        };
        let verdict = match (&c.expect, out.status.success(), &result) {
            (Expect::Ok(check), true, Some(v)) => check(v),
            (Expect::ToolError(check), false, Some(v)) if v["isError"] == json!(true) => check(v),
            (Expect::RpcError(text), false, _) => {
                let error = first_json(&stderr);
                let message = error
                    .as_ref()
                    .and_then(|e| e["error"]["message"].as_str())
                    .unwrap_or("");
                if let Some(e) = &error {
                    println!("{}", pretty(e, full));
                }
                if message.contains(text) {
                    Ok(())
                } else {
                    Err(format!(
                        "expected an error containing {text:?}, got {message:?}"
                    ))
                }
            }
            (_, ok, _) => Err(format!(
                "unexpected answer (exit status {}, {})",
                out.status,
                if ok { "success" } else { "failure" }
            )),
        };
        match verdict {
            Ok(()) => println!("ok: {}", c.checks),
            Err(why) => return fail(why),
        }
    }
    Ok(())
}

pub(crate) fn target_dir(root: &Path) -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => root.join(dir),
        None => root.join("target"),
    }
}

fn shown(root: &Path, p: &Path) -> String {
    p.strip_prefix(root).unwrap_or(p).display().to_string()
}

pub(crate) fn npm() -> &'static str {
    if cfg!(windows) {
        "npm.cmd"
    } else {
        "npm"
    }
}

pub(crate) fn npx() -> &'static str {
    if cfg!(windows) {
        "npx.cmd"
    } else {
        "npx"
    }
}

/// Installs the Inspector into `dir` unless that version is already there.
fn install_inspector(dir: &Path, version: &str) -> Result<(), String> {
    npm_install(
        dir,
        PACKAGE,
        version,
        "{\"name\": \"skillbake-mcp-check\", \"private\": true}\n",
    )
}

/// Installs `package` at `version` into `dir` with npm, unless that version is already there;
/// `manifest` is the `package.json` written first when `dir` has none.
pub(crate) fn npm_install(
    dir: &Path,
    package: &str,
    version: &str,
    manifest: &str,
) -> Result<(), String> {
    let installed = dir.join("node_modules").join(package).join("package.json");
    let current = std::fs::read_to_string(&installed)
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .and_then(|v| v["version"].as_str().map(str::to_string));
    if current.as_deref() == Some(version) {
        return Ok(());
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let manifest_path = dir.join("package.json");
    if !manifest_path.exists() {
        std::fs::write(&manifest_path, manifest)
            .map_err(|e| format!("{}: {e}", manifest_path.display()))?;
    }
    super::run(
        &format!("npm install {package}@{version}"),
        Command::new(npm()).current_dir(dir).args([
            "install",
            "--no-audit",
            "--no-fund",
            &format!("{package}@{version}"),
        ]),
    )
    .map_err(|e| format!("{e} (mcp-check needs Node.js and npm with access to the npm registry)"))
}

/// Runs `cmd` with piped output; kills it (and, on Unix, its process group) after `timeout`.
pub(crate) fn run_with_timeout(mut cmd: Command, timeout: Duration) -> Result<Output, String> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", npx()))?;
    let reader = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut buf);
            }
            buf
        })
    };
    let out = reader(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = reader(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break status;
        }
        if start.elapsed() > timeout {
            #[cfg(unix)]
            let _ = Command::new("kill")
                .args(["-TERM", &format!("-{}", child.id())])
                .status();
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("no answer within {}s", timeout.as_secs()));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Ok(Output {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    })
}

fn strip_newline(mut bytes: Vec<u8>) -> Result<String, String> {
    if bytes.last() == Some(&b'\n') {
        bytes.pop();
    }
    String::from_utf8(bytes).map_err(|e| e.to_string())
}

/// The first JSON value in `text` (the Inspector may print more after it).
fn first_json(text: &str) -> Option<Value> {
    let start = text.find(['{', '['])?;
    serde_json::Deserializer::from_str(&text[start..])
        .into_iter::<Value>()
        .next()?
        .ok()
}

/// Checks that a tool result is exactly one text content equal to `expected`.
fn single_text(v: &Value, expected: &str, what: &str) -> Result<(), String> {
    let content = v["content"].as_array().ok_or("no content array")?;
    let [c] = content.as_slice() else {
        return Err(format!("{} contents, expected 1", content.len()));
    };
    if c["type"] != "text" {
        return Err(format!("content type {}", c["type"]));
    }
    if c["text"].as_str() != Some(expected) {
        return Err(format!("text differs from {what}"));
    }
    Ok(())
}

/// `v` pretty-printed, with strings longer than [`SHOWN_CHARS`] abbreviated unless `full`.
fn pretty(v: &Value, full: bool) -> String {
    fn shorten(v: &Value) -> Value {
        match v {
            Value::String(s) if s.chars().count() > SHOWN_CHARS => {
                let head: String = s.chars().take(SHOWN_CHARS).collect();
                Value::String(format!(
                    "{head}… [{} more characters]",
                    s.chars().count() - SHOWN_CHARS
                ))
            }
            Value::Array(a) => Value::Array(a.iter().map(shorten).collect()),
            Value::Object(o) => {
                Value::Object(o.iter().map(|(k, v)| (k.clone(), shorten(v))).collect())
            }
            other => other.clone(),
        }
    }
    let shown = if full { v.clone() } else { shorten(v) };
    serde_json::to_string_pretty(&shown).unwrap_or_default()
}
