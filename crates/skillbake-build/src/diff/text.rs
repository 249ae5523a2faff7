//! Line diffs: Myers' O((N+M)·D) shortest edit script, and unified-diff hunks (`@@ -a,b +c,d @@`,
//! three lines of context) as `diff -u` and `git diff` print them.

/// One line of an edit script.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edit<'a> {
    /// In both texts.
    Same(&'a str),
    /// Only in the old text.
    Removed(&'a str),
    /// Only in the new text.
    Added(&'a str),
}

/// Lines added and removed between two texts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stat {
    /// Lines only in the new text.
    pub added: usize,
    /// Lines only in the old text.
    pub removed: usize,
}

/// Above this many differing lines the edit script is not searched for further: the rest is
/// reported as removed and added (a bound on time and memory for pathological inputs).
const MAX_D: usize = 4000;

/// The shortest edit script from `old` to `new` (lines).
pub fn edits<'a>(old: &[&'a str], new: &[&'a str]) -> Vec<Edit<'a>> {
    // Common prefix and suffix first: most edits touch a few lines of a long text.
    let prefix = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let suffix = old[prefix..]
        .iter()
        .rev()
        .zip(new[prefix..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let (a, b) = (
        &old[prefix..old.len() - suffix],
        &new[prefix..new.len() - suffix],
    );
    let mut out: Vec<Edit<'a>> = old[..prefix].iter().map(|l| Edit::Same(l)).collect();
    out.extend(middle(a, b));
    out.extend(old[old.len() - suffix..].iter().map(|l| Edit::Same(l)));
    out
}

/// Myers' greedy forward search with a saved trace, then the backtrack.
fn middle<'a>(a: &[&'a str], b: &[&'a str]) -> Vec<Edit<'a>> {
    let (n, m) = (a.len() as isize, b.len() as isize);
    let max = (a.len() + b.len()).min(MAX_D) as isize;
    let offset = max + 1;
    let mut v = vec![0isize; 2 * max as usize + 3];
    let mut trace: Vec<Vec<isize>> = Vec::new();
    let mut found = None;
    'search: for d in 0..=max {
        trace.push(v.clone());
        let mut k = -d;
        while k <= d {
            let idx = (k + offset) as usize;
            let mut x = if k == -d || (k != d && v[idx - 1] < v[idx + 1]) {
                v[idx + 1]
            } else {
                v[idx - 1] + 1
            };
            let mut y = x - k;
            while x < n && y < m && a[x as usize] == b[y as usize] {
                x += 1;
                y += 1;
            }
            v[idx] = x;
            if x >= n && y >= m {
                found = Some(d);
                break 'search;
            }
            k += 2;
        }
    }
    let Some(d_end) = found else {
        // Too different to search: everything removed, then everything added.
        let mut out: Vec<Edit<'a>> = a.iter().map(|l| Edit::Removed(l)).collect();
        out.extend(b.iter().map(|l| Edit::Added(l)));
        return out;
    };
    let mut out = Vec::new();
    let (mut x, mut y) = (n, m);
    // `trace[d]` is the V array after step d - 1: where the path of step d came from.
    for d in (1..=d_end).rev() {
        let v = &trace[d as usize];
        let k = x - y;
        let at = |k: isize| v[(k + offset) as usize];
        let prev_k = if k == -d || (k != d && at(k - 1) < at(k + 1)) {
            k + 1
        } else {
            k - 1
        };
        let prev_x = at(prev_k);
        let prev_y = prev_x - prev_k;
        while x > prev_x && y > prev_y {
            out.push(Edit::Same(a[(x - 1) as usize]));
            x -= 1;
            y -= 1;
        }
        if x == prev_x {
            out.push(Edit::Added(b[(y - 1) as usize]));
        } else {
            out.push(Edit::Removed(a[(x - 1) as usize]));
        }
        (x, y) = (prev_x, prev_y);
    }
    while x > 0 && y > 0 {
        out.push(Edit::Same(a[(x - 1) as usize]));
        x -= 1;
        y -= 1;
    }
    out.reverse();
    out
}

/// Splits a text into lines (without their `\n`); a final newline ends the last line.
pub fn lines(text: &str) -> Vec<&str> {
    if text.is_empty() {
        return Vec::new();
    }
    text.strip_suffix('\n')
        .unwrap_or(text)
        .split('\n')
        .collect()
}

/// Lines added and removed.
pub fn stat(old: &str, new: &str) -> Stat {
    let mut s = Stat::default();
    for e in edits(&lines(old), &lines(new)) {
        match e {
            Edit::Added(_) => s.added += 1,
            Edit::Removed(_) => s.removed += 1,
            Edit::Same(_) => {}
        }
    }
    s
}

/// The unified diff of two texts: hunks only (no `---`/`+++` header), each line ending in `\n`;
/// empty when the texts are equal. As in `diff -u`, a last line without a line feed is followed
/// by `\ No newline at end of file`, and differs from the same line with one.
pub fn unified(old: &str, new: &str, context: usize) -> String {
    // Lines with their line feeds, so that a missing final one is a difference.
    let (a, b): (Vec<&str>, Vec<&str>) = (
        old.split_inclusive('\n').collect(),
        new.split_inclusive('\n').collect(),
    );
    let script = edits(&a, &b);
    let changed: Vec<usize> = script
        .iter()
        .enumerate()
        .filter(|(_, e)| !matches!(e, Edit::Same(_)))
        .map(|(i, _)| i)
        .collect();
    let mut out = String::new();
    let mut i = 0;
    while i < changed.len() {
        // A hunk: changes closer than 2·context lines apart share one.
        let start = changed[i].saturating_sub(context);
        let mut j = i;
        while j + 1 < changed.len() && changed[j + 1] - changed[j] <= 2 * context + 1 {
            j += 1;
        }
        let end = (changed[j] + context + 1).min(script.len());
        let (mut old_line, mut new_line) = (1, 1);
        for e in &script[..start] {
            match e {
                Edit::Same(_) => {
                    old_line += 1;
                    new_line += 1;
                }
                Edit::Removed(_) => old_line += 1,
                Edit::Added(_) => new_line += 1,
            }
        }
        let hunk = &script[start..end];
        let old_count = hunk.iter().filter(|e| !matches!(e, Edit::Added(_))).count();
        let new_count = hunk
            .iter()
            .filter(|e| !matches!(e, Edit::Removed(_)))
            .count();
        let range = |line: usize, count: usize| match count {
            0 => format!("{},0", line - 1),
            1 => line.to_string(),
            c => format!("{line},{c}"),
        };
        out.push_str(&format!(
            "@@ -{} +{} @@\n",
            range(old_line, old_count),
            range(new_line, new_count)
        ));
        for e in hunk {
            let (sign, text) = match e {
                Edit::Same(t) => (' ', t),
                Edit::Removed(t) => ('-', t),
                Edit::Added(t) => ('+', t),
            };
            out.push(sign);
            match text.strip_suffix('\n') {
                Some(line) => {
                    out.push_str(line);
                    out.push('\n');
                }
                None => {
                    out.push_str(text);
                    out.push_str("\n\\ No newline at end of file\n");
                }
            }
        }
        i = j + 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply<'a>(script: &[Edit<'a>]) -> (Vec<&'a str>, Vec<&'a str>) {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for e in script {
            match *e {
                Edit::Same(l) => {
                    a.push(l);
                    b.push(l);
                }
                Edit::Removed(l) => a.push(l),
                Edit::Added(l) => b.push(l),
            }
        }
        (a, b)
    }

    #[test]
    fn scripts_rebuild_both_texts_and_are_minimal() {
        let cases: [(&str, &str); 6] = [
            ("a\nb\nc\n", "a\nc\n"),
            ("", "x\n"),
            ("x\n", ""),
            ("a\nb\nc\na\nb\nb\na\n", "c\nb\na\nb\na\nc\n"),
            ("same\n", "same\n"),
            ("1\n2\n3\n4\n5\n", "0\n1\n2\nthree\n4\n5\n6\n"),
        ];
        for (old, new) in cases {
            let (a, b) = (lines(old), lines(new));
            let script = edits(&a, &b);
            assert_eq!(apply(&script), (a.clone(), b.clone()), "{old:?} → {new:?}");
        }
        // The classic example: D = 5.
        let (a, b) = (lines("a\nb\nc\na\nb\nb\na\n"), lines("c\nb\na\nb\na\nc\n"));
        let d = edits(&a, &b)
            .iter()
            .filter(|e| !matches!(e, Edit::Same(_)))
            .count();
        assert_eq!(d, 5);
    }

    #[test]
    fn unified_hunks_match_diff_u() {
        let old = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n";
        let new = "1\n2\n3\nfour\n5\n6\n7\n8\n9\n10\n11\n";
        assert_eq!(
            unified(old, new, 3),
            "@@ -1,10 +1,11 @@\n 1\n 2\n 3\n-4\n+four\n 5\n 6\n 7\n 8\n 9\n 10\n+11\n"
        );
        let far = "a\n1\n2\n3\n4\n5\n6\n7\n8\nb\n";
        let far_new = "A\n1\n2\n3\n4\n5\n6\n7\n8\nB\n";
        assert_eq!(
            unified(far, far_new, 1),
            "@@ -1,2 +1,2 @@\n-a\n+A\n 1\n@@ -9,2 +9,2 @@\n 8\n-b\n+B\n"
        );
        assert_eq!(unified("", "x\n", 3), "@@ -0,0 +1 @@\n+x\n");
        assert_eq!(unified("same\n", "same\n", 3), "");
        assert_eq!(
            stat(old, new),
            Stat {
                added: 2,
                removed: 1
            }
        );
    }

    /// A last line without a line feed, as `diff -u` shows it: a line feed added or removed is
    /// a change of that line, followed by the marker where the line feed is missing.
    #[test]
    fn a_missing_final_line_feed_is_marked_as_diff_u_marks_it() {
        let marker = "\\ No newline at end of file\n";
        assert_eq!(
            unified("a\nb", "a\nb\n", 3),
            format!("@@ -1,2 +1,2 @@\n a\n-b\n{marker}+b\n")
        );
        assert_eq!(
            unified("a\nb\n", "a\nb", 3),
            format!("@@ -1,2 +1,2 @@\n a\n-b\n+b\n{marker}")
        );
        assert_eq!(
            unified("a\nb", "a\nc", 3),
            format!("@@ -1,2 +1,2 @@\n a\n-b\n{marker}+c\n{marker}")
        );
        assert_eq!(
            unified("x\ny\nz", "X\ny\nz", 3),
            format!("@@ -1,3 +1,3 @@\n-x\n+X\n y\n z\n{marker}")
        );
        assert_eq!(unified("a", "a", 3), "");
        assert_eq!(unified("", "x", 3), format!("@@ -0,0 +1 @@\n+x\n{marker}"));
    }
}
