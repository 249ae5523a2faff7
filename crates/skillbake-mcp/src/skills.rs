//! The MCP Skills extension (`io.modelcontextprotocol/skills`) over the registry, in this
//! crate's own types: `skills/list`, `skills/get`, `resources/directory/read`, and the
//! resolution of every `skill://` URI that `resources/read` answers.
//!
//! Everything comes from the registry's `'static` tables: the digest of every file was computed
//! by the compiler ([`skillbake::File::sha256`]), the frontmatter is the JSON object the
//! compiler made of the author's YAML, and a folder's children are read off the pack's file
//! table (sorted by path, so the files under one folder are consecutive). Serving an entry
//! hashes nothing and touches no file.
//!
//! URIs (see the crate documentation): the version agents get by name is at
//! `skill://{name}/{path}`; every version is at `skill://v{version}/{name}/{path}` (canonical
//! for the others); `skill://{name}@{version}/{path}` is still read, as an alias.

use crate::profiles::View;
use crate::uri::segments;
use serde_json::{Map, Value};
use skillbake::{File, FileKind, Registry, Skill};
use skillbake_format::file_type::mime_type;
use skillbake_format::percent::{self, Keep};
use skillbake_format::semver::Version;

/// Skills per `skills/list` page, unless `Server::with_skills_page` says otherwise.
pub const SKILLS_PAGE: usize = 100;

/// How long a host may keep a listing or an entry (`ttlMs`): an hour. The registry never
/// changes while the server runs; a new binary is a new server.
pub const SKILLS_TTL_MS: u64 = 3_600_000;

/// The MIME type of a folder (`resources/directory/read`).
pub const DIRECTORY_MIME_TYPE: &str = "inode/directory";

/// One file of a skill's manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestEntry {
    /// The file's resource URI.
    pub uri: String,
    /// `sha256:` and the 64 lower-case hexadecimal digits of the file's SHA-256.
    pub digest: String,
    /// The file's size in bytes.
    pub size: u64,
}

/// A skill as `skills/list` and `skills/get` describe it.
#[derive(Debug, Clone, PartialEq)]
pub struct SkillEntry {
    /// The URI of the skill's `SKILL.md`.
    pub uri: String,
    /// The frontmatter, every key the author wrote with the author's types, in the author's
    /// order.
    pub frontmatter: Map<String, Value>,
    /// Every file of the skill, `SKILL.md` included, by path.
    pub resources: Vec<ManifestEntry>,
    /// Where the files come from, when the build signed the manifest: served in the entry's
    /// `_meta` under [`PROVENANCE_KEY`] (see [`provenance`]).
    pub provenance: Option<Map<String, Value>>,
}

/// The `_meta` key of an entry's provenance: under skillbake's own reverse-domain prefix, as
/// the extension lets servers and intermediaries add metadata.
pub const PROVENANCE_KEY: &str = "io.github.skillbake/provenance";

/// The provenance every entry of a signed registry carries: the Ed25519 signature the build made
/// over the registry's manifest (every embedded file's SHA-256 under its skill path; the
/// `digest` of each resource is one of its lines), the key that made it, and the format of the
/// signed bytes. A host checks it with `skillbake verify --key KEY`, or rebuilds the manifest
/// from the digests of every entry it trusts and checks the signature itself.
pub fn provenance(registry: &Registry) -> Option<Map<String, Value>> {
    let sig = registry.signature()?;
    let mut out = Map::new();
    let mut put = |k: &str, v: &str| out.insert(k.to_string(), Value::String(v.to_string()));
    put("algorithm", "ed25519");
    put("publicKey", sig.public_key);
    put("signature", sig.signature);
    put(
        "signedFormat",
        skillbake_format::manifest::SIGNED_PREFIX.trim_end(),
    );
    put(
        "manifest",
        "every file of every embedded skill as `SHA256  PATH` lines sorted by path (`skillbake manifest --signed`)",
    );
    Some(out)
}

/// One page of `skills/list`.
#[derive(Debug, Clone, PartialEq)]
pub struct SkillsPage {
    /// The entries of the page.
    pub skills: Vec<SkillEntry>,
    /// The cursor of the next page, when there is one.
    pub next_cursor: Option<String>,
}

/// A direct child of a folder (`resources/directory/read`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirEntry {
    /// The child's resource URI (a folder's without a trailing `/`).
    pub uri: String,
    /// The last segment of its path.
    pub name: String,
    /// The file's MIME type, or [`DIRECTORY_MIME_TYPE`].
    pub mime_type: &'static str,
    /// A file's size in bytes; `None` for a folder.
    pub size: Option<u64>,
}

/// What a `skill://` URI names.
pub(crate) enum Target<'r> {
    /// `skill://v{version}`: the folder of every skill at that version.
    Version(String),
    /// A path in one skill: `""` for its root folder.
    InSkill {
        /// The skill (one version of it).
        skill: Skill<'r>,
        /// The decoded path relative to the skill's folder.
        path: String,
    },
}

