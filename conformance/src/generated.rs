//! Cases built from the spec's facts: a valid request per RPC (from [`crate::cases`]) is decoded
//! with the plugin package's descriptors, one thing is changed by reflection (a REQUIRED field
//! cleared, a string set to its limit or one byte over, a bad secret key, a banned control
//! character), and the answer is checked against what the facts say.

use csikit::facts::{FieldFacts, MessageFacts, Presence};
use prost::Message as _;
use prost_reflect::{DynamicMessage, Kind, MapKey, ReflectMessage, Value};

use crate::sentence::{Sentence, general};

/// One request to send and what must come back.
pub(crate) struct Mutation {
    /// What was changed, for the case's name.
    pub what: String,
    /// The request's bytes.
    pub bytes: Vec<u8>,
    /// What the answer must be.
    pub expect: Expect,
    /// The sentence it checks.
    pub sentence: Sentence,
    /// For a REQUIRED field left out: its path without list indices
    /// (`volume_capabilities.access_mode`).
    pub required: Option<String>,
}

/// The answer a mutation must get.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Expect {
    /// INVALID_ARGUMENT.
    Invalid,
    /// Anything but INVALID_ARGUMENT (the value is within the spec's limits).
    NotInvalid,
}

/// `message` with what `clear` removes from the message at `path`: a request lacking the REQUIRED
/// `name`, which the plugin must refuse.
fn without(
    message: &DynamicMessage,
    path: &[Step],
    name: String,
    what: &str,
    clear: impl FnOnce(&mut DynamicMessage),
) -> Mutation {
    let mut copy = message.clone();
    if let Some(target) = at_path(&mut copy, path) {
        clear(target);
    }
    Mutation {
        what: format!("without {name}{what}"),
        bytes: copy.encode_to_vec(),
        expect: Expect::Invalid,
        sentence: general::MISSING_REQUIRED,
        required: Some(plain(&name)),
    }
}

fn facts(full_name: &str) -> Option<&'static MessageFacts> {
    csikit::v1::facts::FACTS.messages.iter().find(|m| m.full_name == full_name)
}

/// The REQUIRED fields and required oneofs of `message` and of every message set in it, by
/// path (`volume_capabilities[0].access_mode`), with a request that lacks each.
pub(crate) fn missing_required(message: &DynamicMessage) -> Vec<Mutation> {
    let mut out = Vec::new();
    walk(message, &mut Vec::new(), &mut |path, _msg, mfacts| {
        for f in mfacts.fields.iter().filter(|f| testable(f)) {
            out.push(without(message, path, join(path, &f.name), "", |target| {
                if let Some(field) = target.descriptor().get_field_by_name(&f.name) {
                    target.clear_field(&field);
                }
            }));
        }
        for o in mfacts.oneofs.iter().filter(|o| o.required) {
            let name = join(path, &o.name);
            out.push(without(message, path, name, " (required oneof)", |target| {
                let desc = target.descriptor();
                if let Some(oneof) = desc.oneofs().find(|x| x.name() == o.name) {
                    for field in oneof.fields() {
                        target.clear_field(&field);
                    }
                }
            }));
        }
    });
    out
}

/// A REQUIRED field whose absence shows on the wire: not a proto3 bool or number, whose unset
/// form is a legitimate value (`readonly: false`), so no plugin can tell it was left out.
fn testable(f: &FieldFacts) -> bool {
    const SCALARS: [&str; 13] = [
        "bool", "int32", "int64", "uint32", "uint64", "sint32", "sint64", "fixed32", "fixed64",
        "sfixed32", "sfixed64", "float", "double",
    ];
    f.presence == Presence::Required
        && f.oneof.is_none()
        && !(matches!(f.label, csikit::facts::Label::Singular) && SCALARS.contains(&&*f.type_name))
}

/// Every REQUIRED field and required oneof of `full_name` and of the messages it holds, by path
/// without list indices (`volume_capabilities.access_mode`), as [`missing_required`] names them
/// on a request that sets every message field.
pub(crate) fn required_paths(full_name: &str) -> Vec<String> {
    fn walk(full_name: &str, prefix: &str, depth: usize, out: &mut Vec<String>) {
        let Some(m) = facts(full_name) else { return };
        if depth > 8 {
            return;
        }
        let at = |name: &str| {
            if prefix.is_empty() { name.to_owned() } else { format!("{prefix}.{name}") }
        };
        out.extend(m.fields.iter().filter(|f| testable(f)).map(|f| at(&f.name)));
        out.extend(m.oneofs.iter().filter(|o| o.required).map(|o| at(&o.name)));
        for f in
            m.fields.iter().filter(|f| facts(&f.type_name).is_some() && f.type_name != full_name)
        {
            walk(&f.type_name, &at(&f.name), depth + 1, out);
        }
    }
    let mut out = Vec::new();
    walk(full_name, "", 0, &mut out);
    out
}

/// A path without its list indices: `a[0].b` is `a.b`.
pub(crate) fn plain(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let mut skip = false;
    for c in path.chars() {
        match c {
            '[' => skip = true,
            ']' => skip = false,
            c if !skip => out.push(c),
            _ => {}
        }
    }
    out
}

