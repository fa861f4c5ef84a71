//! The ids responses carry (`volume_id`, `snapshot_id`, `node_id`, ...), kept so the page can
//! offer them for the `*_id` fields of later requests: what the call part remembers and the tree
//! draws, kept apart from both so neither reaches into the other.

use prost_reflect::{DynamicMessage, Value};

use csi_view_core::schema::Schema;

/// How many ids the page keeps offering (the newest first).
const IDS_KEPT: usize = 64;

/// An id a response carried.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct SeenId {
    /// The field it was in (`volume_id`).
    pub(super) field: String,
    pub(super) value: String,
    /// The RPC that answered it (`CreateVolume`).
    pub(super) method: String,
}

/// The ids offered for a request field named `field`: those seen in a field of the same name,
/// or whose name ends in it or it in theirs after a `_` (`source_volume_id` and `volume_id`).
pub(super) fn offered<'a>(ids: &'a [SeenId], field: &'a str) -> impl Iterator<Item = &'a SeenId> {
    let ends = |long: &str, short: &str| {
        long.strip_suffix(short).is_some_and(|head| head.is_empty() || head.ends_with('_'))
    };
    ids.iter().filter(move |s| ends(&s.field, field) || ends(field, &s.field))
}

/// Puts the non-secret `*_id` strings of `response` (an answer to `method`, its simple name) at
/// the front of `kept`, each value once, and keeps the newest [`IDS_KEPT`].
pub(super) fn remember(
    kept: &mut Vec<SeenId>,
    schema: &Schema,
    method: &str,
    response: &DynamicMessage,
) {
    let mut found = Vec::new();
    collect(schema, method, response, &mut found);
    for id in found.into_iter().rev() {
        kept.retain(|s| s.value != id.value || s.field != id.field);
        kept.insert(0, id);
    }
    kept.truncate(IDS_KEPT);
}

fn collect(schema: &Schema, method: &str, msg: &DynamicMessage, out: &mut Vec<SeenId>) {
    for (field, value) in msg.fields() {
        if schema.is_secret(&field) {
            continue;
        }
        let values: Vec<&Value> = match value {
            Value::List(items) => items.iter().collect(),
            Value::Map(map) => map.values().collect(),
            v => vec![v],
        };
        for v in values {
            match v {
                Value::Message(m) => collect(schema, method, m, out),
                Value::String(s) if !s.is_empty() && field.name().ends_with("_id") => {
                    out.push(SeenId {
                        field: field.name().to_owned(),
                        value: s.clone(),
                        method: method.to_owned(),
                    });
                }
                _ => {}
            }
        }
    }
}
