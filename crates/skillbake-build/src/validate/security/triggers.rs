//! The trigger automaton of the pattern rules: every occurrence of every trigger word in a file
//! (ASCII case-insensitive, overlapping), in the order aho-corasick's overlapping search reports
//! them.
//!
//! A process starts on aho-corasick's contiguous NFA, which is cheap to build; after
//! [`DFA_AFTER`] bytes of a kind of file it builds aho-corasick's DFA and copies it into a
//! [`Dfa`] of its own, a table of premultiplied states and byte classes. Walking a DFA waits on
//! one table load per byte (about 2 ns a byte here), so the copy walks a file as four stretches
//! at once, four loads in flight (about 0.8 ns a byte over the text of the public packs). Each
//! stretch starts at the start of a line, where the automaton is in its start state because no
//! trigger holds a line break: the four walks find exactly the matches of one walk, and their
//! matches are put back in its order.

use aho_corasick::automaton::Automaton;
use aho_corasick::{dfa, AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, Anchored, MatchKind};
use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// Bytes of one kind of file a process scans with the NFA before it builds the DFA: the DFA
/// walks a byte several times faster, but building it costs about as much as the NFA scanning
/// half a megabyte more, so a check of a few packs never builds it.
const DFA_AFTER: usize = 512 << 10;

/// A file shorter than this is walked as one stretch.
const SPLIT_FROM: usize = 1 << 10;

/// One occurrence of a trigger.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Found {
    /// The trigger's index in the words the automaton was built from.
    pub trigger: usize,
    /// Where it starts.
    pub start: usize,
    /// Where it ends (exclusive).
    pub end: usize,
}

/// The automaton over one set of trigger words.
pub struct Triggers {
    /// The words, lowercase.
    words: Vec<String>,
    /// The contiguous NFA: cheap to build.
    nfa: AhoCorasick,
    /// The DFA's copy, built once [`DFA_AFTER`] bytes were scanned (`None` if it cannot be
    /// built: more states than 32 bits address, or a word with a line break).
    dfa: OnceLock<Option<Dfa>>,
    /// Bytes scanned with the NFA so far.
    scanned: AtomicUsize,
}

impl Triggers {
    /// The automaton over `words` (lowercase).
    pub fn new(words: Vec<String>) -> Triggers {
        Triggers {
            nfa: build(&words, AhoCorasickKind::ContiguousNFA),
            words,
            dfa: OnceLock::new(),
            scanned: AtomicUsize::new(0),
        }
    }

    /// Every occurrence of a word in `hay`, appended to `out` in the order of aho-corasick's
    /// overlapping search: by end, and at one end in the automaton's order.
    pub fn find(&self, hay: &[u8], out: &mut Vec<Found>) {
        let dfa = match self.dfa.get() {
            Some(dfa) => dfa.as_ref(),
            None if self.scanned.fetch_add(hay.len(), Ordering::Relaxed) < DFA_AFTER => None,
            None => self.dfa.get_or_init(|| Dfa::new(&self.words)).as_ref(),
        };
        match dfa {
            Some(dfa) => dfa.find(hay, out),
            None => out.extend(self.nfa.find_overlapping_iter(hay).map(|m| Found {
                trigger: m.pattern().as_usize(),
                start: m.start(),
                end: m.end(),
            })),
        }
    }
}

/// The case-insensitive automaton over `words` reporting every (overlapping) match.
fn build(words: &[String], kind: AhoCorasickKind) -> AhoCorasick {
    AhoCorasickBuilder::new()
        .ascii_case_insensitive(true)
        .match_kind(MatchKind::Standard)
        .kind(Some(kind))
        .build(words)
        .unwrap_or_else(|_| {
            AhoCorasick::new(["\u{0}never\u{0}"]).unwrap_or_else(|_| unreachable!())
        })
}

/// aho-corasick's DFA over the words, copied: `trans[state + class]` is the next state, every
/// state premultiplied by the number of classes; the match states come first.
struct Dfa {
    /// The class of every byte: one for each byte that occurs in a word (both cases of a
    /// letter in one), 0 for every other byte.
    classes: [u8; 256],
    /// The number of classes: the stride of a state's row.
    stride: u32,
    /// The transitions. Every entry is a state, so `trans[state + class]` is in bounds for
    /// every state and every class: no input can make the walk index out of it.
    trans: Box<[u32]>,
    /// The start state.
    start: u32,
    /// States below this one are match states.
    matching: u32,
    /// For every match state (by row), the words it ends, in the automaton's order.
    ends: Box<[Box<[u32]>]>,
    /// The length of every word in bytes.
    lens: Box<[usize]>,
}