/// The paths of set message fields, each visited with its facts.
fn walk(
    msg: &DynamicMessage,
    path: &mut Vec<Step>,
    visit: &mut dyn FnMut(&[Step], &DynamicMessage, &'static MessageFacts),
) {
    let desc = msg.descriptor();
    let Some(mfacts) = facts(desc.full_name()) else { return };
    visit(path, msg, mfacts);
    for field in desc.fields() {
        if !msg.has_field(&field) || field.is_map() {
            continue;
        }
        match msg.get_field(&field).as_ref() {
            Value::Message(m) => {
                path.push(Step { field: field.name().to_owned(), index: None });
                walk(m, path, visit);
                path.pop();
            }
            Value::List(items) => {
                if let Some(Value::Message(m)) = items.first() {
                    path.push(Step { field: field.name().to_owned(), index: Some(0) });
                    walk(m, path, visit);
                    path.pop();
                }
            }
            _ => {}
        }
    }
}

/// One step into a message: a field, and an index for lists.
#[derive(Debug, Clone)]
pub(crate) struct Step {
    field: String,
    index: Option<usize>,
}

fn join(path: &[Step], name: &str) -> String {
    let mut s = String::new();
    for step in path {
        s.push_str(&step.field);
        if let Some(i) = step.index {
            s.push_str(&format!("[{i}]"));
        }
        s.push('.');
    }
    s.push_str(name);
    s
}

fn at_path<'m>(msg: &'m mut DynamicMessage, path: &[Step]) -> Option<&'m mut DynamicMessage> {
    let mut cur = msg;
    for step in path {
        let field = cur.descriptor().get_field_by_name(&step.field)?;
        let value = cur.get_field_mut(&field);
        cur = match (value, step.index) {
            (Value::Message(m), None) => m,
            (Value::List(items), Some(i)) => match items.get_mut(i)? {
                Value::Message(m) => m,
                _ => return None,
            },
            _ => return None,
        };
    }
    Some(cur)
}

/// Top-level strings with a size limit at the limit (accepted), strings and string maps one byte
/// over (INVALID_ARGUMENT). Secret maps are left out (the plugin may check their content). Both
/// check a sentence that binds the sender, so what they find is a note.
pub(crate) fn size_limits(message: &DynamicMessage) -> Vec<Mutation> {
    let desc = message.descriptor();
    let Some(mfacts) = facts(desc.full_name()) else { return Vec::new() };
    let mut out = Vec::new();
    for f in mfacts.fields.iter() {
        let Some(limit) = f.size_limit.max_bytes() else { continue };
        let Some(field) = desc.get_field_by_name(&f.name) else { continue };
        if f.secret || field.is_list() {
            continue;
        }
        let limit = limit as usize;
        for (len, expect, label) in
            [(limit, Expect::NotInvalid, "at"), (limit + 1, Expect::Invalid, "one byte over")]
        {
            let mut copy = message.clone();
            match field.kind() {
                Kind::String if !field.is_map() => {
                    // A name unique to this case: a value at the limit may create something.
                    let value = unique_fill(len);
                    copy.set_field(&field, Value::String(value));
                }
                Kind::Message(entry) if field.is_map() => {
                    let string_map = matches!(entry.map_entry_key_field().kind(), Kind::String)
                        && matches!(entry.map_entry_value_field().kind(), Kind::String);
                    // A map's keys are the plugin's to know: one at the limit may be refused
                    // for its key, so only the map one byte over is sent.
                    if !string_map || len < 2 || expect == Expect::NotInvalid {
                        continue;
                    }
                    // One entry: a one-byte key and the rest in its value.
                    let mut map = std::collections::HashMap::new();
                    map.insert(MapKey::String("k".into()), Value::String(unique_fill(len - 1)));
                    copy.set_field(&field, Value::Map(map));
                }
                _ => continue,
            }
            out.push(Mutation {
                what: format!("{} {label} its limit ({len} of {limit} bytes)", f.name),
                bytes: copy.encode_to_vec(),
                expect,
                sentence: general::SIZE_LIMITS,
                required: None,
            });
        }
    }
    out
}

/// `len` bytes of lowercase letters, different from one call to the next.
fn unique_fill(len: usize) -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let prefix = format!("csi-conformance-{n}-");
    let mut s: String = prefix.chars().take(len).collect();
    while s.len() < len {
        s.push('x');
    }
    s
}

/// A secret map with a key outside the spec's charset (INVALID_ARGUMENT).
pub(crate) fn bad_secret_key(message: &DynamicMessage) -> Vec<Mutation> {
    let desc = message.descriptor();
    let Some(mfacts) = facts(desc.full_name()) else { return Vec::new() };
    let mut out = Vec::new();
    for f in mfacts.fields.iter().filter(|f| f.secret && field_is_map(f)) {
        let Some(field) = desc.get_field_by_name(&f.name) else { continue };
        let mut copy = message.clone();
        let mut map = match copy.get_field(&field).as_ref() {
            Value::Map(m) => m.clone(),
            _ => std::collections::HashMap::new(),
        };
        map.insert(MapKey::String("bad key!".into()), Value::String("value".into()));
        copy.set_field(&field, Value::Map(map));
        out.push(Mutation {
            what: format!("{} with the key 'bad key!'", f.name),
            bytes: copy.encode_to_vec(),
            expect: Expect::Invalid,
            sentence: general::SECRET_KEYS,
            required: None,
        });
    }
    out
}

