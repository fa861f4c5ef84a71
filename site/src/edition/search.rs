//! The prebuilt search index of one edition, written as a script so it loads from `file://`.
//!
//! Entries are arrays, to keep the file small: `[kind, title, url, text]` for a section, RPC,
//! message, enum, field or value; `["error", condition, url, description, rpc, code, number]`
//! for an error-table row (`rpc` empty for the general error table), so the page's script can
//! match a code or an RPC name exactly rather than somewhere in a text. A section or row whose
//! text is carried from an older release has that release's name last (`[..., "v1.12.0"]`),
//! which the results show.

use serde_json::{Value, json};

use crate::i18n::Catalog;

/// The kinds of entries, with the catalog key of their label.
const KINDS: &[(&str, &str)] = &[
    ("section", "kind_section"),
    ("rpc", "kind_rpc"),
    ("message", "kind_message"),
    ("enum", "kind_enum"),
    ("field", "kind_field"),
    ("value", "kind_value"),
    ("error", "kind_error"),
];

/// An error-table row as its table shows it, for the index.
pub(super) struct ErrorEntry {
    /// The RPC whose table it is; empty for the general error table.
    pub owner: String,
    /// The gRPC code name, as the spec writes it.
    pub code: String,
    /// The gRPC code number, as the spec writes it.
    pub number: i32,
    /// The condition's plain text.
    pub condition: String,
    /// The row on its page, relative to the edition folder.
    pub url: String,
    /// The description's plain text.
    pub description: String,
    /// The release the row is carried from, if it is.
    pub carried_from: Option<String>,
}

/// The prebuilt search index of one edition.
#[derive(Default)]
pub(super) struct SearchIndex {
    entries: Vec<Value>,
}

impl SearchIndex {
    pub(super) fn push(&mut self, kind: &str, title: &str, url: &str, text: &str) {
        // The whole text is indexed (a translation's own words may come late in a section);
        // the results list shows its start.
        let text: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
        self.entries.push(json!([kind, title, url, text]));
    }

    /// A section of the spec's prose, `carried_from` the release its text comes from if it is
    /// carried.
    pub(super) fn push_section(
        &mut self,
        title: &str,
        url: &str,
        text: &str,
        carried_from: Option<&str>,
    ) {
        self.push("section", title, url, text);
        if let (Some(from), Some(Value::Array(entry))) = (carried_from, self.entries.last_mut()) {
            entry.push(Value::from(from));
        }
    }

    pub(super) fn push_error(&mut self, e: ErrorEntry) {
        let mut entry =
            vec![json!("error"), json!(e.condition), json!(e.url), json!(e.description)];
        entry.extend([json!(e.owner), json!(e.code), json!(e.number)]);
        entry.extend(e.carried_from.map(Value::from));
        self.entries.push(Value::Array(entry));
    }

    /// A script that sets `window.CSIKIT_SEARCH`, so the index loads from `file://` too.
    pub(super) fn to_js(&self, cat: &Catalog) -> String {
        let kinds: serde_json::Map<String, Value> =
            KINDS.iter().map(|(k, key)| ((*k).to_owned(), Value::from(cat.get(key)))).collect();
        let value = json!({
            "kinds": kinds,
            "general": cat.get("search_error_general"),
            "carried": cat.get("search_carried"),
            "entries": self.entries,
        });
        format!("window.CSIKIT_SEARCH = {value};\n")
    }
}
