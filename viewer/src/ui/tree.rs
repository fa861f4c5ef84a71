//! The trees the page draws: a message's fields as display values (the caller hides secrets
//! first), each annotated with the spec's facts and documentation, and marked missing exactly
//! where the validation reports a REQUIRED field unset, so the tree and the rules never disagree.
//!
//! A document or a response shows the fields that are set (and the missing ones); a request
//! being composed shows every field, with what the page can add: a message field to set, a oneof
//! member to choose, an element or a map entry to add, and for `*_id` strings the ids earlier
//! responses carried.

use std::collections::HashSet;

use prost_reflect::{
    DynamicMessage, FieldDescriptor, Kind, MapKey, MessageDescriptor, OneofDescriptor,
    ReflectMessage, Value,
};
use serde_json::{Value as Json, json};

use csi_view_core::redact::REDACTED;
use csi_view_core::schema::Schema;

use super::ids::{SeenId, offered};

/// Which fields a tree shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    /// The set fields and the missing ones (a document, a response).
    Document,
    /// Every field, set or not, oneofs as a choice (a request being composed).
    Compose,
}

/// What a tree is drawn with.
pub(super) struct Shape<'a> {
    pub(super) schema: &'a Schema,
    pub(super) docs_url: &'a str,
    pub(super) mode: Mode,
    /// Ids seen in responses, offered for a request's `*_id` fields.
    pub(super) ids: &'a [SeenId],
}

/// A field path one step further down.
pub(super) fn join(path: &str, name: &str) -> String {
    if path.is_empty() { name.to_owned() } else { format!("{path}.{name}") }
}

impl Shape<'_> {
    /// The tree of `shown` (a copy of `real` with its secrets hidden) and the rules `real` breaks.
    pub(super) fn view(&self, real: &DynamicMessage, shown: &DynamicMessage) -> Json {
        let broken = csi_view_core::validate::validate(self.schema, real);
        // The tree marks a field missing exactly where the validation does, so the two agree.
        let missing: HashSet<&str> = broken
            .iter()
            .filter(|v| v.rule == csikit_runtime::RuleId::Required)
            .map(|v| v.path.as_str())
            .collect();
        let violations: Vec<Json> =
            broken.iter().map(|v| json!({"path": v.path, "message": v.to_string()})).collect();
        let desc = real.descriptor();
        json!({
            "type": desc.full_name(),
            "doc": self.schema.message_comment(&desc),
            "link": self.link(&desc, None),
            "fields": self.fields(shown, "", &missing),
            "violations": violations,
        })
    }

    pub(super) fn link(&self, desc: &MessageDescriptor, field: Option<&str>) -> String {
        let anchor = field.map(|f| format!("#{f}")).unwrap_or_default();
        format!("{}/en/ref/{}.html{anchor}", self.docs_url, desc.full_name())
    }

    fn fields(&self, msg: &DynamicMessage, path: &str, missing: &HashSet<&str>) -> Vec<Json> {
        let mut out = Vec::new();
        let mut oneofs = HashSet::new();
        for field in msg.descriptor().fields() {
            if self.mode == Mode::Compose
                && let Some(oneof) = field.containing_oneof().filter(|o| !o.is_synthetic())
            {
                if oneofs.insert(oneof.name().to_owned()) {
                    out.push(self.oneof(msg, &oneof, path, missing));
                }
                continue;
            }
            out.extend(self.field(msg, &field, path, missing));
        }
        out
    }

    /// A oneof of a request: its members to choose from, and the chosen one's node.
    fn oneof(
        &self,
        msg: &DynamicMessage,
        oneof: &OneofDescriptor,
        path: &str,
        missing: &HashSet<&str>,
    ) -> Json {
        let opath = join(path, oneof.name());
        let chosen = oneof.fields().find(|f| msg.has_field(f));
        let required = self
            .schema
            .message_facts(&msg.descriptor())
            .and_then(|m| m.oneofs.iter().find(|o| o.name == oneof.name()))
            .is_some_and(|o| o.required);
        json!({
            "oneof": oneof.name(),
            "path": opath,
            "members": oneof.fields().map(|f| f.name().to_owned()).collect::<Vec<_>>(),
            "chosen": chosen.as_ref().map(FieldDescriptor::name),
            "note": if required { "one of them REQUIRED" } else { "one of them, or none" },
            "missing": missing.contains(opath.as_str()),
            "field": chosen.and_then(|f| self.field(msg, &f, path, missing)),
        })
    }

    /// One field: the set ones with their values, the ones the validation found `missing`
    /// (REQUIRED and unset), the REQUIRED ones the wire cannot tell from unset (a proto3 bool or
    /// number without presence: `readonly: false`) with their zero value, and in a request the
    /// unset ones too.
    fn field(
        &self,
        msg: &DynamicMessage,
        field: &FieldDescriptor,
        path: &str,
        missing: &HashSet<&str>,
    ) -> Option<Json> {
        let facts = self.schema.field_facts(field);
        let fpath = join(path, field.name());
        let is_missing = missing.contains(fpath.as_str());
        let zero_value = facts.presence == csikit_spec::Presence::Required
            && !field.supports_presence()
            && !field.is_list()
            && !field.is_map();
        let set = msg.has_field(field) || (zero_value && !is_missing);
        let compose = self.mode == Mode::Compose;
        if !set && !is_missing && !compose {
            return None;
        }
        let desc = msg.descriptor();
        let value_kind = match field.kind() {
            Kind::Message(entry) if field.is_map() => entry.map_entry_value_field().kind(),
            k => k,
        };
        let mut node = json!({
            "name": field.name(),
            "number": field.number(),
            "path": fpath,
            "type": type_name(field),
            "label": if field.is_map() { "map" } else if field.is_list() { "repeated" } else { "singular" },
            "kind": kind_word(&value_kind),
            "note": self.schema.field_note(field, facts.secret),
            "doc": self.schema.field_comment(field),
            "link": self.link(&desc, Some(field.name())),
            "secret": facts.secret,
        });
        if let Some(values) = enum_values(&value_kind) {
            node["enum"] = values;
        }
        if compose && !facts.secret && field.kind() == Kind::String && field.name().ends_with("_id")
        {
            let offers: Vec<Json> = offered(self.ids, field.name())
                .map(|s| json!({"value": s.value, "from": format!("{} of {}", s.field, s.method)}))
                .collect();
            node["offers"] = json!(offers);
        }
        if !set {
            node[if is_missing { "missing" } else { "unset" }] = json!(true);
            node["editable"] = json!(is_scalar(&field.kind()) && !field.is_list());
            return Some(node);
        }
        match msg.get_field(field).as_ref() {
            Value::List(items) => {
                node["items"] = items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| self.value(&field.kind(), v, &format!("{fpath}[{i}]"), missing))
                    .collect();
            }
            Value::Map(map) => {
                let mut keys: Vec<&MapKey> = map.keys().collect();
                keys.sort();
                node["entries"] = keys
                    .into_iter()
                    .map(|k| {
                        let key = csi_view_core::validate::show_key(k);
                        let mut e =
                            self.value(&value_kind, &map[k], &format!("{fpath}[{key}]"), missing);
                        e["key"] = json!(key);
                        e
                    })
                    .collect();
            }
            v => {
                if let Json::Object(o) = self.value(&field.kind(), v, &fpath, missing) {
                    for (k, v) in o {
                        node[k] = v;
                    }
                }
            }
        }
        Some(node)
    }

    fn value(&self, kind: &Kind, v: &Value, path: &str, missing: &HashSet<&str>) -> Json {
        match v {
            Value::Message(m) => json!({"path": path, "fields": self.fields(m, path, missing)}),
            v => {
                let text = scalar_text(kind, v);
                let mut node = json!({
                    "path": path,
                    "value": text,
                    "redacted": text == format!("{REDACTED:?}") || text == REDACTED,
                    "editable": true,
                });
                if let Some(values) = enum_values(kind) {
                    node["enum"] = values;
                }
                node
            }
        }
    }
}

