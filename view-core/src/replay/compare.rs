//! A replayed response beside the recorded one, ignoring what legitimately differs between two
//! runs of a plugin:
//!
//! - values the spec says the plugin generates (the facts' `plugin_generated`: ids, page
//!   tokens, the node id) are paired by [`IdMap::learn`] where the two responses hold them at the
//!   same field path, and every string of the recorded response is then read through the map, so
//!   a volume id that came back as another one, wherever it is repeated (`ListVolumes`,
//!   `Snapshot.source_volume_id`, a `publish_context` value), is not a difference;
//! - `google.protobuf.Timestamp` values are read from the plugin's clock: two runs never agree,
//!   so only whether one is set is compared. This is replay's own judgement on a type, not a fact
//!   the spec states, so it lives here rather than in the facts;
//! - lists holding the same elements in another order are the same (the spec orders no list of a
//!   response, and ids that came back in another order sort differently).
//!
//! Everything else that differs is a difference, shown with its field path and both values,
//! secret values hidden.

use prost_reflect::{DynamicMessage, MapKey, ReflectMessage, Value};
use serde::Serialize;

use crate::diff::{encode_unknown, join, show_value};
use crate::replay::ids::IdMap;
use crate::schema::Schema;
use crate::validate::show_key;

/// The message type whose values come from the plugin's clock.
const TIMESTAMP: &str = "google.protobuf.Timestamp";

/// One difference that matters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Difference {
    /// The field path, `volume.capacity_bytes`, `entries[2].volume.volume_id`.
    pub path: String,
    /// The recorded value as shown (secrets hidden), `(not set)` when it was not set.
    pub recorded: String,
    /// The replayed value as shown.
    pub replayed: String,
}

impl std::fmt::Display for Difference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {} -> {}", self.path, self.recorded, self.replayed)
    }
}

/// What comparing two responses found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Comparison {
    /// The differences that matter.
    pub differences: Vec<Difference>,
    /// Values that differed but are generated ones the map follows.
    pub mapped: usize,
    /// Values left uncompared (timestamps).
    pub ignored: usize,
}

/// How an unset value is shown.
const NOT_SET: &str = "(not set)";

/// Compares the replayed response with the recorded one (both of one type), learning the
/// generated values first, so a response that names its own new id elsewhere reads through it.
pub fn compare(
    schema: &Schema,
    ids: &mut IdMap,
    recorded: &DynamicMessage,
    replayed: &DynamicMessage,
) -> Comparison {
    learn(schema, ids, recorded, replayed);
    let mut c = Comparer { schema, ids, out: Comparison::default() };
    c.message(recorded, replayed, "", false);
    c.out
}

/// Pairs the generated values the two responses hold at the same field path.
fn learn(schema: &Schema, ids: &mut IdMap, a: &DynamicMessage, b: &DynamicMessage) {
    for field in a.descriptor().fields() {
        if !a.has_field(&field) || !b.has_field(&field) {
            continue;
        }
        let generated = schema.field_facts(&field).plugin_generated;
        learn_value(schema, ids, &a.get_field(&field), &b.get_field(&field), generated);
    }
}

fn learn_value(schema: &Schema, ids: &mut IdMap, a: &Value, b: &Value, generated: bool) {
    match (a, b) {
        (Value::String(x), Value::String(y)) if generated => {
            ids.learn(x, y);
        }
        (Value::Message(x), Value::Message(y)) => learn(schema, ids, x, y),
        (Value::List(x), Value::List(y)) => {
            for (u, v) in x.iter().zip(y) {
                learn_value(schema, ids, u, v, generated);
            }
        }
        (Value::Map(x), Value::Map(y)) => {
            for (k, u) in x {
                if let Some(v) = y.get(k) {
                    learn_value(schema, ids, u, v, generated);
                }
            }
        }
        _ => {}
    }
}

struct Comparer<'a> {
    schema: &'a Schema,
    ids: &'a IdMap,
    out: Comparison,
}

