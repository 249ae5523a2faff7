//! Did-you-mean, one for the whole product: the known word closest to a misspelt one, and the
//! words that offer it. The compiler's diagnostics (`unknown-key`, `unknown-tool`,
//! `unknown-permission`, …), the executor's refusals (`--allow`, unknown skills), the MCP
//! server and the command line all suggest through [`closest`] and [`did_you_mean`], so one typo
//! gets one suggestion wherever it is made.
//!
//! Words are compared in ASCII lower case with the separators `-`, `_`, `.` and `:` taken as one
//! (`required-tools` is `required_tools`, `filesystem.read` is `filesystem:read`), by optimal
//! string alignment distance (Levenshtein plus adjacent transpositions: `nmae` is one edit from
//! `name`).

/// The candidate closest to `input`, if one is close enough: within 1 edit of a candidate of up
/// to 3 characters, 2 edits up to 8, 3 beyond (ties go to the alphabetically first). Failing
/// that, the first candidate that starts with `input`, when `input` has 3 characters or more
/// (`sub` suggests `subprocess`). A candidate equal to `input` up to case and separators is
/// closest of all.
pub fn closest<'a>(input: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let wanted = normalise(input);
    let mut best: Option<(usize, &'a str)> = None;
    let mut prefixed: Option<&'a str> = None;
    for cand in candidates {
        let norm = normalise(cand);
        let d = distance(&wanted, &norm);
        let limit = match norm.chars().count() {
            0..=3 => 1,
            4..=8 => 2,
            _ => 3,
        };
        if d <= limit && best.is_none_or(|(bd, bc)| (d, cand) < (bd, bc)) {
            best = Some((d, cand));
        }
        if prefixed.is_none() && wanted.chars().count() >= 3 && norm.starts_with(&wanted) {
            prefixed = Some(cand);
        }
    }
    best.map(|(_, c)| c).or(prefixed)
}

/// How a suggestion is offered: ``did you mean `candidate`?``.
pub fn did_you_mean(candidate: &str) -> String {
    format!("did you mean `{candidate}`?")
}

/// Optimal string alignment distance between `a` and `b`, in characters: insertions, deletions,
/// substitutions and transpositions of two adjacent characters each count one.
pub fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // Three rows of the dynamic programme: two rows back, the previous one, the current one.
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur: Vec<usize> = vec![0; b.len() + 1];
    let at = |row: &[usize], j: usize| row.get(j).copied().unwrap_or(usize::MAX / 2);
    for (i, &ca) in a.iter().enumerate() {
        if let Some(first) = cur.first_mut() {
            *first = i + 1;
        }
        for (j, &cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            let mut v = (at(&prev, j + 1) + 1)
                .min(at(&cur, j) + 1)
                .min(at(&prev, j) + cost);
            let swapped = i > 0
                && j > 0
                && a.get(i - 1) == Some(&cb)
                && b.get(j - 1) == Some(&ca)
                && ca != cb;
            if swapped {
                v = v.min(at(&before, j - 1) + 1);
            }
            if let Some(cell) = cur.get_mut(j + 1) {
                *cell = v;
            }
        }
        std::mem::swap(&mut before, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    at(&prev, b.len())
}

/// ASCII lower case, every separator as `_`.
fn normalise(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '-' | '.' | ':' => '_',
            c => c.to_ascii_lowercase(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(distance("", ""), 0);
        assert_eq!(distance("abc", ""), 3);
        assert_eq!(distance("", "abc"), 3);
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("nmae", "name"), 1);
        assert_eq!(distance("ca", "abc"), 3);
        assert_eq!(distance("descripton", "description"), 1);
    }

    #[test]
    fn typos_are_found_and_strangers_are_not() {
        let keys = ["name", "description", "required_tools", "tags", "version"];
        assert_eq!(closest("requried_tools", keys), Some("required_tools"));
        assert_eq!(closest("required-tools", keys), Some("required_tools"));
        assert_eq!(closest("descripton", keys), Some("description"));
        assert_eq!(closest("nmae", keys), Some("name"));
        assert_eq!(closest("colour", keys), None);
        assert_eq!(closest("", keys), None);
        let permissions = [
            "filesystem:read",
            "filesystem:write",
            "network",
            "subprocess",
        ];
        assert_eq!(closest("netwrok", permissions), Some("network"));
        assert_eq!(
            closest("filesystem-read", permissions),
            Some("filesystem:read")
        );
        assert_eq!(
            closest("Filesystem.Read", permissions),
            Some("filesystem:read")
        );
        assert_eq!(closest("sub", permissions), Some("subprocess"));
        assert_eq!(closest("fs", permissions), None);
    }

    #[test]
    fn ties_go_to_the_alphabetically_first() {
        assert_eq!(closest("cat", ["cot", "bat"]), Some("bat"));
    }

    #[test]
    fn the_wording() {
        assert_eq!(did_you_mean("name"), "did you mean `name`?");
    }
}
