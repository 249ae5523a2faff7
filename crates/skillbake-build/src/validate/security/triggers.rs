//! The trigger automaton of the pattern rules: every occurrence of every trigger word in a file
//! (ASCII case-insensitive, overlapping), in the order of an Aho–Corasick overlapping search: by
//! end, and at one end the longest word first, then the shorter ones that end there.
//!
//! The automaton is a DFA built here straight from the words: a sparse trie (each state's
//! children in a list), its failure links in breadth-first order, then a table of 16-bit states
//! by byte class in which each state's row is a copy of its failure state's with its own
//! children written over it. The few hundred triggers of prose or of scripts build in about
//! 0.2 ms each (filling every row class by class from a dense trie and renumbering it took
//! 0.7 ms), so a process walks every byte with it from the first file on. Their 1,527 and
//! 1,767 states of 108 classes fill 391 and 452 KB of their tables (rows 128 wide); 32-bit
//! premultiplied states, as an earlier version had, took 1.7 times that, and their page faults
//! were most of what building the tables cost a process that checks one pack.
//!
//! Walking a DFA waits on one table load per byte, so a file is walked as four stretches at
//! once, four loads in flight. Each stretch starts at the start of a line, where the automaton
//! is in its start state because no trigger holds a line break: the four walks find exactly the
//! matches of one walk, and their matches are put back in its order. The loop that walks them
//! ([`Dfa::walk_four`]; [`Dfa::walk_one`] walks a short file and the stretches' ends) holds
//! nothing else: it stops at a match state, and the matches are recorded out of line. Rows
//! have a constant width, and the table has a fixed size that every index is masked to, so the
//! walk has no bounds check. With the four states in registers a byte costs about 1.1 ns over
//! the text of 1,582 real pack folders (42 MB), against 1.6 ns when the loop kept them on the
//! stack (2.3 ns in a build without link-time optimisation). Measured on its own the old loop
//! had already run at 1.1 ns (BENCHMARKS.md): how it compiled depended on the code it was
//! inlined into, which no longer reaches the loop.

use std::collections::VecDeque;

/// A file shorter than this is walked as one stretch.
const SPLIT_FROM: usize = 1 << 10;

/// A row of the transition table: `1 << SHIFT` entries, one per byte class, so at most 128
/// classes (the rules' words have 108). A constant, so that the walk's index needs no register
/// to shift by: with the four states, their pointers and the shift the loop ran out of registers
/// and kept the states on the stack.
const SHIFT: u32 = 7;

/// The transition table's size in entries (1 MiB): room for 4,096 states. The walk masks every
/// index with `TABLE - 1`, which changes no index (each is below the rows the automaton has) but
/// proves to the compiler that none is out of bounds, so the walk has no bounds check; the
/// entries past the automaton's rows are zero pages that are never written or read, so they
/// take no memory.
const TABLE: usize = 1 << 19;

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
    /// `None` when the words cannot make one (an empty word, a word with a line break, or more
    /// than 65,536 states: the rules' words make fewer than 2,000, which a test checks): then
    /// nothing is found.
    dfa: Option<Dfa>,
}

impl Triggers {
    /// The automaton over `words` (lowercase, no two alike: of two equal words only the first
    /// is reported). A word is bytes: it may be a piece of a UTF-8 character.
    pub fn new<W: AsRef<[u8]>>(words: &[W]) -> Triggers {
        Triggers {
            dfa: Dfa::new(words),
        }
    }

    /// Every occurrence of a word in `hay`, appended to `out` in the order of an overlapping
    /// Aho–Corasick search: by end, and at one end the longest word first.
    pub fn find(&self, hay: &[u8], out: &mut Vec<Found>) {
        if let Some(dfa) = &self.dfa {
            dfa.find(hay, out);
        }
    }

    /// Whether the words made an automaton.
    #[cfg(test)]
    pub fn is_built(&self) -> bool {
        self.dfa.is_some()
    }
}

