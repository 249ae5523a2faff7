//! Tool calls in process, through `Server::call` (what every transport hands a `tools/call`
//! to), on the executor's fixture packs: a pack tool's arguments are accepted or refused the same
//! way with and without a policy, with the executor's own result and the schema's defaults.

use serde_json::{json, Value};
use skillbake_exec::{Executor, Policy};
use skillbake_exec_fixtures::REGISTRY;
use skillbake_mcp::{CallError, Server, ToolReply};

fn call(server: &Server, tool: &str, args: Value) -> Result<ToolReply, CallError> {
    let Value::Object(args) = args else {
        panic!("arguments are an object")
    };
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(server.call(tool, args))
}

struct Servers {
    _cache: tempfile::TempDir,
    policy: Policy,
    with: Server,
    without: Server,
}

fn servers() -> Servers {
    let cache = tempfile::tempdir().unwrap();
    let policy = Policy::new().cache_dir(cache.path());
    Servers {
        with: Server::with_policy(&REGISTRY, policy.clone()).unwrap(),
        without: Server::new(&REGISTRY).unwrap(),
        policy,
        _cache: cache,
    }
}

/// Every refused call gets the same error result from both servers, and it is the executor's
/// own outcome for the call.
#[test]
fn bad_arguments_are_refused_alike_with_and_without_a_policy() {
    let s = servers();
    let executor = Executor::new(&REGISTRY, s.policy.clone());
    for args in [
        json!({"text": ""}),
        json!({"n": -1, "nested": {"flag": 3}}),
        json!({"extra": true}),
        json!({"text": 7, "n": "one"}),
    ] {
        let with = call(&s.with, "echo", args.clone()).unwrap();
        let without = call(&s.without, "echo", args.clone()).unwrap();
        assert!(with.is_error, "{args}: {with:?}");
        assert_eq!(with, without, "{args}");
        assert_eq!(
            with.texts,
            [executor.execute("echo", args.clone()).to_json()]
        );
        let outcome: Value = serde_json::from_str(&with.texts[0]).unwrap();
        assert_eq!(outcome["error"]["code"], "INVALID_PARAMS", "{args}");
    }
}

/// An accepted call gets the schema's defaults whether it runs or is only echoed: the arguments
/// echoed without a policy are what the script receives with one.
#[test]
fn accepted_arguments_get_the_defaults_with_and_without_a_policy() {
    let s = servers();
    for (args, checked) in [
        (json!({}), json!({"text": "hello", "n": 1})),
        (
            json!({"text": "hi", "nested": {}}),
            json!({"text": "hi", "nested": {"flag": false}, "n": 1}),
        ),
    ] {
        let ran = call(&s.with, "echo", args.clone()).unwrap();
        assert!(!ran.is_error, "{args}: {ran:?}");
        let outcome: Value = serde_json::from_str(&ran.texts[0]).unwrap();
        assert_eq!(outcome["data"]["params"], checked, "{args}: {outcome}");
        let echoed = call(&s.without, "echo", args.clone()).unwrap();
        assert!(!echoed.is_error, "{args}: {echoed:?}");
        assert_eq!(echoed.texts.len(), 2);
        assert_eq!(
            echoed.texts[0],
            REGISTRY.load_skill("echo", REGISTRY.get("echo").unwrap().skill_md_path()),
            "the pack's instructions come first"
        );
        let echo: Value = serde_json::from_str(&echoed.texts[1]).unwrap();
        assert_eq!(echo["arguments"], checked, "{args}");
        assert_eq!(echo["executed"], false);
    }
}

/// A misspelt tool is a protocol error that suggests the right one.
#[test]
fn unknown_tools_are_refused_with_a_suggestion() {
    let s = servers();
    for server in [&s.with, &s.without] {
        match call(server, "ecoh", json!({})) {
            Err(CallError::UnknownTool(m)) => {
                assert!(
                    m.starts_with("unknown tool `ecoh`; did you mean `echo`? Tools: "),
                    "{m}"
                )
            }
            other => panic!("{other:?}"),
        }
    }
}
