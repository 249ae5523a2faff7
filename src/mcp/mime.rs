//! MIME types of embedded files, from their extension.

/// The MIME type of an embedded file from its extension: `text/markdown`, `text/x-python`,
/// `application/json`, `text/html`, `text/csv`, … ; `text/plain` for other text and
/// `application/octet-stream` for other binary files (and for binary files whose extension
/// names a text format).
pub fn mime_type(path: &str, binary: bool) -> &'static str {
    let file_name = path.rsplit('/').next().unwrap_or(path);
    let ext = match file_name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => ext.to_ascii_lowercase(),
        _ => String::new(),
    };
    let (mime, textual) = match ext.as_str() {
        "md" | "markdown" => ("text/markdown", true),
        "py" => ("text/x-python", true),
        "json" => ("application/json", true),
        "html" | "htm" => ("text/html", true),
        "csv" => ("text/csv", true),
        "tsv" => ("text/tab-separated-values", true),
        "txt" => ("text/plain", true),
        "sh" | "bash" => ("text/x-shellscript", true),
        "js" | "mjs" => ("text/javascript", true),
        "css" => ("text/css", true),
        "xml" => ("application/xml", true),
        "yaml" | "yml" => ("application/yaml", true),
        "toml" => ("application/toml", true),
        "sql" => ("application/sql", true),
        "png" => ("image/png", false),
        "jpg" | "jpeg" => ("image/jpeg", false),
        "gif" => ("image/gif", false),
        "webp" => ("image/webp", false),
        "svg" => ("image/svg+xml", true),
        "pdf" => ("application/pdf", false),
        "zip" => ("application/zip", false),
        "xlsx" => (
            "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
            false,
        ),
        "docx" => (
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
            false,
        ),
        _ if binary => ("application/octet-stream", false),
        _ => ("text/plain", true),
    };
    if binary && textual {
        "application/octet-stream"
    } else {
        mime
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mime_types_by_extension() {
        for (path, binary, mime) in [
            ("SKILL.md", false, "text/markdown"),
            ("scripts/run.py", false, "text/x-python"),
            ("schema.json", false, "application/json"),
            ("templates/report.html", false, "text/html"),
            ("assets/data.CSV", false, "text/csv"),
            ("assets/logo.png", true, "image/png"),
            ("assets/blob.bin", true, "application/octet-stream"),
            ("assets/weird.md", true, "application/octet-stream"),
            ("LICENSE", false, "text/plain"),
            (".gitkeep", false, "text/plain"),
        ] {
            assert_eq!(mime_type(path, binary), mime, "{path}");
        }
    }
}