/// The DFA over the words: `trans[state << SHIFT | class]` is the next state; the match states
/// come first.
struct Dfa {
    /// The class of every byte: one for each byte that occurs in a word (both cases of a
    /// letter in one), 0 for every other byte.
    classes: [u8; 256],
    /// The transitions, `rows << SHIFT` of them used, each a row, so `trans[row << SHIFT |
    /// class]` is a used entry for every row and every class: no input can make the walk read
    /// past the rows.
    trans: Box<[u16; TABLE]>,
    /// The start state.
    start: u32,
    /// States below this one are match states.
    matching: u32,
    /// For every match state (by row), the words it ends: its own, then those of its failure
    /// state's (the longest first).
    ends: Box<[Box<[u32]>]>,
    /// The length of every word in bytes.
    lens: Box<[usize]>,
}

/// No state: a trie state without a child, or without a next sibling.
const NONE: u32 = u32::MAX;

impl Dfa {
    /// The DFA over `words`; `None` when it cannot be made.
    fn new<W: AsRef<[u8]>>(words: &[W]) -> Option<Dfa> {
        // An empty word would match before the first byte, where the walk does not look.
        if words
            .iter()
            .any(|w| w.as_ref().is_empty() || w.as_ref().contains(&b'\n'))
        {
            return None;
        }
        // A class per byte that occurs in a word (both cases of a letter in one), and one for
        // every other byte.
        let mut classes = [0u8; 256];
        let mut count = 1usize;
        for w in words {
            for &b in w.as_ref() {
                let b = b.to_ascii_lowercase();
                if classes[usize::from(b)] == 0 {
                    let class = u8::try_from(count).ok()?;
                    classes[usize::from(b)] = class;
                    classes[usize::from(b.to_ascii_uppercase())] = class;
                    count += 1;
                }
            }
        }
        let stride = count;
        let trie = Trie::new(words, &classes)?;
        let states = trie.own.len();
        // Breadth first: each state's failure state is shallower, so it is visited first and
        // its words are complete when the state's are made from them.
        let mut fail = vec![0u32; states];
        let mut ends: Vec<Vec<u32>> = trie
            .own
            .iter()
            .map(|o| o.iter().copied().collect())
            .collect();
        let mut order = Vec::with_capacity(states);
        let mut queue = VecDeque::from([0u32]);
        while let Some(s) = queue.pop_front() {
            order.push(s);
            for (class, t) in trie.children(s) {
                let f = if s == 0 {
                    0
                } else {
                    trie.goto(&fail, fail[s as usize], class)
                };
                fail[t as usize] = f;
                if !ends[f as usize].is_empty() {
                    let inherited = ends[f as usize].clone();
                    ends[t as usize].extend(inherited);
                }
                queue.push_back(t);
            }
        }
        // Rows: the match states first, each group in breadth-first order.
        let mut rows: Vec<u32> = order
            .iter()
            .copied()
            .filter(|&s| !ends[s as usize].is_empty())
            .collect();
        let matching = rows.len();
        rows.extend(
            order
                .iter()
                .copied()
                .filter(|&s| ends[s as usize].is_empty()),
        );
        let mut row_of = vec![0usize; states];
        for (r, &s) in rows.iter().enumerate() {
            row_of[s as usize] = r;
        }
        if stride > 1 << SHIFT {
            return None;
        }
        let width = 1usize << SHIFT;
        let used = states.checked_mul(width).filter(|&n| n <= TABLE)?;
        let row = |s: u32| u16::try_from(row_of[s as usize]).ok();
        // Each state's row is its failure state's (complete, being shallower) with its own
        // children written over it; the root's missing transitions lead back to the root.
        // (`vec![0; n]` is allocated zeroed: the pages past `used` are never touched.)
        let mut table = vec![0u16; TABLE];
        table[..used].fill(row(0)?);
        for &s in &order {
            let at = row_of[s as usize] * width;
            if s != 0 {
                let from = row_of[fail[s as usize] as usize] * width;
                table.copy_within(from..from + width, at);
            }
            for (class, t) in trie.children(s) {
                table[at + usize::from(class)] = row(t)?;
            }
        }
        let ends = rows[..matching]
            .iter()
            .map(|&s| std::mem::take(&mut ends[s as usize]).into_boxed_slice())
            .collect();
        Some(Dfa {
            classes,
            trans: table.into_boxed_slice().try_into().ok()?,
            start: u32::from(row(0)?),
            matching: u32::try_from(matching).ok()?,
            ends,
            lens: words.iter().map(|w| w.as_ref().len()).collect(),
        })
    }

