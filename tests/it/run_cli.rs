//! `skillbake run` and `skillbake exec-script` through the real binary, on every bundled
//! runnable pack: stdout is one JSON object, exit 0 exactly when `ok`. `send-email` talks to an
//! SMTP sink this test starts on 127.0.0.1; nothing leaves the machine.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_skillbake");

/// The `--timeout` of every run that must finish: no loaded machine takes this long to start
/// and run a bundled pack's script.
const FINISH_WITHIN: &str = "120";

/// How long a wait for something that must happen may take before the test fails; a wait ends
/// as soon as the thing happens.
const EVENT_WITHIN: Duration = Duration::from_secs(60);

fn repo(rel: &str) -> String {
    format!("{}/{rel}", env!("CARGO_MANIFEST_DIR"))
}

struct Run {
    tmp: tempfile::TempDir,
}

impl Run {
    fn new() -> Self {
        Run {
            tmp: tempfile::tempdir().unwrap(),
        }
    }

    fn cache(&self) -> PathBuf {
        self.tmp.path().join("cache")
    }

    fn out(&self) -> PathBuf {
        self.tmp.path().join("out")
    }

    /// `skillbake ARGS` with this test's folders; a run that names no `--timeout` gets
    /// [`FINISH_WITHIN`], so that no outcome depends on how busy the machine is.
    fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(BIN);
        c.args(args);
        let runs = matches!(args.first(), Some(&"run") | Some(&"exec-script"));
        if runs && !args.contains(&"--timeout") && !args.contains(&"--dry-run") {
            c.args(["--timeout", FINISH_WITHIN]);
        }
        c.arg("--cache-dir")
            .arg(self.cache())
            .arg("--output-dir")
            .arg(self.out())
            .current_dir(self.tmp.path());
        c
    }

    fn run(&self, args: &[&str]) -> (Option<i32>, Value, String) {
        let o = self.command(args).output().unwrap();
        parse(&o)
    }
}