/// A page of `skills/list`: the skills the extension serves (every version of every skill
/// that [`refusal`] does not refuse), `page_size` at a time, from `cursor` (the previous
/// page's `next_cursor`: the skill table's row to go on from). A cursor this server did not
/// give is an error message.
pub(crate) fn page(
    registry: &'static Registry,
    view: &View,
    page_size: usize,
    cursor: Option<&str>,
) -> Result<SkillsPage, String> {
    let rows = registry.all_versions().len();
    let start = match cursor {
        None => 0,
        Some(c) => c
            .parse::<usize>()
            .ok()
            .filter(|&n| n <= rows)
            .ok_or_else(|| {
                format!(
                    "invalid cursor {c:?}: pass the nextCursor of the previous skills/list page, \
                 or no cursor for the first page"
                )
            })?,
    };
    let mut skills = Vec::new();
    let mut next_cursor = None;
    for (row, skill) in registry.all_versions().enumerate().skip(start) {
        if refusal(&skill).is_some() || !view.sees(skill.name()) {
            continue;
        }
        if skills.len() == page_size {
            next_cursor = Some(row.to_string());
            break;
        }
        skills.push(entry(&skill, view, registry)?);
    }
    Ok(SkillsPage {
        skills,
        next_cursor,
    })
}

/// `skills/get`: the entry of the skill whose `SKILL.md` is at `uri`, or why there is none.
pub(crate) fn skill_entry(
    registry: &'static Registry,
    view: &View,
    uri: &str,
) -> Result<SkillEntry, String> {
    let not_served = |why: &str| format!("No skill is served at {uri}: {why}");
    let Some(Target::InSkill { skill, path }) = target(registry, view, uri) else {
        return Err(not_served(
            "no embedded skill has that path (expected skill://NAME/SKILL.md or \
             skill://vVERSION/NAME/SKILL.md; skills/list lists every skill)",
        ));
    };
    let canonical = format!("{}/SKILL.md", root(view, &skill));
    let what = match path.as_str() {
        "" => "that is the skill's folder".to_string(),
        "SKILL.md" => "that is another spelling of the skill's URI".to_string(),
        other if skill.file(other).is_some() => format!("that is the skill's file `{other}`"),
        other => format!("the skill has no file `{other}`"),
    };
    if uri != canonical {
        return Err(not_served(&format!(
            "{what}; skill `{}`{} is served at {canonical}",
            skill.name(),
            skill.version().map(|v| format!(" {v}")).unwrap_or_default()
        )));
    }
    if let Some(why) = refusal(&skill) {
        return Err(not_served(&why));
    }
    entry(&skill, view, registry)
}

/// Why the extension does not serve `skill` (its `load_skill`, tools and resources stay):
/// its `name` or `metadata` breaks a rule of the Agent Skills specification that hosts of
/// the extension enforce.
pub(crate) fn refusal(skill: &Skill<'_>) -> Option<String> {
    let name = skill.name();
    let portable = !name.is_empty()
        && name.len() <= 64
        && name.split('-').all(|part| {
            !part.is_empty() && part.bytes().all(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9'))
        });
    if !portable {
        return Some(format!(
            "the name `{name}` is not an Agent Skills name (1-64 lower-case letters, digits \
             and single hyphens), which hosts of the skills extension refuse; rename the pack"
        ));
    }
    let metadata = skill.field_json("metadata")?;
    let strings = matches!(
        serde_json::from_str::<Value>(metadata),
        Ok(Value::Object(m)) if m.values().all(Value::is_string)
    );
    (!strings).then(|| {
        "its `metadata` does not map strings to strings, which hosts of the skills \
         extension refuse; quote the values"
            .to_string()
    })
}

/// `resources/directory/read`: the direct children of the folder at `uri`, or why it is not
/// one. This server gives no cursor (a folder is listed whole), so any cursor is an error.
pub(crate) fn read_directory(
    registry: &'static Registry,
    view: &View,
    uri: &str,
    cursor: Option<&str>,
) -> Result<Vec<DirEntry>, String> {
    if let Some(c) = cursor {
        return Err(format!(
            "invalid cursor {c:?}: this server lists a folder in one page and gives no cursor"
        ));
    }
    if let Some(bare) = uri.strip_suffix('/').filter(|u| u.contains("://")) {
        return Err(format!(
            "{uri} is not a directory resource: a folder's URI has no trailing `/` (read {bare})"
        ));
    }
    match target(registry, view, uri) {
        Some(Target::Version(version)) => Ok(registry
            .all_versions()
            .filter(|s| s.version() == Some(version.as_str()) && view.sees(s.name()))
            .map(|s| DirEntry {
                uri: root(view, &s),
                name: s.name().to_string(),
                mime_type: DIRECTORY_MIME_TYPE,
                size: None,
            })
            .collect()),
        Some(Target::InSkill { skill, path }) => children(view, &skill, &path).ok_or_else(|| {
            if skill.file(&path).is_some() {
                format!(
                    "{uri} is not a directory resource: it is a file (read it with resources/read)"
                )
            } else {
                format!(
                    "{uri} is not a directory resource: skill `{}` has no folder `{path}`",
                    skill.name()
                )
            }
        }),
        None => Err(format!(
            "{uri} is not a directory resource: expected skill://NAME, skill://NAME/FOLDER or \
             skill://vVERSION/NAME/FOLDER"
        )),
    }
}

/// What a `skill://` URI names, letter case of the name aside (as `load_skill`; a URI's
/// authority ignores case anyway): `skill://v{version}`, `skill://v{version}/{name}[/{path}]`,
/// or `skill://{name}[/{path}]` with `name` also `name@version` (an alias) or
/// `name@range`.
pub(crate) fn target(
    registry: &'static Registry,
    view: &View,
    uri: &str,
) -> Option<Target<'static>> {
    let (first, rest) = segments(uri)?;
    let first = percent::decode(first)?;
    if let Some(version) = first
        .strip_prefix('v')
        .filter(|v| Version::parse(v).is_ok())
    {
        let Some(rest) = rest else {
            return registry
                .all_versions()
                .any(|s| s.version() == Some(version) && view.sees(s.name()))
                .then(|| Target::Version(version.to_string()));
        };
        let (name, path) = rest
            .split_once('/')
            .map_or((rest, None), |(n, p)| (n, Some(p)));
        let name = percent::decode(name)?;
        let skill = view.lookup(registry, &format!("{name}@={version}"))?;
        return in_skill(skill, path);
    }
    let request = match first.rsplit_once('@') {
        Some((n, v)) if Version::parse(v).is_ok() => format!("{n}@={v}"),
        _ => first,
    };
    in_skill(view.lookup(registry, &request)?, rest)
}

