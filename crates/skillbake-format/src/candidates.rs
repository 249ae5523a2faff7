//! The routed candidates for the model's final choice: the catalog of the top-K skills for a
//! request, with what the model needs to choose among them and call one — the full
//! description, `when_to_use`, `when_not_to_use` and the parameters' JSON Schema — in every
//! catalog [`Format`], and as JSON for scripts and tool results.

use crate::catalog::Format;
use crate::escape::{html_into, json_into};

/// One candidate skill.
#[derive(Debug, Clone, Copy)]
pub struct Candidate<'a> {
    /// The skill's name.
    pub name: &'a str,
    /// Its full description.
    pub description: &'a str,
    /// The path of its `SKILL.md`, as `load_skill` takes it.
    pub location: &'a str,
    /// Its routing bucket (`""` at the root).
    pub bucket: &'a str,
    /// Its routing score for the request.
    pub score: f32,
    /// The fields the request matched.
    pub matched: &'a [&'a str],
    /// `when_to_use`, as compact JSON (a string or a list of strings), if set.
    pub when_to_use: Option<&'a str>,
    /// `when_not_to_use`, as compact JSON, if set.
    pub when_not_to_use: Option<&'a str>,
    /// Its `schema.json`, if it has one.
    pub schema: Option<&'a str>,
}

/// The strings of a JSON string or array of strings (`"a"`, `["a","b"]`); anything else, or
/// malformed JSON, gives what could be read.
pub fn json_strings(json: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = json.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '"' {
            continue;
        }
        let mut s = String::new();
        while let Some(c) = chars.next() {
            match c {
                '"' => break,
                '\\' => match chars.next() {
                    Some('n') => s.push('\n'),
                    Some('t') => s.push('\t'),
                    Some('r') => s.push('\r'),
                    Some('b') => s.push('\u{8}'),
                    Some('f') => s.push('\u{c}'),
                    Some('u') => {
                        let hex: String = chars.by_ref().take(4).collect();
                        let mut code = u32::from_str_radix(&hex, 16).unwrap_or(0xFFFD);
                        if (0xD800..0xDC00).contains(&code) && chars.peek() == Some(&'\\') {
                            chars.next();
                            if chars.next() == Some('u') {
                                let low: String = chars.by_ref().take(4).collect();
                                let low = u32::from_str_radix(&low, 16).unwrap_or(0);
                                code = 0x10000
                                    + ((code - 0xD800) << 10)
                                    + (low.wrapping_sub(0xDC00) & 0x3FF);
                            }
                        }
                        s.push(char::from_u32(code).unwrap_or('\u{FFFD}'));
                    }
                    Some(other) => s.push(other),
                    None => break,
                },
                c => s.push(c),
            }
        }
        out.push(s);
    }
    out
}

fn lines_of(json: Option<&str>) -> Vec<String> {
    json.map(json_strings)
        .unwrap_or_default()
        .into_iter()
        .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|s| !s.is_empty())
        .collect()
}

/// One line of compact JSON for a schema (whitespace outside strings removed).
pub fn compact_json(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_str = false;
    let mut escaped = false;
    for c in text.chars() {
        if in_str {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_str = false;
            }
        } else if c == '"' {
            in_str = true;
            out.push(c);
        } else if !c.is_whitespace() {
            out.push(c);
        }
    }
    out
}