fn parse(o: &Output) -> (Option<i32>, Value, String) {
    let text = String::from_utf8(o.stdout.clone()).unwrap();
    assert_eq!(text.matches('\n').count(), 1, "one line on stdout: {text}");
    let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    (
        o.status.code(),
        v,
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn assert_shape(v: &Value) {
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["ok", "data", "error"], "{v}");
    if v["ok"] == json!(false) {
        assert_eq!(v["data"], Value::Null);
        let e: Vec<&str> = v["error"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(e, ["code", "message"]);
    } else {
        assert_eq!(v["error"], Value::Null);
    }
}

#[test]
fn read_file_needs_its_permission_and_then_reads() {
    let r = Run::new();
    let readme = repo("README.md");
    let params = json!({"path": readme, "max_length": 11}).to_string();
    let (code, v, _) = r.run(&["run", "read-file", "--params", &params]);
    assert_shape(&v);
    assert_eq!(
        (code, v["error"]["code"].as_str()),
        (Some(1), Some("PERMISSION_DENIED"))
    );
    assert!(v["error"]["message"]
        .as_str()
        .unwrap()
        .contains("--allow filesystem:read"));
    let (code, v, _) = r.run(&[
        "run",
        "read-file",
        "--params",
        &params,
        "--allow",
        "filesystem:read",
    ]);
    assert_shape(&v);
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["data"]["content"], json!("# skillbake"));
    assert_eq!(v["data"]["truncated"], json!(true));
}

#[test]
fn parameters_come_from_json_a_file_or_stdin_and_are_checked() {
    let r = Run::new();
    let p = r.tmp.path().join("params.json");
    std::fs::write(
        &p,
        json!({"path": repo("Cargo.toml"), "max_length": 9}).to_string(),
    )
    .unwrap();
    let at = format!("@{}", p.display());
    let (code, v, _) = r.run(&[
        "run",
        "read-file",
        "--params",
        &at,
        "--allow",
        "filesystem:read",
    ]);
    assert_eq!(
        (code, v["data"]["content"].as_str()),
        (Some(0), Some("[workspac")),
        "{v}"
    );

    let mut child = r
        .command(&[
            "run",
            "read-file",
            "--params",
            "-",
            "--allow",
            "filesystem:read",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(
            json!({"path": repo("Cargo.toml"), "max_length": 3})
                .to_string()
                .as_bytes(),
        )
        .unwrap();
    let (code, v, _) = parse(&child.wait_with_output().unwrap());
    assert_eq!(
        (code, v["data"]["content"].as_str()),
        (Some(0), Some("[wo"))
    );

    for (params, needle) in [
        ("{\"path\": 3}", "at /path: 3 is not of type \"string\""),
        (
            "{\"path\": \"x\", \"max_length\": 0, \"bogus\": 1}",
            "(2 problems)",
        ),
        ("not json", "are not valid JSON"),
        ("[1]", "must be a JSON object, not an array"),
        (
            "@/nonexistent/params.json",
            "could not be read from /nonexistent/params.json",
        ),
    ] {
        let (code, v, _) = r.run(&[
            "run",
            "read-file",
            "--params",
            params,
            "--allow",
            "filesystem:read",
        ]);
        assert_shape(&v);
        assert_eq!(
            (code, v["error"]["code"].as_str()),
            (Some(1), Some("INVALID_PARAMS")),
            "{params}"
        );
        assert!(
            v["error"]["message"].as_str().unwrap().contains(needle),
            "{params}: {v}"
        );
    }
    let (code, v, _) = r.run(&["run", "no-such-skill"]);
    assert_eq!(
        (code, v["error"]["code"].as_str()),
        (Some(1), Some("SKILL_NOT_FOUND"))
    );
}

#[test]
fn usage_errors_exit_2() {
    let r = Run::new();
    for args in [
        &["run", "read-file", "--allow", "netwrok"][..],
        &["run", "read-file", "--timeout", "0"],
        &["run", "read-file", "--timeout", "abc"],
    ] {
        let o = r.command(args).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(o.stdout.is_empty());
    }
    let o = r
        .command(&["run", "read-file", "--allow", "netwrok"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&o.stderr).contains("did you mean `network`?"));
}

/// `run` and `exec-script` are parsed by a command tree of their own (`cli::fast`); help and
/// usage errors still come from the full one, whose help describes the subcommand.
#[test]
fn help_and_usage_errors_of_the_running_commands_are_the_full_parsers() {
    for (sub, about) in [
        ("run", "Run a skill's entrypoint with JSON parameters"),
        ("exec-script", "DB-GPT's execute_skill_script_file"),
    ] {
        let o = Command::new(BIN).args([sub, "--help"]).output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{sub}");
        let help = String::from_utf8_lossy(&o.stdout);
        assert!(help.contains(about), "{sub}: {help}");
        assert!(help.contains(&format!("Usage: skillbake {sub}")), "{help}");
        // A missing argument: clap's usage error, exit 2, nothing on stdout.
        let o = Command::new(BIN).arg(sub).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{sub}");
        assert!(o.stdout.is_empty(), "{sub}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(&format!("Usage: skillbake {sub}")), "{err}");
    }
}

#[test]
fn dry_run_prints_what_would_run_and_leaves_no_trace() {
    let r = Run::new();
    let params = json!({"path": repo("README.md")}).to_string();
    let (code, v, _) = r.run(&[
        "run",
        "read-file",
        "--dry-run",
        "--params",
        &params,
        "--allow",
        "filesystem:read",
    ]);
    assert_shape(&v);
    assert_eq!(code, Some(0), "{v}");
    let d = &v["data"];
    assert_eq!(d["dry_run"], json!(true));
    assert_eq!(
        d["params"],
        json!({"path": repo("README.md"), "max_length": 20000, "offset": 0, "encoding": "utf-8"})
    );
    assert_eq!(d["working_dir"], json!(r.tmp.path().display().to_string()));
    assert_eq!(
        d["permissions"],
        json!({"declared": ["filesystem:read"], "granted": ["filesystem:read"]})
    );
    assert!(d["command"][1]
        .as_str()
        .unwrap()
        .ends_with("/scripts/read_file.py"));
    assert!(!r.cache().exists() && !r.out().exists());
    // Denied calls are denied in a dry run too.
    let (code, v, _) = r.run(&["run", "read-file", "--dry-run", "--params", &params]);
    assert_eq!(
        (code, v["error"]["code"].as_str()),
        (Some(1), Some("PERMISSION_DENIED"))
    );
}

#[test]
fn csv_profile_and_chunks_format() {
    let r = Run::new();
    let params = json!({"path": repo("skills/csv-data-analysis/assets/sample_sales.csv"), "group_by": "region", "agg": ["revenue"]}).to_string();
    let (code, v, _) = r.run(&[
        "run",
        "csv-data-analysis",
        "--params",
        &params,
        "--allow",
        "filesystem:read",
    ]);
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(
        (v["data"]["rows"].as_u64(), v["data"]["columns"].as_u64()),
        (Some(40), Some(12))
    );
    let north = &v["data"]["group_by"]["groups"][0];
    assert_eq!(
        (north["region"].as_str(), north["revenue"]["sum"].as_f64()),
        (Some("North"), Some(12380.4))
    );
    // DB-GPT's shape of the same run: one text chunk with the script's stdout.
    let o = r
        .command(&[
            "run",
            "csv-data-analysis",
            "--params",
            &params,
            "--allow",
            "filesystem:read",
            "--format",
            "chunks",
        ])
        .output()
        .unwrap();
    let (code, v, _) = parse(&o);
    assert_eq!(code, Some(0));
    let chunks = v["chunks"].as_array().unwrap();
    assert_eq!(chunks.len(), 1);
    assert_eq!(chunks[0]["output_type"], json!("text"));
    assert!(chunks[0]["content"]
        .as_str()
        .unwrap()
        .starts_with("{\n  \"ok\": true,"));
}

/// A workbook with one sheet, built with Python's zipfile (no third-party packages).
fn tiny_xlsx(path: &Path) {
    let script = r#"
import sys, zipfile
parts = {
 "[Content_Types].xml": '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>',
 "_rels/.rels": '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>',
 "xl/workbook.xml": '<?xml version="1.0"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Sales" sheetId="1" r:id="rId1"/></sheets></workbook>',
 "xl/_rels/workbook.xml.rels": '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>',
 "xl/worksheets/sheet1.xml": '<?xml version="1.0"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>region</t></is></c><c r="B1" t="inlineStr"><is><t>revenue</t></is></c></row><row r="2"><c r="A2" t="inlineStr"><is><t>North</t></is></c><c r="B2"><v>12</v></c></row><row r="3"><c r="A3" t="inlineStr"><is><t>South</t></is></c><c r="B3"><f>B2*2</f></c></row></sheetData></worksheet>',
}
with zipfile.ZipFile(sys.argv[1], "w") as z:
    for name, text in parts.items():
        z.writestr(name, text)
"#;
    let status = Command::new("python3")
        .args(["-c", script])
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn excel_inspects_a_workbook() {
    let r = Run::new();
    let book = r.tmp.path().join("book.xlsx");
    tiny_xlsx(&book);
    let params = json!({"path": book.display().to_string(), "rows": 3}).to_string();
    let (code, v, _) = r.run(&[
        "run",
        "excel",
        "--params",
        &params,
        "--allow",
        "filesystem:read",
    ]);
    assert_eq!(code, Some(0), "{v}");
    let sheet = &v["data"]["sheets"][0];
    assert_eq!(sheet["name"], json!("Sales"));
    assert_eq!(sheet["formulas_without_cached_value"], json!(1), "{v}");
    let (code, v, _) = r.run(&[
        "run",
        "excel",
        "--params",
        r#"{"path": "missing.xlsx"}"#,
        "--allow",
        "filesystem:read",
    ]);
    assert_eq!(
        (code, v["error"]["code"].as_str()),
        (Some(1), Some("FILE_NOT_FOUND")),
        "{v}"
    );
}

#[test]
fn financial_ratios_then_the_report_in_dbgpt_form() {
    let r = Run::new();
    let params =
        json!({"input": repo("skills/financial-report-analyzer/assets/sample_financials.csv")})
            .to_string();
    let (code, v, _) = r.run(&[
        "run",
        "financial-report-analyzer",
        "--params",
        &params,
        "--allow",
        "filesystem:read",
    ]);
    assert_eq!(code, Some(0), "{v}");
    let gross = v["data"]["ratios"]["2024"]["gross_margin"]
        .as_f64()
        .unwrap();
    assert!((gross - 0.3499).abs() < 1e-4, "{gross}");
    let args = json!({"ratios": v["data"], "analysis": "## 总体结论\n\n盈利稳定。"}).to_string();
    let o = r
        .command(&[
            "exec-script",
            "financial-report-analyzer",
            "scripts/render_report.py",
            "--args",
            &args,
            "--allow",
            "filesystem:read",
        ])
        .output()
        .unwrap();
    let (code, v, _) = parse(&o);
    assert_eq!(code, Some(0), "{v}");
    let text: Value = serde_json::from_str(v["chunks"][0]["content"].as_str().unwrap()).unwrap();
    let report = PathBuf::from(text["data"]["output"].as_str().unwrap());
    assert_eq!(report, r.out().join("report.html"));
    let html = std::fs::read_to_string(report).unwrap();
    assert!(
        html.contains("盈利稳定。") && html.contains("<svg"),
        "the report has the analysis and the chart"
    );
}

/// A minimal SMTP server on 127.0.0.1 that accepts one message and returns what it received.
/// It listens on 2525, a mail port: the sandbox lets a pack declaring `smtp` reach the mail
/// ports only. Another test run may hold the port for a moment: wait for it (bounded).
fn smtp_sink() -> (u16, std::thread::JoinHandle<String>) {
    let start = std::time::Instant::now();
    let listener = loop {
        match TcpListener::bind("127.0.0.1:2525") {
            Ok(l) => break l,
            Err(e) if start.elapsed() < Duration::from_secs(60) => {
                let _ = e;
                std::thread::sleep(Duration::from_millis(100));
            }
            Err(e) => panic!("127.0.0.1:2525 stayed busy: {e}"),
        }
    };
    let port = listener.local_addr().unwrap().port();
    let handle = std::thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        stream.set_read_timeout(Some(EVENT_WITHIN)).unwrap();
        let mut out = stream.try_clone().unwrap();
        let mut reader = BufReader::new(stream);
        let mut received = String::new();
        let mut reply = |text: &str| out.write_all(format!("{text}\r\n").as_bytes()).unwrap();
        reply("220 sink ESMTP");
        let mut in_data = false;
        for _ in 0..10_000 {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                break;
            }
            if in_data {
                if line == ".\r\n" {
                    in_data = false;
                    reply("250 queued");
                } else {
                    received.push_str(&line);
                }
                continue;
            }
            let verb = line.get(..4).unwrap_or("").to_ascii_uppercase();
            match verb.as_str() {
                "EHLO" | "HELO" => reply("250 sink"),
                "MAIL" | "RCPT" | "RSET" | "NOOP" => {
                    received.push_str(&line);
                    reply("250 ok");
                }
                "DATA" => {
                    in_data = true;
                    reply("354 go ahead");
                }
                "QUIT" => {
                    reply("221 bye");
                    break;
                }
                _ => reply("502 not implemented"),
            }
        }
        received
    });
    (port, handle)
}

#[test]
fn send_email_delivers_to_a_local_sink() {
    let r = Run::new();
    let attachment = r.tmp.path().join("notes.txt");
    std::fs::write(&attachment, "attached text\n").unwrap();
    let (port, sink) = smtp_sink();
    let params = json!({
        "to": ["alice@example.com"],
        "subject": "Weekly report",
        "body": "Done this week.",
        "attachments": [attachment.display().to_string()],
    })
    .to_string();
    let o = r
        .command(&[
            "run",
            "send-email",
            "--params",
            &params,
            "--allow",
            "smtp",
            "--allow",
            "filesystem:read",
            // The script's environment is scrubbed: pass its configuration through.
            "--pass-env",
            "SMTP_*",
        ])
        .env("SMTP_HOST", "127.0.0.1")
        .env("SMTP_PORT", port.to_string())
        .env("SMTP_SECURITY", "none")
        .env("SMTP_FROM", "Reports <reports@example.com>")
        .env("SMTP_TIMEOUT", "10")
        .output()
        .unwrap();
    let (code, v, _) = parse(&o);
    assert_shape(&v);
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["data"]["accepted"], json!(["alice@example.com"]));
    assert_eq!(v["data"]["dry_run"], json!(false));
    let received = sink.join().unwrap();
    assert!(
        received
            .to_ascii_lowercase()
            .contains("rcpt to:<alice@example.com>"),
        "{received}"
    );
    assert!(received.contains("Subject: Weekly report"), "{received}");
    assert!(received.contains("filename=\"notes.txt\""), "{received}");

    // Without `smtp` nothing is started; a script failure passes through with its own code.
    let (code, v, _) = r.run(&[
        "run",
        "send-email",
        "--params",
        &params,
        "--allow",
        "filesystem:read",
    ]);
    assert_eq!(
        (code, v["error"]["code"].as_str()),
        (Some(1), Some("PERMISSION_DENIED"))
    );
    let o = r
        .command(&[
            "run",
            "send-email",
            "--params",
            &params,
            "--allow",
            "smtp",
            "--allow",
            "filesystem:read",
        ])
        .env_remove("SMTP_HOST")
        .output()
        .unwrap();
    let (code, v, _) = parse(&o);
    assert_eq!(
        (code, v["error"]["code"].as_str()),
        (Some(1), Some("SMTP_NOT_CONFIGURED")),
        "{v}"
    );
}

#[test]
fn verbose_prints_what_happened_on_stderr() {
    let r = Run::new();
    let params = json!({"path": repo("README.md"), "max_length": 1}).to_string();
    let (code, _, stderr) = r.run(&[
        "run",
        "read-file",
        "-v",
        "--params",
        &params,
        "--allow",
        "filesystem:read",
    ]);
    assert_eq!(code, Some(0));
    let meta: Value = serde_json::from_str(stderr.trim()).unwrap();
    assert_eq!(meta["skill"], json!("read-file"));
    assert_eq!(meta["attempts"], json!(1));
    assert_eq!(meta["exit"], json!({"code": 0}));
    // Confined by the sandbox (`tests/sandbox_cli.rs` covers what that means).
    assert_ne!(meta["sandbox"]["mode"], json!("none"));
}

/// Ctrl-C (SIGINT) stops the script's process group and still prints the result.
#[test]
fn an_interrupt_stops_the_script_and_prints_the_result() {
    let r = Run::new();
    // Opening a FIFO with no writer blocks: the ratio calculator (which opens its input without
    // checking that it is a regular file, unlike the CSV profiler, which answers
    // FILE_NOT_FOUND at once) hangs until stopped.
    let fifo = r.tmp.path().join("blocked.csv");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let params = json!({"input": fifo.display().to_string()}).to_string();
    let child = r
        .command(&[
            "run",
            "financial-report-analyzer",
            "--params",
            &params,
            "--allow",
            "filesystem:read",
            "--timeout",
            "600",
        ])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    // The script's process: its command line names the script and the FIFO.
    let fifo_text = fifo.display().to_string();
    let holders = || -> usize {
        std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter_map(|p| std::fs::read(p.path().join("cmdline")).ok())
            .map(|c| String::from_utf8_lossy(&c).into_owned())
            .filter(|c| c.contains("calculate_ratios.py") && c.contains(&fifo_text))
            .count()
    };
    while holders() == 0 {
        assert!(start.elapsed() < EVENT_WITHIN, "the script never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap()
        .success());
    let (code, v, _) = parse(&child.wait_with_output().unwrap());
    // SIGINT stopped it, not the 600 s timeout.
    assert!(start.elapsed() < Duration::from_secs(600));
    assert_eq!(
        (code, v["error"]["code"].as_str()),
        (Some(1), Some("EXEC_FAILED")),
        "{v}"
    );
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("cancelled"),
        "{v}"
    );
    let gone = std::time::Instant::now();
    while holders() > 0 && gone.elapsed() < EVENT_WITHIN {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(holders(), 0, "the script outlived skillbake");
}
