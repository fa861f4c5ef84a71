//! Changes the page asks for, applied to a decoded message by field path (as the trees and the
//! validation name fields: `a.b[2].c["key"]`): set a scalar from its text, add a message field,
//! a oneof member, a list element or a map entry, remove one. A value typed into a secret field
//! never comes back in an error.

use anyhow::{Result, anyhow, bail};
use prost_reflect::{DynamicMessage, FieldDescriptor, Kind, MapKey, ReflectMessage, Value};

use csi_view_core::schema::Schema;

/// One change to a message.
#[derive(Debug, Clone, Copy)]
pub(super) enum Change<'a> {
    /// The scalar at `path` reads `text` (enums by name or number, bytes in hex).
    Set { path: &'a str, text: &'a str },
    /// The field at `path` gets something: a message field an empty message, a oneof member its
    /// default (the other members cleared), a list a default element, a map an entry at `key`.
    Add { path: &'a str, key: Option<&'a str> },
    /// The field at `path` is cleared, or the element (`f[2]`) or entry (`f["k"]`) removed.
    Remove { path: &'a str },
}

/// Applies `change` to `msg`. On an error `msg` may be half changed: apply to a copy.
///
/// # Errors
///
/// A path that names no field, an index or key that is not there, a text that is not a value of
/// the field's type (without the text when the field is secret).
pub(super) fn apply(schema: &Schema, msg: &mut DynamicMessage, change: &Change<'_>) -> Result<()> {
    apply_with(&|f| schema.is_secret(f), msg, change)
}

/// [`apply`], with the fields `secret` names kept out of errors.
pub(super) fn apply_with(
    secret: &dyn Fn(&FieldDescriptor) -> bool,
    msg: &mut DynamicMessage,
    change: &Change<'_>,
) -> Result<()> {
    let path = match *change {
        Change::Set { path, .. } | Change::Add { path, .. } | Change::Remove { path } => path,
    };
    let steps = steps(path)?;
    let Some(((name, sub), parents)) = steps.split_last() else { bail!("empty path") };
    let parent = descend(msg, parents)?;
    let desc = parent.descriptor();
    let field = desc
        .get_field_by_name(name)
        .ok_or_else(|| anyhow!("{} has no field '{name}'", desc.full_name()))?;
    match (*change, sub) {
        (Change::Set { text, .. }, _) => {
            if sub.is_none() && (field.is_list() || field.is_map()) {
                bail!("{path} is a list or map: set its elements");
            }
            let kind = value_kind(&field);
            let value = parse_scalar(&kind, text).map_err(|e| {
                if secret(&field) {
                    anyhow!("{path}: not a {} (the text is not shown: the field is secret)", {
                        csi_view_core::text::kind_name(&kind)
                    })
                } else {
                    e
                }
            })?;
            *slot(parent, &field, sub.as_deref())? = value;
        }
        (Change::Add { key, .. }, None) => match parent.get_field_mut(&field) {
            Value::Map(map) => {
                let key = key.ok_or_else(|| anyhow!("{path} is a map: a key is needed"))?;
                let k = map_key(&field, key)?;
                if map.contains_key(&k) {
                    bail!("{path} already has the key {key}");
                }
                map.insert(k, Value::default_value(&value_kind(&field)));
            }
            Value::List(items) => items.push(Value::default_value(&field.kind())),
            // A message field, or a oneof member chosen: setting it clears the other members.
            _ => parent.set_field(&field, Value::default_value_for_field(&field)),
        },
        (Change::Remove { .. }, None) => parent.clear_field(&field),
        (Change::Remove { .. }, Some(sub)) => match parent.get_field_mut(&field) {
            Value::List(items) => {
                let i = index(sub)?;
                if i >= items.len() {
                    bail!("{name}[{i}]: only {} items", items.len());
                }
                items.remove(i);
            }
            Value::Map(map) => {
                let k = map_key(&field, sub)?;
                map.remove(&k).ok_or_else(|| anyhow!("{name}[{sub}]: no such key"))?;
            }
            _ => bail!("{name} is not a list or map"),
        },
        (Change::Add { .. }, Some(_)) => bail!("{path}: add names a field, not an element"),
    }
    Ok(())
}

/// The message `steps` lead to from `msg` (message fields on the way are set if they were not).
fn descend<'m>(
    msg: &'m mut DynamicMessage,
    steps: &[(String, Option<String>)],
) -> Result<&'m mut DynamicMessage> {
    let mut current = msg;
    for (name, sub) in steps {
        let desc = current.descriptor();
        let field = desc
            .get_field_by_name(name)
            .ok_or_else(|| anyhow!("{} has no field '{name}'", desc.full_name()))?;
        current = match slot(current, &field, sub.as_deref())? {
            Value::Message(m) => m,
            _ => bail!("{name} is not a message"),
        };
    }
    Ok(current)
}

