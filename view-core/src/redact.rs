//! Secret values removed from a decoded message before it is shown (JSON, diffs): strings and
//! bytes become `<redacted>`, numbers zero; map keys stay visible.

use prost_reflect::{DynamicMessage, ReflectMessage, Value};

use crate::schema::Schema;

/// What a secret value is shown as, everywhere csikit shows one.
pub use csikit::redact::REDACTED;

/// Replaces every secret value in `msg`, recursively.
pub fn redact(schema: &Schema, msg: &mut DynamicMessage) {
    let desc = msg.descriptor();
    for field in desc.fields() {
        if !msg.has_field(&field) {
            continue;
        }
        let secret = schema.is_secret(&field);
        let value = msg.get_field_mut(&field);
        if secret {
            blank(value);
        } else {
            descend(schema, value);
        }
    }
}

fn descend(schema: &Schema, value: &mut Value) {
    match value {
        Value::Message(m) => redact(schema, m),
        Value::List(l) => l.iter_mut().for_each(|v| descend(schema, v)),
        Value::Map(m) => m.values_mut().for_each(|v| descend(schema, v)),
        _ => {}
    }
}

fn blank(value: &mut Value) {
    match value {
        Value::String(s) => *s = REDACTED.to_owned(),
        Value::Bytes(b) => *b = REDACTED.as_bytes().to_vec().into(),
        Value::Bool(b) => *b = false,
        Value::I32(n) | Value::EnumNumber(n) => *n = 0,
        Value::I64(n) => *n = 0,
        Value::U32(n) => *n = 0,
        Value::U64(n) => *n = 0,
        Value::F32(n) => *n = 0.0,
        Value::F64(n) => *n = 0.0,
        Value::Message(m) => {
            let fields: Vec<_> = m.descriptor().fields().filter(|f| m.has_field(f)).collect();
            for f in fields {
                blank(m.get_field_mut(&f));
            }
            let _ = m.take_unknown_fields().count();
        }
        Value::List(l) => l.iter_mut().for_each(blank),
        Value::Map(m) => m.values_mut().for_each(blank),
    }
}

/// Paths of every unknown field in `msg`, with field number and wire type.
pub fn unknown_fields(msg: &DynamicMessage) -> Vec<String> {
    let mut out = Vec::new();
    walk_unknown(msg, "", &mut out);
    out
}

fn walk_unknown(msg: &DynamicMessage, path: &str, out: &mut Vec<String>) {
    for u in msg.unknown_fields() {
        let p = if path.is_empty() { String::new() } else { format!("{path}.") };
        out.push(format!("{p}{} ({:?})", u.number(), u.wire_type()));
    }
    for (field, value) in msg.fields() {
        let p = if path.is_empty() {
            field.name().to_owned()
        } else {
            format!("{path}.{}", field.name())
        };
        match value {
            Value::Message(m) => walk_unknown(m, &p, out),
            Value::List(l) => {
                for (i, v) in l.iter().enumerate() {
                    if let Value::Message(m) = v {
                        walk_unknown(m, &format!("{p}[{i}]"), out);
                    }
                }
            }
            Value::Map(map) => {
                for (k, v) in map {
                    if let Value::Message(m) = v {
                        walk_unknown(m, &format!("{p}[{k:?}]"), out);
                    }
                }
            }
            _ => {}
        }
    }
}