impl Dfa {
    /// The copy of aho-corasick's DFA over `words`; `None` when it cannot be made.
    fn new(words: &[String]) -> Option<Dfa> {
        if words.iter().any(|w| w.contains('\n')) {
            return None;
        }
        let d = dfa::Builder::new()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .build(words)
            .ok()?;
        // A class per byte that occurs in a word (both cases of a letter in one), and one for
        // every other byte: those lead every state where the start state leads.
        let mut classes = [0u8; 256];
        let mut count = 1usize;
        let mut representative = vec![0u8];
        for w in words {
            for &b in w.as_bytes() {
                let b = b.to_ascii_lowercase();
                if classes[usize::from(b)] == 0 {
                    let class = u8::try_from(count).ok()?;
                    classes[usize::from(b)] = class;
                    classes[usize::from(b.to_ascii_uppercase())] = class;
                    representative.push(b);
                    count += 1;
                }
            }
        }
        if let Some(other) = (0..=255u8).find(|&b| classes[usize::from(b)] == 0) {
            representative[0] = other;
        }
        // Every state the unanchored search reaches, in the order first reached.
        let start = d.start_state(Anchored::No).ok()?;
        let mut states = vec![start];
        let mut row_of: HashMap<u32, usize> = HashMap::from([(start.as_u32(), 0)]);
        let mut i = 0;
        while let Some(&s) = states.get(i) {
            for &b in &representative {
                let next = d.next_state(Anchored::No, s, b);
                if let Entry::Vacant(e) = row_of.entry(next.as_u32()) {
                    e.insert(states.len());
                    states.push(next);
                }
            }
            i += 1;
        }
        let stride = representative.len();
        // Rows: the match states first, each group in the order reached.
        let mut order: Vec<usize> = (0..states.len()).collect();
        order.sort_by_key(|&i| !d.is_match(states[i]));
        let mut row = vec![0usize; states.len()];
        for (r, &old) in order.iter().enumerate() {
            row[old] = r;
        }
        let premultiplied = |old: usize| u32::try_from(row[old] * stride).ok();
        let matching = order.iter().filter(|&&i| d.is_match(states[i])).count();
        let mut trans = vec![0u32; states.len().checked_mul(stride)?];
        let mut ends = vec![Box::<[u32]>::default(); matching];
        for (old, &s) in states.iter().enumerate() {
            let base = row[old] * stride;
            for (class, &b) in representative.iter().enumerate() {
                let next = row_of.get(&d.next_state(Anchored::No, s, b).as_u32())?;
                trans[base + class] = premultiplied(*next)?;
            }
            if d.is_match(s) {
                ends[row[old]] = (0..d.match_len(s))
                    .map(|k| d.match_pattern(s, k).as_u32())
                    .collect();
            }
        }
        Some(Dfa {
            classes,
            stride: u32::try_from(stride).ok()?,
            trans: trans.into_boxed_slice(),
            start: premultiplied(0)?,
            matching: u32::try_from(matching * stride).ok()?,
            ends: ends.into_boxed_slice(),
            lens: words.iter().map(String::len).collect(),
        })
    }

    #[inline(always)]
    fn next(&self, state: u32, byte: u8) -> u32 {
        self.trans[state as usize + usize::from(self.classes[usize::from(byte)])]
    }

    /// Appends the words that end in match state `state` at `end`.
    #[inline(always)]
    fn ended(&self, state: u32, end: usize, out: &mut Vec<Found>) {
        let Some(words) = self.ends.get((state / self.stride) as usize) else {
            return;
        };
        for &w in words.iter() {
            let trigger = w as usize;
            let len = self.lens.get(trigger).copied().unwrap_or(0);
            out.push(Found {
                trigger,
                start: end.saturating_sub(len),
                end,
            });
        }
    }

    /// Walks `hay` (which starts at `base` of the file) from `state`.
    fn walk(&self, hay: &[u8], base: usize, mut state: u32, out: &mut Vec<Found>) {
        for (i, &b) in hay.iter().enumerate() {
            state = self.next(state, b);
            if state < self.matching {
                self.ended(state, base + i + 1, out);
            }
        }
    }

