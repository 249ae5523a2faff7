//! `permission`: every name comes from the permission vocabulary
//! (`skillbake_format::permission`: network, smtp, filesystem:read, filesystem:write,
//! filesystem, subprocess). A list or one comma-separated string.

use super::tools::list_items;
use super::PackCtx;
use crate::diagnostic::{Code, Diagnostic};
use skillbake_format::permission;
use skillbake_format::suggest::{closest, did_you_mean};

/// Checks `permission`.
pub fn check(ctx: &PackCtx<'_>, diags: &mut Vec<Diagnostic>) {
    let Some(v) = ctx.field("permission") else {
        return;
    };
    for name in list_items(v) {
        if permission::lookup(&name).is_some() {
            continue;
        }
        let known = || permission::names();
        let mut d = Diagnostic::new(
            Code::UnknownPermission,
            &ctx.file,
            format!("`permission` names `{name}`, which is not a permission skillbake knows"),
        )
        .at(ctx.md.find_in_value("permission", &name));
        let all = known().collect::<Vec<_>>().join(", ");
        d = match closest(&name, known()) {
            Some(s) => d.help(format!("{} The permissions are: {all}", did_you_mean(s))),
            None => d.help(format!("the permissions are: {all}")),
        };
        diags.push(d);
    }
}
