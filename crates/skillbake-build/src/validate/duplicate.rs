//! `duplicate-name`: two packs may not share a name, nor names that differ only in letter case
//! (lookups ignore case, as DB-GPT's do, so either would shadow the other).

use crate::diagnostic::{Code, Diagnostic, Position};
use std::collections::BTreeMap;

/// A pack's name and where it is declared.
#[derive(Debug, Clone)]
pub struct NameSite {
    /// The declared name.
    pub name: String,
    /// Path of the pack's `SKILL.md` in diagnostics.
    pub file: String,
    /// Position of the `name` value.
    pub pos: Option<Position>,
}

/// Reports every pack whose name was already taken by an earlier pack (in sorted path order).
pub fn check(sites: &[NameSite], diags: &mut Vec<Diagnostic>) {
    let mut first: BTreeMap<String, &NameSite> = BTreeMap::new();
    for site in sites {
        let folded = skillbake_format::name::fold(&site.name).into_owned();
        match first.get(&folded) {
            Some(prev) => {
                let how = if prev.name == site.name {
                    format!("skill name `{}` is also used by `{}`", site.name, prev.file)
                } else {
                    format!(
                        "skill name `{}` differs only in letter case from `{}` in `{}`",
                        site.name, prev.name, prev.file
                    )
                };
                diags.push(
                    Diagnostic::new(Code::DuplicateName, &site.file, how)
                        .at(site.pos)
                        .related(&prev.file, prev.pos, "first declared here")
                        .help("give each pack a unique name (and matching folder name)"),
                );
            }
            None => {
                first.insert(folded, site);
            }
        }
    }
}
