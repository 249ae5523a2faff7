//! What a check produced: the report, and the packs as they would be embedded.

use crate::model::Skill;
use crate::report::Report;

/// What checking a skills root produced.
#[derive(Debug, Default)]
pub struct Checked {
    /// The diagnostics and sources.
    pub report: Report,
    /// The packs that parsed, as they would be embedded (only meaningful without errors).
    pub(crate) skills: Vec<Skill>,
    /// The routing index of `skills` (in name order), as the registry embeds it.
    pub(crate) route: Option<crate::generate::route::Built>,
}

impl Checked {
    /// The packs that parsed, in name and version order, as they would be embedded (only
    /// meaningful when the report has no errors).
    pub fn packs(&self) -> impl ExactSizeIterator<Item = crate::Pack<'_>> {
        self.skills.iter().map(crate::Pack::new)
    }

    /// The routing index the registry would embed (`skillbake_route::index` layout), when the
    /// packs checked well enough to build one.
    pub fn route_index(&self) -> Option<&[u8]> {
        self.route.as_ref().map(|r| r.bytes.as_slice())
    }
}
