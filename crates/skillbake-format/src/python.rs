//! Small facts about Python that DB-GPT's replies depend on: `str.strip()`'s whitespace and how
//! `repr(float)` (and so `json.dumps`) writes a float.

/// Python's `str.isspace()`: Unicode White_Space plus the information separators U+001C–U+001F.
pub fn is_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Python's `s.strip()`.
pub fn strip(s: &str) -> &str {
    s.trim_matches(is_space)
}

/// A float as Python's `json.dumps` writes it: `repr(x)` (shortest round-trip digits, exponent
/// form below 1e-4 and from 1e16 on, `.0` on integral values), and `NaN`, `Infinity`,
/// `-Infinity` for the non-finite values.
pub fn float_repr(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    // `{:e}` gives the shortest digits that round-trip (`1.2345e-5`). Of the strings with that
    // many digits Python picks the one nearest to the exact value, ties to even: the exactly
    // rounded form, whenever it round-trips too.
    let shortest = format!("{:e}", x.abs());
    let n = shortest
        .split('e')
        .next()
        .map_or(1, |m| m.chars().filter(char::is_ascii_digit).count());
    let nearest = format!("{:.*e}", n.saturating_sub(1), x.abs());
    let sci = if nearest.parse::<f64>() == Ok(x.abs()) {
        nearest
    } else {
        shortest
    };
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let mut out = String::with_capacity(digits.len() + 8);
    if x.is_sign_negative() {
        out.push('-');
    }
    if !(-5 < exp && exp < 16) {
        let (first, rest) = digits.split_at(1.min(digits.len()));
        out.push_str(first);
        if !rest.is_empty() {
            out.push('.');
            out.push_str(rest);
        }
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        out.push_str(&format!("{:02}", exp.unsigned_abs()));
        return out;
    }
    let point = exp + 1; // digits before the decimal point (may be <= 0)
    if point <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', point.unsigned_abs() as usize));
        out.push_str(&digits);
    } else {
        let point = point as usize;
        if digits.len() <= point {
            out.push_str(&digits);
            out.extend(std::iter::repeat_n('0', point - digits.len()));
            out.push_str(".0");
        } else {
            let (int, frac) = digits.split_at(point);
            out.push_str(int);
            out.push('.');
            out.push_str(frac);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    // The literals are the inputs Python was asked about, digit for digit.
    #[allow(clippy::approx_constant, clippy::excessive_precision)]
    fn floats_print_as_python_repr() {
        for (x, py) in [
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1.0, "1.0"),
            (1.5, "1.5"),
            (-2.25, "-2.25"),
            (100000.0, "100000.0"),
            (1e15, "1000000000000000.0"),
            (1e16, "1e+16"),
            (1.5e16, "1.5e+16"),
            (123456789012345680.0, "1.2345678901234568e+17"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (0.000123, "0.000123"),
            (1.23e-5, "1.23e-05"),
            (0.1, "0.1"),
            (0.30000000000000004, "0.30000000000000004"),
            (1e300, "1e+300"),
            (5e-324, "5e-324"),
            (f64::MAX, "1.7976931348623157e+308"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
            (3.125, "3.125"),
            (803.2857, "803.2857"),
            // Exactly between two 17-digit strings: Python rounds to even.
            (1_956_804_946_285_949.0 / 8.0, "244600618285743.62"),
            (2_867_648_174_058_417.0 / 4.0, "716912043514604.2"),
        ] {
            assert_eq!(float_repr(x), py, "{x:?}");
        }
    }

    #[test]
    fn strip_is_pythons() {
        assert_eq!(strip("\u{1c} \t a b \u{2028}\u{3000}\n"), "a b");
        assert_eq!(strip("\u{200b}x"), "\u{200b}x");
        assert!(is_space('\u{85}') && !is_space('\u{200b}'));
    }
}
