//! What an embedded file is: its [`FileKind`] (how `load_skill` serves it as a chunk) and its MIME
//! type (how the MCP server labels it as a resource), both from the one [`EXTENSIONS`] table.
//!
//! * A file that is not UTF-8, or holds a NUL byte, is [`FileKind::Binary`].
//! * Otherwise its extension (ASCII case-insensitive) decides: the table's kind, else `Code` for
//!   files under `scripts/`, files starting with `#!` and `Makefile`/`Dockerfile`/`Justfile`,
//!   else `Text`.
//! * Its MIME type is the table's, except that binary content under a text extension is
//!   `application/octet-stream`; without a table entry, `text/plain` for text and
//!   `application/octet-stream` for binary content.

crate::named_enum! {
    /// How an embedded file is served as a `load_skill` chunk.
    pub enum FileKind {
        /// Markdown: a `markdown` chunk.
        Markdown = "markdown",
        /// Scripts and source code: a `code` chunk.
        Code = "code",
        /// Other UTF-8 text: a `text` chunk.
        Text = "text",
        /// Not UTF-8 (or holding NUL bytes): a `text` chunk saying so, with its size.
        Binary = "binary",
    }
}

impl FileKind {
    /// The chunk `output_type` for this kind.
    pub const fn output_type(self) -> &'static str {
        match self {
            FileKind::Markdown => "markdown",
            FileKind::Code => "code",
            FileKind::Text | FileKind::Binary => "text",
        }
    }
}

/// Every extension skillbake knows: (extension in lower case, kind of a file with this extension
/// whose content is text — `Binary` for binary formats —, MIME type). Sorted by extension.
pub const EXTENSIONS: &[(&str, FileKind, &str)] = &[
    ("awk", FileKind::Code, "text/plain"),
    ("bash", FileKind::Code, "text/x-shellscript"),
    ("bat", FileKind::Code, "text/plain"),
    ("c", FileKind::Code, "text/plain"),
    ("cc", FileKind::Code, "text/plain"),
    ("cjs", FileKind::Code, "text/javascript"),
    ("clj", FileKind::Code, "text/plain"),
    ("cmake", FileKind::Code, "text/plain"),
    ("cmd", FileKind::Code, "text/plain"),
    ("cpp", FileKind::Code, "text/plain"),
    ("cs", FileKind::Code, "text/plain"),
    ("css", FileKind::Text, "text/css"),
    ("csv", FileKind::Text, "text/csv"),
    ("dart", FileKind::Code, "text/plain"),
    (
        "docx",
        FileKind::Binary,
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ),
    ("ex", FileKind::Code, "text/plain"),
    ("exs", FileKind::Code, "text/plain"),
    ("fish", FileKind::Code, "text/plain"),
    ("gif", FileKind::Binary, "image/gif"),
    ("go", FileKind::Code, "text/plain"),
    ("groovy", FileKind::Code, "text/plain"),
    ("h", FileKind::Code, "text/plain"),
    ("hpp", FileKind::Code, "text/plain"),
    ("hs", FileKind::Code, "text/plain"),
    ("htm", FileKind::Text, "text/html"),
    ("html", FileKind::Text, "text/html"),
    ("java", FileKind::Code, "text/plain"),
    ("jl", FileKind::Code, "text/plain"),
    ("jpeg", FileKind::Binary, "image/jpeg"),
    ("jpg", FileKind::Binary, "image/jpeg"),
    ("js", FileKind::Code, "text/javascript"),
    ("json", FileKind::Text, "application/json"),
    ("jsx", FileKind::Code, "text/plain"),
    ("kt", FileKind::Code, "text/plain"),
    ("kts", FileKind::Code, "text/plain"),
    ("lua", FileKind::Code, "text/plain"),
    ("markdown", FileKind::Markdown, "text/markdown"),
    ("md", FileKind::Markdown, "text/markdown"),
    ("mdx", FileKind::Markdown, "text/markdown"),
    ("mjs", FileKind::Code, "text/javascript"),
    ("mk", FileKind::Code, "text/plain"),
    ("ml", FileKind::Code, "text/plain"),
    ("pdf", FileKind::Binary, "application/pdf"),
    ("php", FileKind::Code, "text/plain"),
    ("pl", FileKind::Code, "text/plain"),
    ("png", FileKind::Binary, "image/png"),
    ("ps1", FileKind::Code, "text/plain"),
    ("py", FileKind::Code, "text/x-python"),
    ("r", FileKind::Code, "text/plain"),
    ("rb", FileKind::Code, "text/plain"),
    ("rs", FileKind::Code, "text/plain"),
    ("scala", FileKind::Code, "text/plain"),
    ("sed", FileKind::Code, "text/plain"),
    ("sh", FileKind::Code, "text/x-shellscript"),
    ("sql", FileKind::Code, "application/sql"),
    ("svg", FileKind::Text, "image/svg+xml"),
    ("swift", FileKind::Code, "text/plain"),
    ("toml", FileKind::Text, "application/toml"),
    ("ts", FileKind::Code, "text/plain"),
    ("tsv", FileKind::Text, "text/tab-separated-values"),
    ("tsx", FileKind::Code, "text/plain"),
    ("txt", FileKind::Text, "text/plain"),
    ("vb", FileKind::Code, "text/plain"),
    ("webp", FileKind::Binary, "image/webp"),
    (
        "xlsx",
        FileKind::Binary,
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    ),
    ("xml", FileKind::Text, "application/xml"),
    ("yaml", FileKind::Text, "application/yaml"),
    ("yml", FileKind::Text, "application/yaml"),
    ("zip", FileKind::Binary, "application/zip"),
    ("zsh", FileKind::Code, "text/plain"),
];

