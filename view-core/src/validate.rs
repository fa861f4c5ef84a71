//! The spec's rules checked on a decoded message through reflection: REQUIRED fields and
//! oneofs, size limits, non-negative numbers, banned control characters and secret keys.
//!
//! For the built-in CSI schema the generated validators run (`csikit::validate_encoded`, the
//! same code `#[csi_validate]` gives drivers); for other schemas (`--spec-dir`, `--proto`,
//! `--descriptor-set`) the same rules, with the same ids and wording, run through reflection
//! from the schema's facts.

use csikit::RuleId;
use csikit_spec::{Presence, SizeLimit};
use prost_reflect::{DynamicMessage, FieldDescriptor, Kind, MapKey, ReflectMessage, Value};

use crate::schema::Schema;

/// One broken rule, as `csikit` reports it: never holds a field's value.
pub use csikit::Violation;

/// Checks every rule: the generated validator when the schema is `csikit`'s own and knows the
/// type, else the reflection checks.
pub fn validate(schema: &Schema, msg: &DynamicMessage) -> Vec<Violation> {
    if schema.builtin {
        let bytes = prost::Message::encode_to_vec(msg);
        match csikit::validate_encoded(msg.descriptor().full_name(), &bytes) {
            Ok(()) => return Vec::new(),
            Err(csikit::ValidateEncodedError::Invalid(vs)) => {
                return vs.into_iter().collect();
            }
            // Types the generated code does not cover (or cannot decode) fall back to reflection.
            Err(_) => {}
        }
    }
    validate_reflect(schema, msg)
}

/// Like [`validate`], from the encoded message: for the built-in schema the generated validator
/// reads the bytes straight away (no reflection decode); `None` when they are not a valid `desc`.
pub fn validate_bytes(
    schema: &Schema,
    desc: &prost_reflect::MessageDescriptor,
    bytes: &[u8],
) -> Option<Vec<Violation>> {
    if schema.builtin {
        match csikit::validate_encoded(desc.full_name(), bytes) {
            Ok(()) => return Some(Vec::new()),
            Err(csikit::ValidateEncodedError::Invalid(vs)) => {
                return Some(vs.into_iter().collect());
            }
            Err(_) => {}
        }
    }
    let msg = DynamicMessage::decode(desc.clone(), bytes).ok()?;
    Some(validate_reflect(schema, &msg))
}

/// Checks every rule the schema's facts state, through the whole message, by reflection.
pub fn validate_reflect(schema: &Schema, msg: &DynamicMessage) -> Vec<Violation> {
    let mut out = Vec::new();
    walk(schema, msg, "", &mut out);
    out
}

fn push(out: &mut Vec<Violation>, path: String, rule: RuleId, message: String) {
    out.push(Violation { path, rule, message });
}

fn join(path: &str, name: &str) -> String {
    if path.is_empty() { name.to_owned() } else { format!("{path}.{name}") }
}

fn is_banned_control(c: char) -> bool {
    matches!(c, '\u{0}'..='\u{8}' | '\u{b}' | '\u{c}' | '\u{e}'..='\u{1f}' | '\u{7f}'..='\u{9f}')
}