    #[inline(always)]
    fn next(&self, state: u32, byte: u8) -> u32 {
        let at = ((state as usize) << SHIFT) | usize::from(self.classes[usize::from(byte)]);
        u32::from(self.trans[at & (TABLE - 1)])
    }

    /// Appends the words that end in match state `state` at `end`.
    #[inline(always)]
    fn ended(&self, state: u32, end: usize, out: &mut Vec<Found>) {
        let Some(words) = self.ends.get(state as usize) else {
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

    /// Walks the four `parts` (of one length) together from `states` until at least one walk
    /// is in a match state: where (the index of the byte that led there), with `states` left
    /// after it; `None` at the end of the parts. Only the walk is in this loop, so its four
    /// states stay in registers (with the matches' bookkeeping in it, the compiler kept them on
    /// the stack, and a store and a load joined every byte's chain of dependent loads).
    #[inline(never)]
    fn walk_four(&self, parts: [&[u8]; 4], states: &mut [u32; 4]) -> Option<usize> {
        let [p0, p1, p2, p3] = parts;
        let [mut s0, mut s1, mut s2, mut s3] = *states;
        let m = self.matching;
        let mut stop = None;
        for (i, (((&a, &b), &c), &d)) in p0.iter().zip(p1).zip(p2).zip(p3).enumerate() {
            s0 = self.next(s0, a);
            s1 = self.next(s1, b);
            s2 = self.next(s2, c);
            s3 = self.next(s3, d);
            if (s0 < m) | (s1 < m) | (s2 < m) | (s3 < m) {
                stop = Some(i);
                break;
            }
        }
        *states = [s0, s1, s2, s3];
        stop
    }

    /// [`Dfa::ended`] for each of the four walks in a match state (`states[k]`, at `ends[k]`,
    /// into `outs[k]`). Out of line: matches are rare (one in about a kilobyte of real packs),
    /// and kept in the loop their code made the compiler keep the four states on the stack.
    #[cold]
    #[inline(never)]
    fn ended_four(&self, states: [u32; 4], ends: [usize; 4], outs: [&mut Vec<Found>; 4]) {
        for ((state, end), out) in states.into_iter().zip(ends).zip(outs) {
            if state < self.matching {
                self.ended(state, end, out);
            }
        }
    }

    /// Walks `hay` (which starts at `base` of the file) from `state`.
    fn walk(&self, hay: &[u8], base: usize, mut state: u32, out: &mut Vec<Found>) {
        let mut at = 0;
        while let Some(ahead) = self.walk_one(hay.get(at..).unwrap_or_default(), &mut state) {
            let i = at + ahead;
            self.ended(state, base + i + 1, out);
            at = i + 1;
        }
    }

    /// Walks `hay` from `state` until a match state, as [`Dfa::walk_four`] walks four: where
    /// (the index of the byte that led there), with `state` left after it; `None` at the end.
    #[inline(never)]
    fn walk_one(&self, hay: &[u8], state: &mut u32) -> Option<usize> {
        let mut s = *state;
        let m = self.matching;
        let mut stop = None;
        for (i, &b) in hay.iter().enumerate() {
            s = self.next(s, b);
            if s < m {
                stop = Some(i);
                break;
            }
        }
        *state = s;
        stop
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
        let mut states = [self.start; 4];
        let mut at = 0;
        while let Some(ahead) = self.walk_four(
            [&p0[at..n], &p1[at..n], &p2[at..n], &p3[at..n]],
            &mut states,
        ) {
            let i = at + ahead;
            let outs = [&mut *out, &mut o1, &mut o2, &mut o3];
            self.ended_four(states, [i + 1, b1 + i + 1, b2 + i + 1, b3 + i + 1], outs);
            at = i + 1;
        }
        let [s0, s1, s2, s3] = states;
        self.walk(&p0[n..], n, s0, out);
        self.walk(&p1[n..], b1 + n, s1, &mut o1);
        self.walk(&p2[n..], b2 + n, s2, &mut o2);
        self.walk(&p3[n..], b3 + n, s3, &mut o3);
        out.append(&mut o1);
        out.append(&mut o2);
        out.append(&mut o3);
    }
}

/// The trie of the words, sparse: every state's children in a list (first child, then each
/// child's next sibling), so that building it costs the words' bytes, not states × classes.
struct Trie {
    /// The word that ends at each state (the first of equal words).
    own: Vec<Option<u32>>,
    /// Each state's first child ([`NONE`]: none).
    first: Vec<u32>,
    /// Each state's next sibling ([`NONE`]: none).
    sibling: Vec<u32>,
    /// The class of the byte that leads to each state (0 for the root).
    class: Vec<u8>,
}

impl Trie {
    /// The trie of `words` over `classes`; `None` when its states do not fit 32 bits.
    fn new<W: AsRef<[u8]>>(words: &[W], classes: &[u8; 256]) -> Option<Trie> {
        let mut trie = Trie {
            own: vec![None],
            first: vec![NONE],
            sibling: vec![NONE],
            class: vec![0],
        };
        for (id, w) in words.iter().enumerate() {
            let mut s = 0u32;
            for &b in w.as_ref() {
                let class = classes[usize::from(b)];
                s = match trie.child(s, class) {
                    Some(t) => t,
                    None => {
                        let t = u32::try_from(trie.own.len()).ok().filter(|&t| t != NONE)?;
                        trie.own.push(None);
                        trie.first.push(NONE);
                        trie.sibling.push(trie.first[s as usize]);
                        trie.class.push(class);
                        trie.first[s as usize] = t;
                        t
                    }
                };
            }
            if trie.own[s as usize].is_none() {
                trie.own[s as usize] = Some(u32::try_from(id).ok()?);
            }
        }
        Some(trie)
    }

    /// The children of `s`: (class, state).
    fn children(&self, s: u32) -> impl Iterator<Item = (u8, u32)> + '_ {
        let mut next = self.first[s as usize];
        std::iter::from_fn(move || {
            let t = next;
            if t == NONE {
                return None;
            }
            next = self.sibling[t as usize];
            Some((self.class[t as usize], t))
        })
    }

    /// The child of `s` by `class`.
    fn child(&self, s: u32, class: u8) -> Option<u32> {
        self.children(s).find(|&(c, _)| c == class).map(|(_, t)| t)
    }

    /// Where the automaton goes from `s` on `class`: the child, else the failure state's
    /// transition, down to the root (`fail` is complete for every state shallower than the
    /// one being linked).
    fn goto(&self, fail: &[u32], mut s: u32, class: u8) -> u32 {
        loop {
            if let Some(t) = self.child(s, class) {
                return t;
            }
            if s == 0 {
                return 0;
            }
            s = fail[s as usize];
        }
    }
}

#[cfg(test)]
pub(super) mod reference {
    //! aho-corasick's overlapping search, which [`Dfa`] must match word for word.
    use super::Found;
    use aho_corasick::{AhoCorasickBuilder, MatchKind};