    /// Every match in `hay`, in the order of one walk.
    fn find(&self, hay: &[u8], out: &mut Vec<Found>) {
        if hay.len() < SPLIT_FROM {
            return self.walk(hay, 0, self.start, out);
        }
        // Four stretches, each starting at a line start.
        let line_after = |at: usize| {
            memchr::memchr(b'\n', hay.get(at..).unwrap_or_default())
                .map_or(hay.len(), |i| at + i + 1)
        };
        let quarter = hay.len() / 4;
        let b1 = line_after(quarter);
        let b2 = line_after(b1.max(2 * quarter));
        let b3 = line_after(b2.max(3 * quarter));
        let (p0, rest) = hay.split_at(b1);
        let (p1, rest) = rest.split_at(b2 - b1);
        let (p2, p3) = rest.split_at(b3 - b2);
        let n = p0.len().min(p1.len()).min(p2.len()).min(p3.len());
        let mut o1 = Vec::new();
        let mut o2 = Vec::new();
        let mut o3 = Vec::new();
        let (mut s0, mut s1, mut s2, mut s3) = (self.start, self.start, self.start, self.start);
        let m = self.matching;
        let together = p0[..n].iter().zip(&p1[..n]).zip(&p2[..n]).zip(&p3[..n]);
        for (i, (((&a, &b), &c), &d)) in together.enumerate() {
            s0 = self.next(s0, a);
            s1 = self.next(s1, b);
            s2 = self.next(s2, c);
            s3 = self.next(s3, d);
            if (s0 < m) | (s1 < m) | (s2 < m) | (s3 < m) {
                if s0 < m {
                    self.ended(s0, i + 1, out);
                }
                if s1 < m {
                    self.ended(s1, b1 + i + 1, &mut o1);
                }
                if s2 < m {
                    self.ended(s2, b2 + i + 1, &mut o2);
                }
                if s3 < m {
                    self.ended(s3, b3 + i + 1, &mut o3);
                }
            }
        }
        self.walk(&p0[n..], n, s0, out);
        self.walk(&p1[n..], b1 + n, s1, &mut o1);
        self.walk(&p2[n..], b2 + n, s2, &mut o2);
        self.walk(&p3[n..], b3 + n, s3, &mut o3);
        out.append(&mut o1);
        out.append(&mut o2);
        out.append(&mut o3);
    }
}

#[cfg(test)]
impl Triggers {
    /// What the NFA and the DFA (when it can be built) each find in `hay`.
    pub(super) fn by_each(&self, hay: &[u8]) -> (Vec<Found>, Option<Vec<Found>>) {
        let by_nfa = tests::by_nfa(self, hay);
        let dfa = self.dfa.get_or_init(|| Dfa::new(&self.words));
        let by_dfa = dfa.as_ref().map(|dfa| tests::by_dfa(dfa, hay));
        (by_nfa, by_dfa)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(list: &[&str]) -> Vec<String> {
        list.iter().map(|w| w.to_ascii_lowercase()).collect()
    }

    pub(super) fn by_nfa(t: &Triggers, hay: &[u8]) -> Vec<Found> {
        t.nfa
            .find_overlapping_iter(hay)
            .map(|m| Found {
                trigger: m.pattern().as_usize(),
                start: m.start(),
                end: m.end(),
            })
            .collect()
    }

    pub(super) fn by_dfa(dfa: &Dfa, hay: &[u8]) -> Vec<Found> {
        let mut out = Vec::new();
        dfa.find(hay, &mut out);
        out
    }

    /// Every transition is a state: the walk cannot index out of the table.
    #[test]
    fn every_transition_is_a_state() {
        let w = words(&[
            "user", "human", "id_rsa", "用户", "nc ", "a", "ab", "abc", "bc",
        ]);
        let Some(dfa) = Dfa::new(&w) else {
            panic!("no DFA")
        };
        assert_eq!(dfa.trans.len() % dfa.stride as usize, 0);
        for &s in dfa.trans.iter() {
            assert_eq!(s % dfa.stride, 0);
            assert!((s as usize) + (dfa.stride as usize) <= dfa.trans.len());
        }
        assert!(dfa.matching as usize <= dfa.trans.len());
    }

    /// The four walks find what aho-corasick's overlapping search finds, in its order: on
    /// overlapping words, words that end at once, case variants, multi-byte words, lines cut
    /// at every length around the split, and no line break at all.
    #[test]
    fn four_walks_find_what_one_search_finds() {
        let w = words(&[
            "user",
            "USER data",
            "ser",
            "er",
            "human",
            "用户",
            "nc ",
            "id_rsa",
            ".ssh/",
        ]);
        let t = Triggers::new(w.clone());
        let Some(dfa) = Dfa::new(&w) else {
            panic!("no DFA")
        };
        let line = "The User data of a human (用户) is in ~/.ssh/id_rsa; run nc host.\n";
        let mut texts: Vec<Vec<u8>> = Vec::new();
        for n in [0, 1, 3, 17, 18, 40, 100] {
            texts.push(line.repeat(n).into_bytes());
        }
        // No line break: one stretch however long.
        texts.push(line.trim_end().repeat(60).into_bytes());
        // Lines of every length around the split points.
        let mut varied = String::new();
        for k in 0..300 {
            varied.push_str(&"x".repeat(k % 37));
            varied.push_str(if k % 3 == 0 { "useR" } else { "humaN" });
            varied.push('\n');
        }
        texts.push(varied.into_bytes());
        let mut matches = 0;
        for text in &texts {
            let want = by_nfa(&t, text);
            assert_eq!(by_dfa(&dfa, text), want);
            matches += want.len();
        }
        assert!(matches > 1000, "{matches}");
    }

    /// A word with a line break gets no DFA (the stretches would miss it), and the NFA is used.
    #[test]
    fn a_word_with_a_line_break_keeps_the_nfa() {
        assert!(Dfa::new(&words(&["a\nb"])).is_none());
    }
}