/// The URI of a skill's folder as the agent sees it: `skill://{name}` for the version it gets
/// by name, `skill://v{version}/{name}` for the others.
pub(crate) fn root(view: &View, skill: &Skill<'static>) -> String {
    crate::uri::skill_root_as(skill, view.is_by_name(skill))
}

/// The entry of one skill, from the registry's tables.
fn entry(skill: &Skill<'static>, view: &View, registry: &Registry) -> Result<SkillEntry, String> {
    let frontmatter = match serde_json::from_str(skill.frontmatter_json()) {
        Ok(Value::Object(m)) => m,
        _ => {
            return Err(format!(
                "the registry's frontmatter of skill `{}` is not a JSON object",
                skill.name()
            ))
        }
    };
    let root = root(view, skill);
    let resources = skill
        .files()
        .map(|f| ManifestEntry {
            uri: file_uri(&root, f.path()),
            digest: f.digest(),
            size: f.size() as u64,
        })
        .collect();
    Ok(SkillEntry {
        uri: format!("{root}/SKILL.md"),
        frontmatter,
        resources,
        provenance: provenance(registry),
    })
}

/// A path in `skill`: `None` (the root folder) or a non-empty path.
fn in_skill(skill: Skill<'static>, path: Option<&str>) -> Option<Target<'static>> {
    let path = match path {
        None => String::new(),
        Some(p) => Some(percent::decode(p)?).filter(|p| !p.is_empty())?,
    };
    Some(Target::InSkill { skill, path })
}

/// The URI of the file at `path` under a skill's root URI.
pub(crate) fn file_uri(root: &str, path: &str) -> String {
    let mut out = String::with_capacity(root.len() + 1 + path.len());
    out.push_str(root);
    out.push('/');
    percent::encode_into(&mut out, path, Keep::Path);
    out
}

/// The direct children of folder `dir` (`""`: the skill's root) of `skill`, in path order;
/// `None` when no file of the skill is under it.
fn children(view: &View, skill: &Skill<'static>, dir: &str) -> Option<Vec<DirEntry>> {
    let root = root(view, skill);
    let prefix = if dir.is_empty() {
        String::new()
    } else {
        format!("{dir}/")
    };
    let mut out: Vec<DirEntry> = Vec::new();
    let mut any = false;
    for file in skill.files() {
        let Some(rest) = file.path().strip_prefix(prefix.as_str()) else {
            continue;
        };
        any = true;
        match rest.split_once('/') {
            Some((folder, _)) => {
                if out
                    .last()
                    .is_some_and(|e| e.size.is_none() && e.name == folder)
                {
                    continue;
                }
                out.push(DirEntry {
                    uri: file_uri(&root, &format!("{prefix}{folder}")),
                    name: folder.to_string(),
                    mime_type: DIRECTORY_MIME_TYPE,
                    size: None,
                });
            }
            None => out.push(DirEntry {
                uri: file_uri(&root, file.path()),
                name: rest.to_string(),
                mime_type: mime_type(file.path(), served_kind(&file)),
                size: Some(file.size() as u64),
            }),
        }
    }
    any.then_some(out)
}

/// How a file is served: its kind, binary whenever its bytes are not UTF-8.
pub(crate) fn served_kind(file: &File) -> FileKind {
    match file.text() {
        Some(_) => file.kind(),
        None => FileKind::Binary,
    }
}
