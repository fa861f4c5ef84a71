//! The interface strings of the site, from the project's own catalogs in `templates/i18n/`.

use std::collections::BTreeMap;

/// The catalogs compiled in: language code and JSON text.
const CATALOGS: &[(&str, &str)] = &[
    ("en", include_str!("../templates/i18n/en.json")),
    ("ja", include_str!("../templates/i18n/ja.json")),
    ("zh", include_str!("../templates/i18n/zh.json")),
];

/// The interface strings of one language; `{name}` marks a placeholder.
#[derive(Debug, Clone)]
pub struct Catalog {
    /// The language code.
    pub lang: String,
    strings: BTreeMap<String, String>,
    fallback: BTreeMap<String, String>,
}

fn parse(json: &str) -> BTreeMap<String, String> {
    // The catalogs are compiled in and checked by a test, so a parse failure cannot reach users.
    serde_json::from_str(json).unwrap_or_default()
}

/// The compiled-in catalogs, parsed once per process.
fn parsed() -> &'static [(&'static str, BTreeMap<String, String>)] {
    static PARSED: std::sync::OnceLock<Vec<(&'static str, BTreeMap<String, String>)>> =
        std::sync::OnceLock::new();
    PARSED.get_or_init(|| CATALOGS.iter().map(|(l, j)| (*l, parse(j))).collect())
}

impl Catalog {
    /// The catalog for `lang`; a language without one gets English strings.
    pub fn for_lang(lang: &str) -> Catalog {
        let find = |l: &str| parsed().iter().find(|(c, _)| *c == l).map(|(_, m)| m.clone());
        let fallback = find("en").unwrap_or_default();
        let strings = find(lang).unwrap_or_else(|| fallback.clone());
        Catalog { lang: lang.to_owned(), strings, fallback }
    }

    /// The name of `lang` in that language (`日本語`), without building a catalog.
    pub fn lang_name(lang: &str) -> String {
        let find = |l: &str| {
            parsed().iter().find(|(c, _)| *c == l).and_then(|(_, m)| m.get("lang_name")).cloned()
        };
        find(lang).or_else(|| find("en")).unwrap_or_else(|| lang.to_owned())
    }

    /// The languages that have a catalog.
    pub fn languages() -> Vec<&'static str> {
        CATALOGS.iter().map(|(l, _)| *l).collect()
    }

    /// Every key of the English catalog, the reference set.
    pub fn keys() -> Vec<String> {
        Catalog::for_lang("en").fallback.into_keys().collect()
    }

    /// True when this language's own catalog has `key`.
    pub fn has(&self, key: &str) -> bool {
        self.strings.contains_key(key)
    }

    /// The string for `key`, English when this catalog lacks it, the key itself when both do.
    pub fn get<'a>(&'a self, key: &'a str) -> &'a str {
        self.strings.get(key).or_else(|| self.fallback.get(key)).map_or(key, String::as_str)
    }

    /// The string for `key` with `{name}` placeholders filled in.
    pub fn fill(&self, key: &str, args: &[(&str, &str)]) -> String {
        let mut out = self.get(key).to_owned();
        for (name, value) in args {
            out = out.replace(&format!("{{{name}}}"), value);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_catalog_has_every_key() {
        for (lang, json) in CATALOGS {
            let parsed: Result<BTreeMap<String, String>, _> = serde_json::from_str(json);
            assert!(parsed.is_ok(), "catalog '{lang}' is not a JSON object of strings");
            let cat = Catalog::for_lang(lang);
            for key in Catalog::keys() {
                assert!(cat.has(&key), "catalog '{lang}' lacks '{key}'");
            }
        }
    }

    #[test]
    fn placeholders_are_filled() {
        let cat = Catalog::for_lang("en");
        assert_eq!(cat.fill("badge_max", &[("n", "128 B")]), "max 128 B");
    }
}
