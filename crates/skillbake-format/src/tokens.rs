//! A model-free estimate of how many tokens a text costs in a prompt, used by `skillbake check`
//! (the catalog's cost and `[catalog] max-tokens`) and by the runtime when it reports a catalog's
//! size.
//!
//! The estimate is `⌈A ÷ 4⌉ + C + ⌈O ÷ 2⌉`, where `A` counts ASCII characters, `C` CJK
//! characters (Han, Kana, Hangul, CJK punctuation) and `O` every other character. Four ASCII
//! characters per token is the usual figure for English text and code with the BPE vocabularies
//! of current models; a CJK character is about one token in them; other scripts and symbols fall
//! in between. It is an estimate for budgets, not a tokenizer: counts of a given model's
//! tokenizer differ by some tens of percent on unusual text.

/// The estimated number of tokens in `text` (see the module documentation).
pub fn estimate(text: &str) -> usize {
    let (mut ascii, mut cjk, mut other) = (0usize, 0usize, 0usize);
    for c in text.chars() {
        if c.is_ascii() {
            ascii += 1;
        } else if is_cjk(c) {
            cjk += 1;
        } else {
            other += 1;
        }
    }
    ascii.div_ceil(4) + cjk + other.div_ceil(2)
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3000..=0x303F | 0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF
        | 0xAC00..=0xD7AF | 0xF900..=0xFAFF | 0xFF00..=0xFFEF | 0x20000..=0x2FA1F)
}

#[cfg(test)]
mod tests {
    use super::estimate;

    #[test]
    fn counts_by_script() {
        assert_eq!(estimate(""), 0);
        assert_eq!(estimate("abcd"), 1);
        assert_eq!(estimate("abcde"), 2);
        assert_eq!(estimate("分析财报"), 4);
        assert_eq!(estimate("é"), 1);
        assert_eq!(estimate("read 财报 é"), 2 + 2 + 1);
    }
}