fn field_is_map(f: &FieldFacts) -> bool {
    matches!(f.label, csikit::facts::Label::Map)
}

/// A string whose comment bans the spec's control characters, holding one (INVALID_ARGUMENT).
pub(crate) fn control_chars(message: &DynamicMessage) -> Vec<Mutation> {
    let desc = message.descriptor();
    let Some(mfacts) = facts(desc.full_name()) else { return Vec::new() };
    let mut out = Vec::new();
    for f in mfacts.fields.iter().filter(|f| f.no_control_chars) {
        let Some(field) = desc.get_field_by_name(&f.name) else { continue };
        if !matches!(field.kind(), Kind::String) || field.is_list() {
            continue;
        }
        let mut copy = message.clone();
        copy.set_field(&field, Value::String(format!("{}\u{7}bell", unique_fill(20))));
        out.push(Mutation {
            what: format!("{} holding U+0007", f.name),
            bytes: copy.encode_to_vec(),
            expect: Expect::Invalid,
            sentence: general::CONTROL_CHARS,
            required: None,
        });
    }
    out
}

/// Enum values in `bytes` (a `full_name` message) that its enum does not declare, by path:
/// `capabilities[0].rpc.type: 99 is not a declared Type`. A value CSI v1.12.0 declares
/// (`csikit::v1_12`) is declared: a v1.12 plugin sends the VOLUME_CONDITION capabilities, whose
/// numbers v1.13.0 reserves. Unknown message types and bytes that do not decode give nothing
/// (the other checks say so).
pub(crate) fn undeclared_enums(full_name: &str, bytes: &[u8]) -> Vec<String> {
    let Some(desc) = csikit::v1::descriptor_pool().get_message_by_name(full_name) else {
        return Vec::new();
    };
    let Ok(msg) = DynamicMessage::decode(desc, bytes) else { return Vec::new() };
    let mut out = Vec::new();
    enums_in(&msg, "", &mut out);
    out
}

/// Whether CSI v1.12.0 declares `number` in the enum `full_name`.
fn declared_in_v1_12(full_name: &str, number: i32) -> bool {
    csikit::v1_12::descriptor_pool()
        .get_enum_by_name(full_name)
        .is_some_and(|e| e.get_value(number).is_some())
}

fn enums_in(msg: &DynamicMessage, prefix: &str, out: &mut Vec<String>) {
    for (field, value) in msg.fields() {
        let path = if prefix.is_empty() {
            field.name().to_owned()
        } else {
            format!("{prefix}.{}", field.name())
        };
        let check = |v: &Value, path: &str, out: &mut Vec<String>| match (v, field.kind()) {
            (Value::EnumNumber(n), Kind::Enum(e))
                if e.get_value(*n).is_none() && !declared_in_v1_12(e.full_name(), *n) =>
            {
                out.push(format!("{path}: {n} is not a declared {}", e.name()));
            }
            (Value::Message(m), _) => enums_in(m, path, out),
            _ => {}
        };
        match value {
            Value::List(items) => {
                for (i, v) in items.iter().enumerate() {
                    check(v, &format!("{path}[{i}]"), out);
                }
            }
            Value::Map(map) => {
                for (k, v) in map {
                    check(v, &format!("{path}[{k:?}]"), out);
                }
            }
            v => check(v, &path, out),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use csikit::v1::controller_service_capability::{Rpc, Type};
    use csikit::v1::{ControllerGetCapabilitiesResponse, ControllerServiceCapability};

    #[test]
    fn an_enum_value_the_spec_does_not_declare_is_named_with_its_path() {
        let answer = |n: i32| ControllerGetCapabilitiesResponse {
            capabilities: vec![ControllerServiceCapability {
                r#type: Some(Type::Rpc(Rpc { r#type: n })),
            }],
        };
        let name = "csi.v1.ControllerGetCapabilitiesResponse";
        assert!(undeclared_enums(name, &answer(1).encode_to_vec()).is_empty());
        let found = undeclared_enums(name, &answer(999).encode_to_vec());
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].starts_with("capabilities[0].rpc.type: 999 is not a declared"),
            "{found:?}"
        );
    }

    #[test]
    fn required_paths_name_nested_fields_as_missing_required_does() {
        let paths = required_paths("csi.v1.CreateVolumeRequest");
        assert!(paths.contains(&"name".to_owned()), "{paths:?}");
        assert!(paths.contains(&"volume_capabilities.access_mode".to_owned()), "{paths:?}");
        assert!(
            paths.contains(&"volume_content_source.snapshot.snapshot_id".to_owned()),
            "{paths:?}"
        );
        assert_eq!(
            plain("volume_capabilities[0].access_mode.mode"),
            "volume_capabilities.access_mode.mode"
        );
    }
}
