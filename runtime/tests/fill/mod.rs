//! Fills dynamic messages with every field set and every secret marked, for the tests.

use std::collections::{HashMap, HashSet};

use prost_reflect::{DynamicMessage, Kind, MapKey, MessageDescriptor, Value};

/// Every secret value starts with this, so a test can look for it in `Debug` output.
pub const SECRET_MARK: &str = "SECRET-VALUE-";
/// Every map key starts with this; keys of secret maps may show.
pub const KEY_MARK: &str = "visible-key-";

/// A message of type `desc` with every field set (one member per oneof), nested messages to
/// a few levels; fields for which `is_secret(message, field)` holds get [`SECRET_MARK`] values.
pub fn filled(
    desc: &MessageDescriptor,
    is_secret: &dyn Fn(&str, &str) -> bool,
    depth: u32,
) -> DynamicMessage {
    let mut msg = DynamicMessage::new(desc.clone());
    let mut oneofs = HashSet::new();
    for field in desc.fields() {
        if let Some(o) = field.containing_oneof()
            && !o.is_synthetic()
            && !oneofs.insert(o.name().to_owned())
        {
            continue;
        }
        let secret = is_secret(desc.full_name(), field.name());
        let value = if field.is_map() {
            let Kind::Message(entry) = field.kind() else { continue };
            let value_kind = entry.map_entry_value_field().kind();
            let mut map = HashMap::new();
            for i in 0..2 {
                let Some(v) = scalar(&value_kind, secret, depth, is_secret) else { continue };
                map.insert(MapKey::String(format!("{KEY_MARK}{i}")), v);
            }
            Value::Map(map)
        } else if field.is_list() {
            match scalar(&field.kind(), secret, depth, is_secret) {
                Some(v) => Value::List(vec![v.clone(), v]),
                None => continue,
            }
        } else {
            match scalar(&field.kind(), secret, depth, is_secret) {
                Some(v) => v,
                None => continue,
            }
        };
        msg.set_field(&field, value);
    }
    msg
}

fn scalar(
    kind: &Kind,
    secret: bool,
    depth: u32,
    is_secret: &dyn Fn(&str, &str) -> bool,
) -> Option<Value> {
    Some(match kind {
        Kind::String => {
            Value::String(if secret { format!("{SECRET_MARK}{depth}") } else { "text".to_owned() })
        }
        Kind::Bytes => Value::Bytes(if secret {
            SECRET_MARK.as_bytes().to_vec().into()
        } else {
            b"bytes".to_vec().into()
        }),
        Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => Value::I32(7),
        Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => Value::I64(7),
        Kind::Uint32 | Kind::Fixed32 => Value::U32(7),
        Kind::Uint64 | Kind::Fixed64 => Value::U64(7),
        Kind::Float => Value::F32(1.5),
        Kind::Double => Value::F64(1.5),
        Kind::Bool => Value::Bool(true),
        Kind::Enum(e) => Value::EnumNumber(e.values().last().map_or(0, |v| v.number())),
        Kind::Message(m) if depth < 4 => Value::Message(filled(m, is_secret, depth + 1)),
        Kind::Message(_) => return None,
    })
}