fn walk(schema: &Schema, msg: &DynamicMessage, path: &str, out: &mut Vec<Violation>) {
    let desc = msg.descriptor();
    let facts = schema.message_facts(&desc);
    for field in desc.fields() {
        let ff = schema.field_facts(&field);
        let fpath = join(path, field.name());
        let in_real_oneof = field.containing_oneof().is_some_and(|o| !o.is_synthetic());
        let present = msg.has_field(&field);
        // As the generated validators (csikit-codegen's `validation`): a singular bool or number
        // set to its default cannot be told from one never set in proto3, so only strings, bytes,
        // messages, enums, lists and maps are checked for presence.
        let checkable = field.is_list()
            || field.is_map()
            || matches!(
                field.kind(),
                Kind::String | Kind::Bytes | Kind::Message(_) | Kind::Enum(_)
            );
        if ff.presence == Presence::Required && !in_real_oneof && !present && checkable {
            push(out, fpath.clone(), RuleId::Required, "is REQUIRED".into());
        }
        if !present {
            continue;
        }
        let value = msg.get_field(&field);
        let limit = ff.size_limit.max_bytes().map(|b| b as usize);
        match (&*value, limit) {
            (Value::String(s), Some(max)) if s.len() > max => {
                push(
                    out,
                    fpath.clone(),
                    RuleId::MaxBytes,
                    format!("is {} bytes, more than the limit of {max}", s.len()),
                );
            }
            (Value::Map(map), Some(max)) => {
                let total: usize = map.iter().map(|(k, v)| map_key_len(k) + value_len(v)).sum();
                if total > max {
                    push(
                        out,
                        fpath.clone(),
                        RuleId::MaxTotalBytes,
                        format!(
                            "holds {total} bytes of keys and values, more than the limit of {max}"
                        ),
                    );
                }
            }
            (Value::List(list), Some(max)) => {
                if matches!(ff.size_limit, SizeLimit::MaxTotal { .. }) {
                    let total: usize = list.iter().map(value_len).sum();
                    if total > max {
                        push(
                            out,
                            fpath.clone(),
                            RuleId::MaxTotalBytes,
                            format!("holds {total} bytes, more than the limit of {max}"),
                        );
                    }
                } else {
                    for (i, v) in list.iter().enumerate() {
                        if let Value::String(s) = v
                            && s.len() > max
                        {
                            push(
                                out,
                                format!("{fpath}[{i}]"),
                                RuleId::MaxBytes,
                                format!("is {} bytes, more than the limit of {max}", s.len()),
                            );
                        }
                    }
                }
            }
            _ => {}
        }
        if ff.non_negative {
            let negative = match &*value {
                Value::I32(n) => *n < 0,
                Value::I64(n) => *n < 0,
                Value::F32(n) => *n < 0.0,
                Value::F64(n) => *n < 0.0,
                _ => false,
            };
            if negative {
                push(out, fpath.clone(), RuleId::NonNegative, "MUST NOT be negative".into());
            }
        }
        if ff.no_control_chars {
            let mut strings: Vec<(String, &str)> = Vec::new();
            match &*value {
                Value::String(s) => strings.push((fpath.clone(), s)),
                Value::List(l) => {
                    for (i, v) in l.iter().enumerate() {
                        if let Value::String(s) = v {
                            strings.push((format!("{fpath}[{i}]"), s));
                        }
                    }
                }
                _ => {}
            }
            for (p, s) in strings {
                if let Some(pos) = s.chars().position(is_banned_control) {
                    push(
                        out,
                        p,
                        RuleId::ControlChars,
                        format!("holds a banned control character at character {pos}"),
                    );
                }
            }
        }
        if ff.secret
            && let Value::Map(map) = &*value
        {
            for k in map.keys() {
                if let MapKey::String(k) = k
                    && (k.is_empty()
                        || !k
                            .bytes()
                            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-')))
                {
                    push(
                        out,
                        format!("{fpath}[{k:?}]"),
                        RuleId::SecretKey,
                        "secret keys hold only letters, digits, '.', '_' and '-'".into(),
                    );
                }
            }
        }
        descend(schema, &field, &value, &fpath, out);
    }
    if let Some(facts) = facts {
        for o in facts.oneofs.iter().filter(|o| o.required).map(|o| &*o.name) {
            if let Some(oneof) = desc.oneofs().find(|x| x.name() == o)
                && !oneof.fields().any(|f| msg.has_field(&f))
            {
                out.push(Violation {
                    path: join(path, o),
                    rule: RuleId::Required,
                    message: "one of its fields is REQUIRED".into(),
                });
            }
        }
    }
}

fn descend(
    schema: &Schema,
    field: &FieldDescriptor,
    value: &Value,
    path: &str,
    out: &mut Vec<Violation>,
) {
    if !matches!(field.kind(), Kind::Message(_)) {
        return;
    }
    match value {
        Value::Message(m) => walk(schema, m, path, out),
        Value::List(l) => {
            for (i, v) in l.iter().enumerate() {
                if let Value::Message(m) = v {
                    walk(schema, m, &format!("{path}[{i}]"), out);
                }
            }
        }
        Value::Map(map) => {
            for (k, v) in map {
                if let Value::Message(m) = v {
                    walk(schema, m, &format!("{path}[{}]", show_key(k)), out);
                }
            }
        }
        _ => {}
    }
}

/// What a message holds that is worth saying but breaks no rule: each enum value the schema
/// does not name, by field path (`entries[0].health_statuses[1].status: 7 is no
/// csi.v1.VolumeHealthErrorType value this schema names ...`), and each field or value named as
/// an older release named it. A reader MUST ignore enum values it does not know (CSI says so of
/// `VolumeHealthErrorType`; a newer release may add values), so neither is a violation.
pub fn notes(schema: &Schema, msg: &DynamicMessage) -> Vec<String> {
    let mut out = Vec::new();
    note_walk(schema, msg, "", &mut out);
    out
}

fn note_walk(schema: &Schema, msg: &DynamicMessage, path: &str, out: &mut Vec<String>) {
    for (field, value) in msg.fields() {
        let fpath = join(path, field.name());
        if let Some(former) = schema.former_field(&field) {
            out.push(format!("{fpath}: {former}"));
        }
        let each = |i: Option<String>, v: &Value, out: &mut Vec<String>| {
            let at = i.map_or_else(|| fpath.clone(), |i| format!("{fpath}[{i}]"));
            match (field.kind(), v) {
                (Kind::Enum(e), Value::EnumNumber(n)) => match e.get_value(*n) {
                    None => out.push(format!(
                        "{at}: {n} is no {} value this schema names (a newer release's?); shown as the number, and a reader MUST ignore it",
                        e.full_name()
                    )),
                    Some(known) => {
                        if let Some(former) = schema.former_value(&known) {
                            out.push(format!("{at}: {} {former}", known.name()));
                        }
                    }
                },
                (Kind::Message(_), Value::Message(m)) => note_walk(schema, m, &at, out),
                _ => {}
            }
        };
        match value {
            Value::List(l) => {
                for (i, v) in l.iter().enumerate() {
                    each(Some(i.to_string()), v, out);
                }
            }
            Value::Map(m) => {
                for (k, v) in m {
                    each(Some(show_key(k)), v, out);
                }
            }
            v => each(None, v, out),
        }
    }
}

/// A map key as paths show it: strings quoted, numbers and bools bare.
pub fn show_key(k: &MapKey) -> String {
    match k {
        MapKey::String(s) => format!("{s:?}"),
        MapKey::Bool(b) => b.to_string(),
        MapKey::I32(n) => n.to_string(),
        MapKey::I64(n) => n.to_string(),
        MapKey::U32(n) => n.to_string(),
        MapKey::U64(n) => n.to_string(),
    }
}

fn map_key_len(k: &MapKey) -> usize {
    match k {
        MapKey::String(s) => s.len(),
        _ => 0,
    }
}

fn value_len(v: &Value) -> usize {
    match v {
        Value::String(s) => s.len(),
        Value::Bytes(b) => b.len(),
        _ => 0,
    }
}