/// File names without an extension that hold code.
pub const CODE_FILE_NAMES: &[&str] = &["Makefile", "Dockerfile", "Justfile"];

/// The table row of `path`'s extension (`stem.ext`, ASCII case-insensitive; a leading dot alone,
/// as in `.gitignore`, is no extension).
pub fn extension(path: &str) -> Option<&'static (&'static str, FileKind, &'static str)> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let (stem, ext) = name.rsplit_once('.')?;
    if stem.is_empty() {
        return None;
    }
    EXTENSIONS
        .binary_search_by(|(e, _, _)| cmp_ignore_ascii_case(e, ext))
        .ok()
        .and_then(|i| EXTENSIONS.get(i))
}

/// Compares `lower` (already lower case) with `other` ignoring ASCII case, without allocating.
fn cmp_ignore_ascii_case(lower: &str, other: &str) -> core::cmp::Ordering {
    lower
        .bytes()
        .cmp(other.bytes().map(|b| b.to_ascii_lowercase()))
}

/// How the file at `path` (relative to its pack, `/`-separated) with content `bytes` is served.
pub fn classify(path: &str, bytes: &[u8]) -> FileKind {
    let text = match core::str::from_utf8(bytes) {
        Ok(t) if !t.contains('\0') => t,
        _ => return FileKind::Binary,
    };
    let name = path.rsplit('/').next().unwrap_or(path);
    match extension(path) {
        Some((_, FileKind::Markdown, _)) => FileKind::Markdown,
        Some((_, FileKind::Code, _)) => FileKind::Code,
        _ if path.starts_with("scripts/") || text.starts_with("#!") => FileKind::Code,
        _ if CODE_FILE_NAMES.contains(&name) => FileKind::Code,
        _ => FileKind::Text,
    }
}

/// The MIME type of the file at `path` whose content is of `kind` (see the module docs).
pub fn mime_type(path: &str, kind: FileKind) -> &'static str {
    let binary = kind == FileKind::Binary;
    match extension(path) {
        Some((_, FileKind::Binary, mime)) => mime,
        Some((_, _, mime)) if !binary => mime,
        _ if binary => "application/octet-stream",
        _ => "text/plain",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_sorted_lower_case_and_unique() {
        for pair in EXTENSIONS.windows(2) {
            if let [a, b] = pair {
                assert!(a.0 < b.0, "{} before {}", a.0, b.0);
            }
        }
        for (ext, _, mime) in EXTENSIONS {
            assert_eq!(ext.to_ascii_lowercase(), *ext);
            assert!(mime.contains('/'), "{ext}");
        }
    }

    #[test]
    fn kinds_by_content_extension_and_name() {
        for (path, bytes, kind) in [
            ("SKILL.md", &b"# x"[..], FileKind::Markdown),
            ("docs/page.MDX", b"# x", FileKind::Markdown),
            ("run.py", b"print()", FileKind::Code),
            ("scripts/tool", b"x", FileKind::Code),
            ("bin/tool", b"#!/bin/sh\n", FileKind::Code),
            ("Makefile", b"all:", FileKind::Code),
            ("notes.txt", b"x", FileKind::Text),
            ("data.json", b"{}", FileKind::Text),
            (".md", b"x", FileKind::Text),
            ("logo.png", b"\x89PNG\r\n\x1a\n\0", FileKind::Binary),
            ("a.md", b"nul\0", FileKind::Binary),
            ("a.md", b"\xff", FileKind::Binary),
        ] {
            assert_eq!(classify(path, bytes), kind, "{path}");
        }
    }

    #[test]
    fn mime_types_agree_with_kinds() {
        for (path, kind, mime) in [
            ("SKILL.md", FileKind::Markdown, "text/markdown"),
            ("guide.mdx", FileKind::Markdown, "text/markdown"),
            ("scripts/run.py", FileKind::Code, "text/x-python"),
            ("schema.json", FileKind::Text, "application/json"),
            ("templates/report.html", FileKind::Text, "text/html"),
            ("assets/data.CSV", FileKind::Text, "text/csv"),
            ("assets/logo.png", FileKind::Binary, "image/png"),
            (
                "assets/blob.bin",
                FileKind::Binary,
                "application/octet-stream",
            ),
            (
                "assets/weird.md",
                FileKind::Binary,
                "application/octet-stream",
            ),
            ("LICENSE", FileKind::Text, "text/plain"),
            (".gitkeep", FileKind::Text, "text/plain"),
        ] {
            assert_eq!(mime_type(path, kind), mime, "{path}");
        }
        // Every markdown extension is served as markdown in both places.
        for (ext, kind, mime) in EXTENSIONS {
            if *kind == FileKind::Markdown {
                assert_eq!(*mime, "text/markdown", "{ext}");
            }
        }
    }
}