impl Comparer<'_> {
    fn push(&mut self, path: String, recorded: String, replayed: String) {
        self.out.differences.push(Difference { path, recorded, replayed });
    }

    fn show(&self, v: &Value, secret: bool) -> String {
        show_value(self.schema, v, secret, false)
    }

    fn message(&mut self, a: &DynamicMessage, b: &DynamicMessage, path: &str, secret: bool) {
        if a.descriptor().full_name() == TIMESTAMP {
            self.out.ignored += 1;
            return;
        }
        for field in a.descriptor().fields() {
            let p = join(path, field.name());
            let secret = secret || self.schema.is_secret(&field);
            let u = a.has_field(&field).then(|| a.get_field(&field));
            let v = b.has_field(&field).then(|| b.get_field(&field));
            self.element(u.as_deref(), v.as_deref(), p, secret);
        }
        let ua: Vec<Vec<u8>> = a.unknown_fields().map(encode_unknown).collect();
        let ub: Vec<Vec<u8>> = b.unknown_fields().map(encode_unknown).collect();
        if ua != ub {
            let p = join(path, "<unknown fields>");
            self.push(p, format!("{} records", ua.len()), format!("{} records", ub.len()));
        }
    }

    fn value(&mut self, a: &Value, b: &Value, path: &str, secret: bool) {
        match (a, b) {
            (Value::String(x), Value::String(y)) => {
                let expected = self.ids.map(x);
                if expected == y {
                    self.out.mapped += usize::from(x != y);
                } else if secret {
                    self.push(
                        path.to_owned(),
                        self.show(a, true),
                        format!("{} (differs)", self.show(b, true)),
                    );
                } else {
                    let recorded = match self.ids.get(x) {
                        Some(m) if m != x => format!("{x:?} (replayed as {m:?})"),
                        _ => format!("{x:?}"),
                    };
                    self.push(path.to_owned(), recorded, format!("{y:?}"));
                }
            }
            (Value::Message(x), Value::Message(y)) => self.message(x, y, path, secret),
            (Value::List(x), Value::List(y)) => self.list(x, y, path, secret),
            (Value::Map(x), Value::Map(y)) => self.map(x, y, path, secret),
            _ if a == b => {}
            _ => {
                let (ra, rb) = (self.show(a, secret), self.show(b, secret));
                let rb = if secret { format!("{rb} (differs)") } else { rb };
                self.push(path.to_owned(), ra, rb);
            }
        }
    }

    /// A comparison of two values on its own, counted into this one only when used.
    fn apart(&self, a: &Value, b: &Value, secret: bool) -> Comparison {
        let mut c = Comparer { schema: self.schema, ids: self.ids, out: Comparison::default() };
        c.value(a, b, "", secret);
        c.out
    }

    fn absorb(&mut self, c: Comparison) {
        self.out.mapped += c.mapped;
        self.out.ignored += c.ignored;
    }

    fn list(&mut self, x: &[Value], y: &[Value], path: &str, secret: bool) {
        if x.len() == y.len() {
            // In order, or else the same elements in another order.
            let in_order: Vec<Comparison> =
                x.iter().zip(y).map(|(u, v)| self.apart(u, v, secret)).collect();
            if in_order.iter().all(|c| c.differences.is_empty()) {
                in_order.into_iter().for_each(|c| self.absorb(c));
                return;
            }
            if let Some(matched) = self.matching(x, y, secret) {
                matched.into_iter().for_each(|c| self.absorb(c));
                return;
            }
        }
        for i in 0..x.len().max(y.len()) {
            self.element(x.get(i), y.get(i), format!("{path}[{i}]"), secret);
        }
    }

    /// A field's value, a list element or a map entry, on either side or both.
    fn element(&mut self, a: Option<&Value>, b: Option<&Value>, path: String, secret: bool) {
        match (a, b) {
            (Some(u), Some(v)) => self.value(u, v, &path, secret),
            (Some(u), None) => {
                let s = self.show(u, secret);
                self.push(path, s, NOT_SET.into());
            }
            (None, Some(v)) => {
                let s = self.show(v, secret);
                self.push(path, NOT_SET.into(), s);
            }
            (None, None) => {}
        }
    }

    /// Each recorded element paired with a distinct replayed one it equals, if there is such a
    /// pairing (found greedily: equality under the map is an equivalence).
    fn matching(&self, x: &[Value], y: &[Value], secret: bool) -> Option<Vec<Comparison>> {
        let mut used = vec![false; y.len()];
        let mut out = Vec::with_capacity(x.len());
        for u in x {
            let (j, c) = y.iter().enumerate().filter(|(j, _)| !used[*j]).find_map(|(j, v)| {
                let c = self.apart(u, v, secret);
                c.differences.is_empty().then_some((j, c))
            })?;
            used[j] = true;
            out.push(c);
        }
        Some(out)
    }

    fn map(
        &mut self,
        x: &std::collections::HashMap<MapKey, Value>,
        y: &std::collections::HashMap<MapKey, Value>,
        path: &str,
        secret: bool,
    ) {
        // Keys that are generated values read through the map like any other string.
        let mapped_key = |k: &MapKey| match k {
            MapKey::String(s) => MapKey::String(self.ids.map(s).to_owned()),
            other => other.clone(),
        };
        // Each recorded key with the key it stands for, then the replayed keys none stands for.
        let mut keys: Vec<(Option<&MapKey>, MapKey)> =
            x.keys().map(|k| (Some(k), mapped_key(k))).collect();
        for k in y.keys() {
            if !keys.iter().any(|(_, m)| m == k) {
                keys.push((None, k.clone()));
            }
        }
        keys.sort_by(|a, b| a.1.cmp(&b.1));
        for (k, m) in keys {
            let p = format!("{path}[{}]", show_key(&m));
            self.element(k.and_then(|k| x.get(k)), y.get(&m), p, secret);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use csikit::v1::{
        CreateVolumeResponse, ListVolumesResponse, NodeGetInfoResponse, Snapshot, Volume,
        list_volumes_response::Entry,
    };

    fn dynamic<M: prost::Message + prost::Name>(schema: &Schema, m: &M) -> DynamicMessage {
        let desc = schema.find_message(&M::full_name()).expect("known type");
        DynamicMessage::decode(desc, m.encode_to_vec().as_slice()).expect("decodes")
    }

    fn volume(id: &str, bytes: i64) -> Volume {
        Volume { volume_id: id.into(), capacity_bytes: bytes, ..Default::default() }
    }

    fn created(id: &str, bytes: i64) -> CreateVolumeResponse {
        CreateVolumeResponse { volume: Some(volume(id, bytes)) }
    }

    #[test]
    fn a_new_volume_id_is_mapped_and_followed() {
        let schema = Schema::builtin().expect("schema");
        let mut ids = IdMap::default();
        let c = compare(
            &schema,
            &mut ids,
            &dynamic(&schema, &created("vol-1", 10)),
            &dynamic(&schema, &created("vol-9", 10)),
        );
        assert_eq!(c.differences, []);
        assert_eq!(c.mapped, 1);
        assert_eq!(ids.map("vol-1"), "vol-9");
        // Later, a list naming it by its new id is the same; another capacity is not.
        let list = |id: &str, bytes| ListVolumesResponse {
            entries: vec![Entry { volume: Some(volume(id, bytes)), status: None }],
            next_token: String::new(),
        };
        let c = compare(
            &schema,
            &mut ids,
            &dynamic(&schema, &list("vol-1", 10)),
            &dynamic(&schema, &list("vol-9", 10)),
        );
        assert_eq!(c.differences, []);
        let c = compare(
            &schema,
            &mut ids,
            &dynamic(&schema, &list("vol-1", 10)),
            &dynamic(&schema, &list("vol-9", 11)),
        );
        assert_eq!(
            c.differences,
            [Difference {
                path: "entries[0].volume.capacity_bytes".into(),
                recorded: "10".into(),
                replayed: "11".into()
            }]
        );
    }

    #[test]
    fn an_idempotent_retry_answered_with_another_id_differs() {
        let schema = Schema::builtin().expect("schema");
        let mut ids = IdMap::default();
        let first = compare(
            &schema,
            &mut ids,
            &dynamic(&schema, &created("vol-1", 1)),
            &dynamic(&schema, &created("vol-9", 1)),
        );
        assert!(first.differences.is_empty());
        let retry = compare(
            &schema,
            &mut ids,
            &dynamic(&schema, &created("vol-1", 1)),
            &dynamic(&schema, &created("vol-10", 1)),
        );
        assert_eq!(retry.differences.len(), 1, "{:?}", retry.differences);
        assert_eq!(retry.differences[0].path, "volume.volume_id");
        assert_eq!(retry.differences[0].recorded, "\"vol-1\" (replayed as \"vol-9\")");
        // Two recorded volumes answered with one id.
        let other = compare(
            &schema,
            &mut ids,
            &dynamic(&schema, &created("vol-2", 1)),
            &dynamic(&schema, &created("vol-9", 1)),
        );
        assert_eq!(other.differences.len(), 1);
    }

    #[test]
    fn a_string_the_plugin_does_not_generate_is_compared_as_it_is() {
        let schema = Schema::builtin().expect("schema");
        let mut ids = IdMap::default();
        // `source_volume_id` is not generated by the plugin: an unknown value that differs is a
        // difference, one the map knows reads through it.
        let snap = |id: &str, src: &str| csikit::v1::CreateSnapshotResponse {
            snapshot: Some(Snapshot {
                snapshot_id: id.into(),
                source_volume_id: src.into(),
                creation_time: Some(prost_types::Timestamp { seconds: 5, nanos: 1 }),
                ..Default::default()
            }),
        };
        let c = compare(
            &schema,
            &mut ids,
            &dynamic(&schema, &snap("s-1", "vol-1")),
            &dynamic(&schema, &snap("s-2", "vol-2")),
        );
        assert_eq!(c.differences.len(), 1);
        assert_eq!(c.differences[0].path, "snapshot.source_volume_id");
        ids.learn("vol-1", "vol-2");
        let c = compare(
            &schema,
            &mut ids,
            &dynamic(&schema, &snap("s-1", "vol-1")),
            &dynamic(&schema, &snap("s-2", "vol-2")),
        );
        assert_eq!(c.differences, []);
    }

    #[test]
    fn timestamps_are_not_compared_but_their_absence_is() {
        let schema = Schema::builtin().expect("schema");
        let mut ids = IdMap::default();
        let snap = |t: Option<prost_types::Timestamp>| csikit::v1::CreateSnapshotResponse {
            snapshot: Some(Snapshot {
                snapshot_id: "s".into(),
                source_volume_id: "v".into(),
                creation_time: t,
                ready_to_use: true,
                ..Default::default()
            }),
        };
        let at = |s| Some(prost_types::Timestamp { seconds: s, nanos: 0 });
        let c = compare(
            &schema,
            &mut ids,
            &dynamic(&schema, &snap(at(1))),
            &dynamic(&schema, &snap(at(2))),
        );
        assert_eq!((c.differences.len(), c.ignored), (0, 1));
        let c = compare(
            &schema,
            &mut ids,
            &dynamic(&schema, &snap(at(1))),
            &dynamic(&schema, &snap(None)),
        );
        assert_eq!(c.differences.len(), 1);
        assert_eq!(c.differences[0].path, "snapshot.creation_time");
        assert_eq!(c.differences[0].replayed, NOT_SET);
    }

    #[test]
    fn the_same_entries_in_another_order_are_the_same() {
        let schema = Schema::builtin().expect("schema");
        let mut ids = IdMap::default();
        ids.learn("vol-1", "vol-2");
        ids.learn("vol-2", "vol-1");
        let list = |a: &str, b: &str| ListVolumesResponse {
            entries: [a, b]
                .iter()
                .map(|id| Entry { volume: Some(volume(id, 1)), status: None })
                .collect(),
            next_token: String::new(),
        };
        let c = compare(
            &schema,
            &mut ids,
            &dynamic(&schema, &list("vol-1", "vol-2")),
            &dynamic(&schema, &list("vol-1", "vol-2")),
        );
        assert_eq!(c.differences, []);
        let c = compare(
            &schema,
            &mut ids,
            &dynamic(&schema, &list("vol-1", "vol-2")),
            &dynamic(&schema, &list("vol-1", "vol-3")),
        );
        assert!(!c.differences.is_empty());
    }

    #[test]
    fn a_node_id_is_mapped_and_a_missing_next_token_is_a_difference() {
        let schema = Schema::builtin().expect("schema");
        let mut ids = IdMap::default();
        let info = |id: &str| NodeGetInfoResponse { node_id: id.into(), ..Default::default() };
        let c = compare(
            &schema,
            &mut ids,
            &dynamic(&schema, &info("node-recorded")),
            &dynamic(&schema, &info("here")),
        );
        assert_eq!((c.differences.len(), c.mapped), (0, 1));
        let page = |token: &str| ListVolumesResponse { entries: vec![], next_token: token.into() };
        let c = compare(
            &schema,
            &mut ids,
            &dynamic(&schema, &page("vol-5")),
            &dynamic(&schema, &page("")),
        );
        assert_eq!(c.differences.len(), 1);
        assert_eq!(c.differences[0].path, "next_token");
    }

    #[test]
    fn secret_values_are_never_shown() {
        let schema = Schema::builtin().expect("schema");
        let mut ids = IdMap::default();
        // A request type holds secrets; comparing two of them shows the path only.
        let req = |v: &str| csikit::v1::NodeStageVolumeRequest {
            volume_id: "v".into(),
            secrets: [("password".to_owned(), v.to_owned())].into(),
            ..Default::default()
        };
        let c = compare(
            &schema,
            &mut ids,
            &dynamic(&schema, &req("hunter2")),
            &dynamic(&schema, &req("swordfish")),
        );
        assert_eq!(c.differences.len(), 1);
        let shown = format!("{}", c.differences[0]);
        assert!(!shown.contains("hunter2") && !shown.contains("swordfish"), "{shown}");
        assert!(shown.starts_with("secrets[\"password\"]"), "{shown}");
    }
}
