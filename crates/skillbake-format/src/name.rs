//! Skill names as runtimes compare them: DB-GPT finds `PDF-Tools` when asked for `pdf-tools`
//! (`name.lower() == request.lower()`), so the registry indexes every name by its lower-case
//! form and the compiler refuses two names with the same form.

use std::borrow::Cow;

/// The form two names are compared in: Unicode lower case, as Python's `str.lower()`.
pub fn fold(name: &str) -> Cow<'_, str> {
    if name.chars().any(|c| c.is_uppercase() || !c.is_ascii()) {
        Cow::Owned(name.to_lowercase())
    } else {
        Cow::Borrowed(name)
    }
}

#[cfg(test)]
mod tests {
    use super::fold;

    #[test]
    fn folds_like_python_lower() {
        assert_eq!(fold("pdf-tools"), "pdf-tools");
        assert_eq!(fold("PDF-Tools"), "pdf-tools");
        assert_eq!(fold("ÄÖ-Übung"), "äö-übung");
        assert!(matches!(fold("plain-name"), std::borrow::Cow::Borrowed(_)));
    }
}