/// The candidates in a catalog format: the catalog's own entry for each skill, followed by its
/// `when_to_use`, `when_not_to_use` and parameters.
pub fn render(format: Format, candidates: &[Candidate<'_>]) -> String {
    if candidates.is_empty() {
        return match format {
            Format::Xml => "<available_skills>\n</available_skills>".into(),
            Format::Dbgpt | Format::Markdown | Format::Codex => "No skills match.".into(),
        };
    }
    let mut s = String::new();
    match format {
        Format::Xml => s.push_str("<available_skills>\n"),
        Format::Markdown => s.push_str("# Candidate skills\n\n"),
        Format::Codex => {
            s.push_str("## Skills\n");
            s.push_str(crate::catalog::CODEX_INTRO);
            s.push_str("\n### Candidate skills\n");
        }
        Format::Dbgpt => {}
    }
    for (i, c) in candidates.iter().enumerate() {
        let when = lines_of(c.when_to_use);
        let not = lines_of(c.when_not_to_use);
        let schema = c.schema.map(compact_json);
        if i > 0 {
            s.push('\n');
        }
        match format {
            Format::Xml => {
                s.push_str("<skill>\n<name>\n");
                html_into(&mut s, c.name);
                s.push_str("\n</name>\n<description>\n");
                html_into(&mut s, c.description);
                s.push_str("\n</description>\n");
                for (tag, items) in [("when_to_use", &when), ("when_not_to_use", &not)] {
                    if !items.is_empty() {
                        s.push_str(&format!("<{tag}>\n"));
                        html_into(&mut s, &items.join("\n"));
                        s.push_str(&format!("\n</{tag}>\n"));
                    }
                }
                if let Some(schema) = &schema {
                    // XML text needs only `&`, `<` and `>` escaped: the JSON stays readable.
                    s.push_str("<parameters>\n");
                    for ch in schema.chars() {
                        match ch {
                            '&' => s.push_str("&amp;"),
                            '<' => s.push_str("&lt;"),
                            '>' => s.push_str("&gt;"),
                            c => s.push(c),
                        }
                    }
                    s.push_str("\n</parameters>\n");
                }
                s.push_str("<location>\n");
                s.push_str(c.location);
                s.push_str("\n</location>\n</skill>");
            }
            Format::Dbgpt | Format::Codex | Format::Markdown => {
                let (open, close) = if format == Format::Markdown {
                    ("**", "**")
                } else {
                    ("", "")
                };
                s.push_str(&format!("- {open}{}{close}: {}", c.name, c.description));
                if format == Format::Codex {
                    s.push_str(&format!(" (file: {})", c.location));
                }
                for (label, items) in [("When to use", &when), ("When not to use", &not)] {
                    if !items.is_empty() {
                        s.push_str(&format!("\n  {label}: {}", items.join("; ")));
                    }
                }
                if let Some(schema) = &schema {
                    s.push_str(&format!("\n  Parameters (JSON Schema): {schema}"));
                }
            }
        }
    }
    if format == Format::Xml {
        s.push_str("\n</available_skills>");
    }
    s
}

/// The candidates as a JSON array (Python's `json.dumps` spacing), best first:
/// `[{"name", "score", "matched", "bucket", "description", "location", "when_to_use",
/// "when_not_to_use", "parameters"}]`; the last three are omitted when the skill has none, and
/// `parameters` is the skill's `schema.json` as written, on one line.
pub fn json(candidates: &[Candidate<'_>]) -> String {
    let mut s = String::from("[");
    for (i, c) in candidates.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        s.push_str("{\"name\": \"");
        json_into(&mut s, c.name);
        // Scores are shown to four decimals; JSON has no NaN or infinity.
        let score = if c.score.is_finite() { c.score } else { 0.0 };
        s.push_str(&format!("\", \"score\": {score:.4}, \"matched\": ["));
        for (j, m) in c.matched.iter().enumerate() {
            if j > 0 {
                s.push_str(", ");
            }
            s.push('"');
            json_into(&mut s, m);
            s.push('"');
        }
        s.push_str("], \"bucket\": \"");
        json_into(&mut s, c.bucket);
        s.push_str("\", \"description\": \"");
        json_into(&mut s, c.description);
        s.push_str("\", \"location\": \"");
        json_into(&mut s, c.location);
        s.push('"');
        for (key, value) in [
            ("when_to_use", c.when_to_use),
            ("when_not_to_use", c.when_not_to_use),
        ] {
            if let Some(v) = value {
                s.push_str(&format!(", \"{key}\": {v}"));
            }
        }
        if let Some(schema) = c.schema {
            s.push_str(", \"parameters\": ");
            s.push_str(&compact_json(schema));
        }
        s.push('}');
    }
    s.push(']');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample<'a>(matched: &'a [&'a str]) -> Candidate<'a> {
        Candidate {
            name: "send-email",
            description: "Send <mail>",
            location: "skills/send-email/SKILL.md",
            bucket: "",
            score: 1.5,
            matched,
            when_to_use: Some(r#"["to notify","to \"report\""]"#),
            when_not_to_use: Some(r#""attachments""#),
            schema: Some("{\n  \"type\": \"object\"\n}"),
        }
    }

    #[test]
    fn decodes_json_strings() {
        assert_eq!(json_strings(r#""a\nb""#), ["a\nb"]);
        assert_eq!(
            json_strings(r#"["x","y\u00e9\ud83d\ude00"]"#),
            ["x", "yé😀"]
        );
        assert!(json_strings("null").is_empty());
    }

    #[test]
    fn renders_every_format() {
        let m = ["description"];
        let c = [sample(&m)];
        let xml = render(Format::Xml, &c);
        assert!(xml.contains("<description>\nSend &lt;mail&gt;\n</description>"));
        assert!(xml.contains("<when_to_use>\nto notify\nto &quot;report&quot;\n</when_to_use>"));
        assert!(xml.contains("<parameters>\n{\"type\":\"object\"}\n</parameters>"));
        let dbgpt = render(Format::Dbgpt, &c);
        assert_eq!(dbgpt, "- send-email: Send <mail>\n  When to use: to notify; to \"report\"\n  When not to use: attachments\n  Parameters (JSON Schema): {\"type\":\"object\"}");
        assert!(render(Format::Codex, &c).contains("(file: skills/send-email/SKILL.md)"));
        assert!(render(Format::Markdown, &c).starts_with("# Candidate skills\n\n- **send-email**"));
        assert_eq!(render(Format::Dbgpt, &[]), "No skills match.");
    }

    #[test]
    fn renders_json() {
        let m = ["name", "description"];
        assert_eq!(
            json(&[sample(&m)]),
            r#"[{"name": "send-email", "score": 1.5000, "matched": ["name", "description"], "bucket": "", "description": "Send <mail>", "location": "skills/send-email/SKILL.md", "when_to_use": ["to notify","to \"report\""], "when_not_to_use": "attachments", "parameters": {"type":"object"}}]"#
        );
        assert_eq!(json(&[]), "[]");
    }
}
