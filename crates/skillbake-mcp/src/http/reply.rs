//! JSON replies of the HTTP server's own (health, refusals), outside any MCP session.

use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};

/// A reply of `status` with `body` as `application/json`.
pub(crate) fn json_response(status: StatusCode, body: serde_json::Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}