/// A field's type as the proto writes it: `map<string, string>` for a map, else the kind's name.
fn type_name(field: &FieldDescriptor) -> String {
    match field.kind() {
        Kind::Message(entry) if field.is_map() => format!(
            "map<{}, {}>",
            csi_view_core::text::kind_name(&entry.map_entry_key_field().kind()),
            csi_view_core::text::kind_name(&entry.map_entry_value_field().kind())
        ),
        k => csi_view_core::text::kind_name(&k),
    }
}

fn kind_word(kind: &Kind) -> &'static str {
    match kind {
        Kind::Message(_) => "message",
        Kind::Enum(_) => "enum",
        Kind::Bool => "bool",
        Kind::String => "string",
        Kind::Bytes => "bytes",
        _ => "number",
    }
}

/// The declared values of an enum, by name, for the page's select.
fn enum_values(kind: &Kind) -> Option<Json> {
    let Kind::Enum(e) = kind else { return None };
    Some(e.values().map(|v| v.name().to_owned()).collect())
}

pub(super) fn is_scalar(kind: &Kind) -> bool {
    !matches!(kind, Kind::Message(_))
}

/// A scalar as the page shows and edits it: enums by name, bytes in hex.
pub(super) fn scalar_text(kind: &Kind, v: &Value) -> String {
    match (kind, v) {
        (Kind::Enum(e), Value::EnumNumber(n)) => {
            e.get_value(*n).map_or_else(|| n.to_string(), |v| v.name().to_owned())
        }
        (_, Value::String(s)) => s.clone(),
        (_, Value::Bytes(b)) => match std::str::from_utf8(b) {
            Ok(s) if s == REDACTED => s.to_owned(),
            _ => data_encoding::HEXLOWER.encode(b),
        },
        (_, Value::Bool(b)) => b.to_string(),
        (_, Value::I32(n)) => n.to_string(),
        (_, Value::I64(n)) => n.to_string(),
        (_, Value::U32(n)) => n.to_string(),
        (_, Value::U64(n)) => n.to_string(),
        (_, Value::F32(n)) => n.to_string(),
        (_, Value::F64(n)) => n.to_string(),
        (_, Value::EnumNumber(n)) => n.to_string(),
        _ => String::new(),
    }
}
