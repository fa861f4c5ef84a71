//! Field-level differences between two decoded messages: changed (`~`), added (`+`) and
//! removed (`-`) values by field path, unknown fields included, secrets redacted unless asked.

use prost_reflect::{DynamicMessage, MapKey, MessageDescriptor, ReflectMessage, Value};

use crate::mask::{SecretMask, redact_bytes};

use crate::redact::REDACTED;
use crate::schema::Schema;
use crate::validate::show_key;

/// One difference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// `~` changed, `+` only in the second, `-` only in the first.
    pub sign: char,
    /// The field path.
    pub path: String,
    /// The description: `old -> new`, or the value.
    pub detail: String,
}

impl std::fmt::Display for Change {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}: {}", self.sign, self.path, self.detail)
    }
}

/// Every difference between `a` and `b` (same type).
pub fn diff(
    schema: &Schema,
    a: &DynamicMessage,
    b: &DynamicMessage,
    show_secrets: bool,
) -> Vec<Change> {
    let mut out = Vec::new();
    let mut d = Differ { schema, show_secrets, out: &mut out };
    d.message(a, b, "", false);
    out
}

struct Differ<'a> {
    schema: &'a Schema,
    show_secrets: bool,
    out: &'a mut Vec<Change>,
}

pub(crate) fn join(path: &str, name: &str) -> String {
    if path.is_empty() { name.to_owned() } else { format!("{path}.{name}") }
}

/// A value as a difference shows it: `<redacted>` when `secret`, a message in text format with
/// its secrets blanked (unless `show_secrets`), lists and maps by their size.
pub fn show_value(schema: &Schema, v: &Value, secret: bool, show_secrets: bool) -> String {
    if secret {
        return REDACTED.to_owned();
    }
    match v {
        Value::String(s) => format!("{s:?}"),
        Value::Bytes(b) => format!("{} bytes", b.len()),
        Value::Message(m) => {
            let mut m = m.clone();
            if !show_secrets {
                crate::redact::redact(schema, &mut m);
            }
            format!("{{{m}}}")
        }
        Value::List(l) => format!("[{} values]", l.len()),
        Value::Map(m) => format!("{{{} entries}}", m.len()),
        Value::EnumNumber(n) => n.to_string(),
        other => format!("{other:?}").split(['(', ')']).nth(1).unwrap_or_default().to_owned(),
    }
}

impl Differ<'_> {
    fn show(&self, v: &Value, secret: bool) -> String {
        show_value(self.schema, v, secret, self.show_secrets)
    }

    fn push(&mut self, sign: char, path: String, detail: String) {
        self.out.push(Change { sign, path, detail });
    }

    fn message(&mut self, a: &DynamicMessage, b: &DynamicMessage, path: &str, secret: bool) {
        let desc = a.descriptor();
        for field in desc.fields() {
            let p = join(path, field.name());
            let secret = secret || (self.schema.is_secret(&field) && !self.show_secrets);
            match (a.has_field(&field), b.has_field(&field)) {
                (false, false) => {}
                (true, false) => {
                    let v = self.show(&a.get_field(&field), secret);
                    self.push('-', p, v);
                }
                (false, true) => {
                    let v = self.show(&b.get_field(&field), secret);
                    self.push('+', p, v);
                }
                (true, true) => self.value(&a.get_field(&field), &b.get_field(&field), &p, secret),
            }
        }
        let ua: Vec<Vec<u8>> = a.unknown_fields().map(encode_unknown).collect();
        let ub: Vec<Vec<u8>> = b.unknown_fields().map(encode_unknown).collect();
        if ua != ub {
            let p = join(path, "<unknown fields>");
            self.push('~', p, format!("{} -> {} records", ua.len(), ub.len()));
        }
    }

    /// One list element or map entry, present on either side or both.
    fn element(&mut self, a: Option<&Value>, b: Option<&Value>, path: String, secret: bool) {
        match (a, b) {
            (Some(u), Some(v)) => self.value(u, v, &path, secret),
            (Some(u), None) => {
                let s = self.show(u, secret);
                self.push('-', path, s);
            }
            (None, Some(v)) => {
                let s = self.show(v, secret);
                self.push('+', path, s);
            }
            (None, None) => {}
        }
    }

    fn value(&mut self, a: &Value, b: &Value, path: &str, secret: bool) {
        if a == b {
            return;
        }
        match (a, b) {
            (Value::Message(x), Value::Message(y)) => self.message(x, y, path, secret),
            (Value::List(x), Value::List(y)) => {
                for i in 0..x.len().max(y.len()) {
                    self.element(x.get(i), y.get(i), format!("{path}[{i}]"), secret);
                }
            }
            (Value::Map(x), Value::Map(y)) => {
                let mut keys: Vec<&MapKey> = x.keys().chain(y.keys()).collect();
                keys.sort();
                keys.dedup();
                for k in keys {
                    self.element(x.get(k), y.get(k), format!("{path}[{}]", show_key(k)), secret);
                }
            }
            _ => {
                let detail = if secret {
                    format!("{REDACTED} -> {REDACTED} (differs)")
                } else {
                    format!("{} -> {}", self.show(a, false), self.show(b, false))
                };
                self.push('~', path.to_owned(), detail);
            }
        }
    }
}

pub(crate) fn encode_unknown(u: &prost_reflect::UnknownField) -> Vec<u8> {
    let mut buf = Vec::new();
    u.encode(&mut buf);
    buf
}

/// The differences between two messages read as `desc` whose type is not certain: a value
/// either side's mask hides is compared but never shown (a change there reads "a hidden value
/// changed"). The masks are those of [`SecretMask::uncertain`] for each side's bytes.
///
/// # Errors
///
/// When either side is not a valid `desc`.
pub fn diff_masked(
    schema: &Schema,
    desc: &MessageDescriptor,
    (a, mask_a): (&[u8], &SecretMask),
    (b, mask_b): (&[u8], &SecretMask),
) -> Result<Vec<Change>, prost::DecodeError> {
    let decode = |bytes: &[u8]| DynamicMessage::decode(desc.clone(), bytes);
    let full = diff(schema, &decode(a)?, &decode(b)?, false);
    let shown = diff(
        schema,
        &decode(&redact_bytes(desc, a, mask_a))?,
        &decode(&redact_bytes(desc, b, mask_b))?,
        false,
    );
    let mut out = shown;
    for c in full {
        if !out.iter().any(|s| s.path == c.path) {
            out.push(Change {
                sign: c.sign,
                path: c.path,
                detail: "a hidden value changed".into(),
            });
        }
    }
    Ok(out)
}
