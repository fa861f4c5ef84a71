//! The prebuilt search index of one edition, written as a script so it loads from `file://`.

use std::collections::BTreeMap;

use crate::i18n::Catalog;

/// The prebuilt search index of one edition.
#[derive(Default)]
pub(super) struct SearchIndex {
    entries: Vec<(String, String, String, String)>,
}

impl SearchIndex {
    pub(super) fn push(&mut self, kind: &str, title: &str, url: &str, text: &str) {
        // The whole text is indexed (a translation's own words may come late in a section);
        // the results list shows its start.
        let text: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
        self.entries.push((kind.to_owned(), title.to_owned(), url.to_owned(), text));
    }

    /// A script that sets `window.CSIKIT_SEARCH`, so the index loads from `file://` too.
    pub(super) fn to_js(&self, cat: &Catalog) -> String {
        let kinds: BTreeMap<&str, &str> = ["section", "rpc", "message", "enum", "field", "value"]
            .iter()
            .map(|k| {
                (
                    *k,
                    cat.get(match *k {
                        "section" => "kind_section",
                        "rpc" => "kind_rpc",
                        "message" => "kind_message",
                        "enum" => "kind_enum",
                        "field" => "kind_field",
                        _ => "kind_value",
                    }),
                )
            })
            .collect();
        let value = serde_json::json!({ "kinds": kinds, "entries": self.entries });
        format!("window.CSIKIT_SEARCH = {value};\n")
    }
}