/// The value of `field` in `msg`, or its element `[index]` or entry `[key]`.
fn slot<'m>(
    msg: &'m mut DynamicMessage,
    field: &FieldDescriptor,
    sub: Option<&str>,
) -> Result<&'m mut Value> {
    let name = field.name();
    Ok(match (sub, msg.get_field_mut(field)) {
        (None, v) => v,
        (Some(index_text), Value::List(items)) => {
            let i = index(index_text)?;
            let len = items.len();
            items.get_mut(i).ok_or_else(|| anyhow!("{name}[{i}]: only {len} items"))?
        }
        (Some(key), Value::Map(map)) => {
            let k = map_key(field, key)?;
            map.get_mut(&k).ok_or_else(|| anyhow!("{name}[{key}]: no such key"))?
        }
        (Some(_), _) => bail!("{name} is not a list or map"),
    })
}

fn index(text: &str) -> Result<usize> {
    text.parse().map_err(|_| anyhow!("bad index [{text}]"))
}

/// The kind of the field's values: a map's value kind, else the field's own.
fn value_kind(field: &FieldDescriptor) -> Kind {
    match field.kind() {
        Kind::Message(entry) if field.is_map() => entry.map_entry_value_field().kind(),
        k => k,
    }
}

/// A scalar of `kind` from the page's text (enums by name or number, bytes in hex).
pub(super) fn parse_scalar(kind: &Kind, text: &str) -> Result<Value> {
    let t = text.trim();
    let bad = |what: &str| anyhow!("'{text}' is not {what}");
    Ok(match kind {
        Kind::String => Value::String(text.to_owned()),
        Kind::Bytes => Value::Bytes(
            data_encoding::HEXLOWER_PERMISSIVE
                .decode(t.as_bytes())
                .map_err(|_| bad("hex bytes"))?
                .into(),
        ),
        Kind::Bool => Value::Bool(t.parse().map_err(|_| bad("true or false"))?),
        Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => {
            Value::I32(t.parse().map_err(|_| bad("a 32-bit integer"))?)
        }
        Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => {
            Value::I64(t.parse().map_err(|_| bad("a 64-bit integer"))?)
        }
        Kind::Uint32 | Kind::Fixed32 => {
            Value::U32(t.parse().map_err(|_| bad("an unsigned 32-bit integer"))?)
        }
        Kind::Uint64 | Kind::Fixed64 => {
            Value::U64(t.parse().map_err(|_| bad("an unsigned 64-bit integer"))?)
        }
        Kind::Float => Value::F32(t.parse().map_err(|_| bad("a number"))?),
        Kind::Double => Value::F64(t.parse().map_err(|_| bad("a number"))?),
        Kind::Enum(e) => match e.get_value_by_name(t) {
            Some(v) => Value::EnumNumber(v.number()),
            None => Value::EnumNumber(t.parse().map_err(|_| {
                bad(&format!(
                    "a value of {} ({})",
                    e.name(),
                    e.values().map(|v| v.name().to_owned()).collect::<Vec<_>>().join(", ")
                ))
            })?),
        },
        Kind::Message(m) => bail!("{} is a message; edit its fields", m.full_name()),
    })
}

/// One step of a field path: a field, then an optional `[index]` or `["key"]`.
pub(super) fn steps(path: &str) -> Result<Vec<(String, Option<String>)>> {
    let mut out = Vec::new();
    let mut rest = path;
    while !rest.is_empty() {
        let end = rest.find(['.', '[']).unwrap_or(rest.len());
        let name = rest[..end].to_owned();
        rest = &rest[end..];
        let mut sub = None;
        if let Some(r) = rest.strip_prefix('[') {
            // A quoted key may hold ']' or '.': read it as JSON.
            let close = if r.starts_with('"') {
                let mut escaped = false;
                let mut at = None;
                for (i, c) in r.char_indices().skip(1) {
                    match c {
                        '\\' if !escaped => escaped = true,
                        '"' if !escaped => {
                            at = Some(i + 1);
                            break;
                        }
                        _ => escaped = false,
                    }
                }
                at.ok_or_else(|| anyhow!("unterminated key in '{path}'"))?
            } else {
                r.find(']').ok_or_else(|| anyhow!("unterminated index in '{path}'"))?
            };
            sub = Some(r[..close].to_owned());
            rest = r[close..].strip_prefix(']').ok_or_else(|| anyhow!("bad path '{path}'"))?;
        }
        rest = rest.strip_prefix('.').unwrap_or(rest);
        if name.is_empty() {
            bail!("bad path '{path}'");
        }
        out.push((name, sub));
    }
    Ok(out)
}

/// A map key from a path's `[key]` (a quoted JSON string, or bare) or the text the page sent.
fn map_key(field: &FieldDescriptor, text: &str) -> Result<MapKey> {
    let Kind::Message(entry) = field.kind() else { bail!("{} is not a map", field.name()) };
    let raw: String = if text.starts_with('"') {
        serde_json::from_str(text).map_err(|e| anyhow!("bad key {text}: {e}"))?
    } else {
        text.to_owned()
    };
    Ok(match parse_scalar(&entry.map_entry_key_field().kind(), &raw)? {
        Value::String(s) => MapKey::String(s),
        Value::Bool(b) => MapKey::Bool(b),
        Value::I32(n) => MapKey::I32(n),
        Value::I64(n) => MapKey::I64(n),
        Value::U32(n) => MapKey::U32(n),
        Value::U64(n) => MapKey::U64(n),
        _ => bail!("bad key {text}"),
    })
}
