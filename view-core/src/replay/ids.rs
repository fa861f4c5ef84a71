//! Values the plugin generated, followed from the recording to the replay: when a recorded
//! response held `X` in a field the spec says the plugin generates (`Volume.volume_id`, a
//! `next_token`, `NodeGetInfoResponse.node_id`: the facts' `plugin_generated`) and the replayed
//! response holds `Y` there, later requests that carried `X` send `Y`.
//!
//! The map is one to one: a recorded value follows one replayed value, and a replayed value
//! stands for one recorded value. A second pairing that would break that is not learned, so the
//! comparison shows it (a retried `CreateVolume` answered with a new id; two volumes answered
//! with one id).

use std::collections::HashMap;

use prost_reflect::{DynamicMessage, ReflectMessage, Value};

use crate::schema::Schema;

/// Recorded values and the replayed values they became.
#[derive(Debug, Clone, Default)]
pub struct IdMap {
    forward: HashMap<String, String>,
    backward: HashMap<String, String>,
}

/// What [`IdMap::learn`] made of a pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Learned {
    /// A new pairing (the values may be equal).
    New,
    /// Known already, or nothing to learn (an empty value).
    Known,
    /// Either value is already paired with another: not learned.
    Conflict,
}

impl IdMap {
    /// Pairs the recorded value with the replayed one.
    pub fn learn(&mut self, recorded: &str, replayed: &str) -> Learned {
        if recorded.is_empty() || replayed.is_empty() {
            return Learned::Known;
        }
        match (self.forward.get(recorded), self.backward.get(replayed)) {
            (Some(r), _) if r == replayed => Learned::Known,
            (Some(_), _) | (None, Some(_)) => Learned::Conflict,
            (None, None) => {
                self.forward.insert(recorded.to_owned(), replayed.to_owned());
                self.backward.insert(replayed.to_owned(), recorded.to_owned());
                Learned::New
            }
        }
    }

    /// What the recorded value became, when it was learned.
    pub fn get(&self, recorded: &str) -> Option<&str> {
        self.forward.get(recorded).map(String::as_str)
    }

    /// What the recorded value stands for in the replay: the value it became, or itself.
    pub fn map<'a>(&'a self, recorded: &'a str) -> &'a str {
        self.get(recorded).unwrap_or(recorded)
    }

    /// How many values came back different in the replay (pairs of equal values aside).
    pub fn changed(&self) -> usize {
        self.forward.iter().filter(|(r, n)| r != n).count()
    }

    /// Replaces, through the whole request, every string value that is a learned recorded value
    /// (a field's, a list element's or a map value, whole values only) by what it became. Secret
    /// fields are left alone. Returns how many values were replaced.
    pub fn rewrite(&self, schema: &Schema, msg: &mut DynamicMessage) -> usize {
        if self.changed() == 0 {
            return 0;
        }
        let mut replaced = 0;
        let desc = msg.descriptor();
        for field in desc.fields() {
            if !msg.has_field(&field) || schema.is_secret(&field) {
                continue;
            }
            self.rewrite_value(schema, msg.get_field_mut(&field), &mut replaced);
        }
        replaced
    }

    fn rewrite_value(&self, schema: &Schema, value: &mut Value, replaced: &mut usize) {
        match value {
            Value::String(s) => {
                if let Some(new) = self.forward.get(s.as_str())
                    && new != s
                {
                    *s = new.clone();
                    *replaced += 1;
                }
            }
            Value::Message(m) => *replaced += self.rewrite(schema, m),
            Value::List(l) => l.iter_mut().for_each(|v| self.rewrite_value(schema, v, replaced)),
            Value::Map(m) => m.values_mut().for_each(|v| self.rewrite_value(schema, v, replaced)),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pairing_is_one_to_one() {
        let mut ids = IdMap::default();
        assert_eq!(ids.learn("vol-1", "vol-7"), Learned::New);
        assert_eq!(ids.learn("vol-1", "vol-7"), Learned::Known);
        // The same recorded id answered with another: not learned.
        assert_eq!(ids.learn("vol-1", "vol-8"), Learned::Conflict);
        // Another recorded id answered with one already taken: not learned.
        assert_eq!(ids.learn("vol-2", "vol-7"), Learned::Conflict);
        assert_eq!(ids.learn("vol-3", "vol-3"), Learned::New);
        assert_eq!(ids.learn("", "vol-9"), Learned::Known);
        assert_eq!(ids.map("vol-1"), "vol-7");
        assert_eq!(ids.map("vol-2"), "vol-2");
        assert_eq!(ids.changed(), 1);
    }

    #[test]
    fn requests_carry_the_new_values_everywhere_but_in_secrets() {
        let schema = Schema::builtin().expect("built-in schema");
        let mut ids = IdMap::default();
        ids.learn("vol-1", "vol-7");
        ids.learn("node-a", "node-b");
        let request = csikit::v1::ControllerPublishVolumeRequest {
            volume_id: "vol-1".into(),
            node_id: "node-a".into(),
            // A value that merely contains a recorded id is not one.
            volume_context: [("k".to_owned(), "vol-1".to_owned()), ("j".into(), "vol-10".into())]
                .into(),
            secrets: [("s".to_owned(), "vol-1".to_owned())].into(),
            ..Default::default()
        };
        let desc = schema.find_message("csi.v1.ControllerPublishVolumeRequest").expect("type");
        let mut msg =
            DynamicMessage::decode(desc, prost::Message::encode_to_vec(&request).as_slice())
                .expect("decodes");
        assert_eq!(ids.rewrite(&schema, &mut msg), 3);
        let out: csikit::v1::ControllerPublishVolumeRequest =
            msg.transcode_to().expect("transcodes");
        assert_eq!(out.volume_id, "vol-7");
        assert_eq!(out.node_id, "node-b");
        assert_eq!(out.volume_context["k"], "vol-7");
        assert_eq!(out.volume_context["j"], "vol-10");
        assert_eq!(out.secrets["s"], "vol-1");
    }

    #[test]
    fn repeated_strings_are_followed_too() {
        let schema = Schema::builtin().expect("built-in schema");
        let mut ids = IdMap::default();
        ids.learn("vol-1", "vol-7");
        let request = csikit::v1::CreateVolumeGroupSnapshotRequest {
            name: "g".into(),
            source_volume_ids: vec!["vol-0".into(), "vol-1".into()],
            ..Default::default()
        };
        let desc = schema.find_message("csi.v1.CreateVolumeGroupSnapshotRequest").expect("type");
        let mut msg =
            DynamicMessage::decode(desc, prost::Message::encode_to_vec(&request).as_slice())
                .expect("decodes");
        assert_eq!(ids.rewrite(&schema, &mut msg), 1);
        let out: csikit::v1::CreateVolumeGroupSnapshotRequest =
            msg.transcode_to().expect("transcodes");
        assert_eq!(out.source_volume_ids, ["vol-0", "vol-7"]);
    }
}
