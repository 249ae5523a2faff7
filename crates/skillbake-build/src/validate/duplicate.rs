//! `duplicate-name` and `duplicate-version`: two packs may not share a name, nor names that
//! differ only in letter case (lookups ignore case, as DB-GPT's do, so either would shadow the
//! other) — unless they are versions of one skill kept side by side: each with its own semantic
//! `version`, all but at most one of them in a `NAME@VERSION` folder. Two of those may not have
//! the same version.

use crate::diagnostic::{Code, Diagnostic};
use crate::model::NameSite;
use std::collections::BTreeMap;

/// Why `later` cannot sit beside `earlier`, if it cannot.
fn conflict(earlier: &NameSite, later: &NameSite) -> Option<Diagnostic> {
    if earlier.name != later.name {
        return Some(
            Diagnostic::new(
                Code::DuplicateName,
                &later.file,
                format!(
                    "skill name `{}` differs only in letter case from `{}` in `{}`",
                    later.name, earlier.name, earlier.file
                ),
            )
            .at(later.pos)
            .related(&earlier.file, earlier.pos, "first declared here")
            .help("give each pack a unique name (and matching folder name)"),
        );
    }
    let duplicate = |help: String| {
        Diagnostic::new(
            Code::DuplicateName,
            &later.file,
            format!(
                "skill name `{}` is also used by `{}`",
                later.name, earlier.file
            ),
        )
        .at(later.pos)
        .related(&earlier.file, earlier.pos, "first declared here")
        .help(help)
    };
    let (Some(a), Some(b)) = (
        crate::model::effective_version(earlier.version.as_deref()),
        crate::model::effective_version(later.version.as_deref()),
    ) else {
        return Some(duplicate(format!(
            "give each pack a unique name (and matching folder name); to serve several versions of `{}` side by side, give each one its own semantic `version` and put all but one in a `{}@VERSION` folder",
            later.name, later.name
        )));
    };
    if a.precedence(&b).is_eq() {
        return Some(
            Diagnostic::new(
                Code::DuplicateVersion,
                &later.file,
                format!(
                    "`{}` {b} is also declared by `{}`",
                    later.name, earlier.file
                ),
            )
            .at(later.version_pos.or(later.pos))
            .related(
                &earlier.file,
                earlier.version_pos.or(earlier.pos),
                "first declared here",
            )
            .help("give each version of the skill its own version number (build metadata after `+` does not count), or delete the copy"),
        );
    }
    if !earlier.versioned_dir && !later.versioned_dir {
        let (older, v) = if a.precedence(&b).is_lt() {
            (&earlier.file, a)
        } else {
            (&later.file, b)
        };
        return Some(duplicate(format!(
            "to serve both versions side by side, rename the folder of the older one (`{older}`) to `{}@{v}`",
            later.name
        )));
    }
    None
}

/// Reports every pack whose name or version was already taken by an earlier pack (in sorted path
/// order).
pub fn check(sites: &[NameSite], diags: &mut Vec<Diagnostic>) {
    let mut seen: BTreeMap<String, Vec<&NameSite>> = BTreeMap::new();
    for site in sites {
        let earlier = seen
            .entry(skillbake_format::name::fold(&site.name).into_owned())
            .or_default();
        match earlier.iter().find_map(|e| conflict(e, site)) {
            Some(d) => diags.push(d),
            None => earlier.push(site),
        }
    }
}