    /// Every occurrence of a word of `words` in `hay`, by aho-corasick's overlapping search
    /// (ASCII case-insensitive, standard semantics).
    pub fn find<W: AsRef<[u8]>>(words: &[W], hay: &[u8]) -> Vec<Found> {
        let ac = AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .build(words)
            .unwrap_or_else(|e| panic!("{e}"));
        ac.find_overlapping_iter(hay)
            .map(|m| Found {
                trigger: m.pattern().as_usize(),
                start: m.start(),
                end: m.end(),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(list: &[&str]) -> Vec<String> {
        list.iter().map(|w| w.to_ascii_lowercase()).collect()
    }

    fn by_dfa(dfa: &Dfa, hay: &[u8]) -> Vec<Found> {
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
        assert_eq!(dfa.trans.len() % (1 << SHIFT), 0);
        for &s in dfa.trans.iter() {
            assert!(((usize::from(s) + 1) << SHIFT) <= dfa.trans.len());
        }
        assert!((dfa.matching as usize) << SHIFT <= dfa.trans.len());
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
            let want = reference::find(&w, text);
            assert_eq!(by_dfa(&dfa, text), want);
            matches += want.len();
        }
        assert!(matches > 1000, "{matches}");
    }

    proptest::proptest! {
        /// On words over a small alphabet, where words are each other's prefixes and suffixes
        /// and failure chains are long, the automaton finds what aho-corasick finds, in its
        /// order, in texts long enough to be walked as four stretches.
        #[test]
        fn random_words_find_what_aho_corasick_finds(
            list in proptest::collection::vec("[abAB\\xff]{1,6}", 1..24),
            text in "[abAB\\xff\n]{0,40}",
            copies in 1usize..80,
        ) {
            // Distinct lowercase words, as the automaton is given them.
            let mut w: Vec<Vec<u8>> = Vec::new();
            for x in &list {
                let x = x.to_ascii_lowercase().into_bytes();
                if !w.contains(&x) {
                    w.push(x);
                }
            }
            let Some(dfa) = Dfa::new(&w) else {
                panic!("no DFA")
            };
            let text = text.repeat(copies).into_bytes();
            proptest::prop_assert_eq!(by_dfa(&dfa, &text), reference::find(&w, &text));
        }
    }

    /// A word with a line break gets no DFA (the stretches would miss it).
    #[test]
    fn a_word_with_a_line_break_gets_no_automaton() {
        assert!(Dfa::new(&words(&["a\nb"])).is_none());
        assert!(Dfa::new(&words(&["a", ""])).is_none());
    }

    /// Words of more byte classes than a row holds, or of more states than the table holds,
    /// get no DFA rather than a walk that reads the wrong rows; one class fewer or a few states
    /// fewer do.
    #[test]
    fn words_beyond_the_table_get_no_automaton() {
        // 127 bytes that are not letters (each a class of its own), and the class of every
        // other byte: 128.
        let bytes: Vec<u8> = (0x80..=0xFE).collect();
        assert!(Dfa::new(std::slice::from_ref(&bytes)).is_some());
        let mut more = bytes;
        more.push(0xFF);
        assert!(Dfa::new(&[more]).is_none());
        // Hexadecimal numerals: every prefix of one is one, so the states are the root and
        // one per numeral (counted here as the trie's distinct prefixes).
        let fits: Vec<Vec<u8>> = (0..4095u32)
            .map(|i| format!("{i:x}").into_bytes())
            .collect();
        let states = |w: &[Vec<u8>]| {
            let mut prefixes: Vec<&[u8]> = w
                .iter()
                .flat_map(|x| (1..=x.len()).map(move |n| &x[..n]))
                .collect();
            prefixes.sort_unstable();
            prefixes.dedup();
            prefixes.len() + 1
        };
        assert!(states(&fits) <= TABLE >> SHIFT);
        assert!(Dfa::new(&fits).is_some());
        let over: Vec<Vec<u8>> = (0..5000u32)
            .map(|i| format!("{i:x}").into_bytes())
            .collect();
        assert!(states(&over) > TABLE >> SHIFT);
        assert!(Dfa::new(&over).is_none());
    }
}
