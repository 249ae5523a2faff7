//! The JSON-RPC shape of a POSTed body, checked before it reaches a session: what cannot be a
//! JSON-RPC message is answered here with the JSON-RPC error codes (`-32700` parse error,
//! `-32600` invalid request, `-32602` invalid params), never handed on.

use serde_json::{json, Value};

/// JSON-RPC's parse error.
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC's invalid request.
pub const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC's invalid params.
pub const INVALID_PARAMS: i64 = -32602;

/// What a well-formed body holds.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// A request: its `id` and `method`.
    Request {
        /// The request id, a string or a number.
        id: Value,
        /// The method.
        method: String,
    },
    /// A notification (a method without an id).
    Notification,
    /// A response or an error answering a request of the server.
    Response,
}

/// Why a body was refused: the JSON-RPC error to answer, and whether the message was a
/// request that could be answered in its session (invalid params) rather than no message at all.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    /// The request's id, or `null` when there is none.
    pub id: Value,
    /// The JSON-RPC error code.
    pub code: i64,
    /// What is wrong.
    pub message: String,
}

impl Refusal {
    fn new(id: Value, code: i64, message: impl Into<String>) -> Self {
        Refusal {
            id,
            code,
            message: message.into(),
        }
    }

    /// The JSON-RPC error response.
    pub fn body(&self) -> Value {
        json!({
            "jsonrpc": "2.0",
            "id": self.id,
            "error": {"code": self.code, "message": self.message},
        })
    }
}

/// Classifies a POSTed body, or says which JSON-RPC error it gets.
pub fn classify(body: &[u8]) -> Result<Message, Refusal> {
    let value: Value = serde_json::from_slice(body).map_err(|e| {
        Refusal::new(
            Value::Null,
            PARSE_ERROR,
            format!("Parse error: the body is not JSON ({e})"),
        )
    })?;
    let object =
        match value {
            Value::Object(o) => o,
            Value::Array(_) => return Err(Refusal::new(
                Value::Null,
                INVALID_REQUEST,
                "Invalid Request: batches are not supported; send one JSON-RPC message per POST",
            )),
            other => {
                return Err(Refusal::new(
                    Value::Null,
                    INVALID_REQUEST,
                    format!(
                        "Invalid Request: a JSON-RPC message is a JSON object, not `{}`",
                        truncate(&other.to_string())
                    ),
                ))
            }
        };
    let id = object.get("id").cloned();
    let reply_id = match &id {
        Some(v @ (Value::String(_) | Value::Number(_))) => v.clone(),
        _ => Value::Null,
    };
    let invalid = |m: String| Refusal::new(reply_id.clone(), INVALID_REQUEST, m);
    if object.get("jsonrpc") != Some(&json!("2.0")) {
        return Err(invalid(
            "Invalid Request: `jsonrpc` must be \"2.0\"".to_string(),
        ));
    }
    if let Some(id) = &id {
        if !(id.is_string() || id.is_i64() || id.is_u64()) {
            return Err(invalid(format!(
                "Invalid Request: `id` must be a string or an integer, not `{}`",
                truncate(&id.to_string())
            )));
        }
    }
    let Some(method) = object.get("method") else {
        if id.is_some() && (object.contains_key("result") || object.contains_key("error")) {
            return Ok(Message::Response);
        }
        return Err(invalid(
            "Invalid Request: a message needs a `method` (or, answering the server, an `id` \
             and a `result` or `error`)"
                .to_string(),
        ));
    };
    let Some(method) = method.as_str() else {
        return Err(invalid(
            "Invalid Request: `method` must be a string".to_string(),
        ));
    };
    let params = object.get("params");
    let Some(id) = id else {
        return Ok(Message::Notification);
    };
    if let Some(m) = params.and_then(|p| bad_params(method, p)) {
        return Err(Refusal::new(id, INVALID_PARAMS, m));
    }
    Ok(Message::Request {
        id,
        method: method.to_string(),
    })
}

/// What is wrong with a request's `params`, for the methods whose parameters have a fixed shape.
fn bad_params(method: &str, params: &Value) -> Option<String> {
    let Some(params) = params.as_object() else {
        return (!params.is_null()).then(|| {
            format!(
                "Invalid params: `params` must be an object, not {}",
                kind(params)
            )
        });
    };
    match method {
        "tools/call" => {
            if !params.get("name").is_some_and(Value::is_string) {
                return Some("Invalid params: tools/call needs `name`, a string".to_string());
            }
            match params.get("arguments") {
                None | Some(Value::Null | Value::Object(_)) => None,
                Some(other) => Some(format!(
                    "Invalid params: `arguments` must be an object of the tool's arguments, not \
                     {}",
                    kind(other)
                )),
            }
        }
        "resources/read" if !params.get("uri").is_some_and(Value::is_string) => {
            Some("Invalid params: resources/read needs `uri`, a string".to_string())
        }
        _ => None,
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn truncate(s: &str) -> String {
    match s.char_indices().nth(40) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn code(body: &str) -> i64 {
        classify(body.as_bytes()).unwrap_err().code
    }

    #[test]
    fn malformed_messages_get_their_codes() {
        assert_eq!(code("{"), PARSE_ERROR);
        assert_eq!(code("[]"), INVALID_REQUEST);
        assert_eq!(code("42"), INVALID_REQUEST);
        assert_eq!(code(r#"{"id":1,"method":"ping"}"#), INVALID_REQUEST);
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#),
            INVALID_REQUEST
        );
        assert_eq!(
            code(
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":42}}"#
            ),
            INVALID_PARAMS
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":"x"}"#),
            INVALID_PARAMS
        );
        assert_eq!(
            classify(br#"{"jsonrpc":"2.0","id":"a","method":"ping"}"#).unwrap(),
            Message::Request {
                id: json!("a"),
                method: "ping".into()
            }
        );
        assert_eq!(
            classify(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).unwrap(),
            Message::Notification
        );
        assert_eq!(
            classify(br#"{"jsonrpc":"2.0","id":3,"result":{}}"#).unwrap(),
            Message::Response
        );
    }
}
