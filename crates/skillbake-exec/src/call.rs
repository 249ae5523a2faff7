//! Text-mode calls, for models without function calling: [`Executor::parse_call`] finds a
//! `{"skill": "...", "params": {...}}` object in a model's reply — bare, inside prose, or in a
//! fenced code block (fenced blocks are searched first) — and returns a [`Call`] whose
//! parameters passed the pack's schema (defaults applied), or a unified failure the model can
//! read and correct: `INVALID_CALL` (no such object, or `skill` is not a string),
//! `SKILL_NOT_FOUND`, `NOT_RUNNABLE` or `INVALID_PARAMS`. Keys besides `skill` and `params` are
//! ignored; `params` may be left out (`{}`) or given as a string holding a JSON object.
//!
//! [`Executor::parse_call`]: super::Executor::parse_call

use serde_json::Value;

/// A call found in a text reply, ready for [`Executor::execute`](super::Executor::execute).
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// The registered name of the skill.
    pub skill: &'static str,
    /// The parameters, checked against the pack's schema, defaults applied.
    pub params: Value,
}

/// How many `{` positions are tried at most.
const MAX_CANDIDATES: usize = 256;

/// Byte ranges of the insides of fenced code blocks (```` ``` ```` or `~~~`).
fn fenced_blocks(text: &str) -> Vec<(usize, usize)> {
    let mut blocks = Vec::new();
    let mut open: Option<(usize, &str)> = None;
    let mut pos = 0usize;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        let fence = ["```", "~~~"].into_iter().find(|f| trimmed.starts_with(f));
        match (open, fence) {
            (None, Some(f)) => open = Some((pos + line.len(), f)),
            (Some((start, f)), Some(g)) if f == g && trimmed.trim_end() == f => {
                blocks.push((start, pos));
                open = None;
            }
            _ => {}
        }
        pos += line.len();
    }
    if let Some((start, _)) = open {
        blocks.push((start, text.len()));
    }
    blocks
}

/// The first JSON object with a `skill` key, searching fenced blocks first.
pub(crate) fn find(text: &str) -> Option<serde_json::Map<String, Value>> {
    let blocks = fenced_blocks(text);
    let mut starts: Vec<usize> = Vec::new();
    for &(a, b) in &blocks {
        starts.extend(
            text.get(a..b)
                .unwrap_or("")
                .match_indices('{')
                .map(|(i, _)| a + i),
        );
    }
    starts.extend(
        text.match_indices('{')
            .map(|(i, _)| i)
            .filter(|i| !blocks.iter().any(|&(a, b)| (a..b).contains(i))),
    );
    for start in starts.into_iter().take(MAX_CANDIDATES) {
        let Some(rest) = text.get(start..) else {
            continue;
        };
        let mut values = serde_json::Deserializer::from_str(rest).into_iter::<Value>();
        if let Some(Ok(Value::Object(map))) = values.next() {
            if map.contains_key("skill") {
                return Some(map);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_calls_in_prose_and_fences() {
        let text = "I will read it.\n```json\n{\"skill\": \"read-file\", \"params\": {\"path\": \"a\"}}\n```\n";
        assert_eq!(
            find(text).and_then(|m| m.get("skill").cloned()),
            Some("read-file".into())
        );
        let prose = "Sure: {\"note\": 1} then {\"skill\": \"x\"} and {\"skill\": \"y\"}";
        assert_eq!(
            find(prose).and_then(|m| m.get("skill").cloned()),
            Some("x".into())
        );
        let fenced_wins = "{\"skill\": \"outside\"}\n~~~\n{\"skill\": \"inside\"}\n~~~";
        assert_eq!(
            find(fenced_wins).and_then(|m| m.get("skill").cloned()),
            Some("inside".into())
        );
        assert_eq!(find("no call here {not json}"), None);
        assert_eq!(find(&"{".repeat(10_000)), None);
        let unclosed = "```\n{\"skill\": \"z\", \"params\": {}}";
        assert_eq!(
            find(unclosed).and_then(|m| m.get("skill").cloned()),
            Some("z".into())
        );
    }
}
