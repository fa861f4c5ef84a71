//! Request and response validation: the [`Validate`] trait that `#[csi_validate]` implements,
//! the field paths it reports, and the checks it calls.
//!
//! Checking a valid message allocates nothing: paths are a chain of stack frames that only
//! become text when a violation is recorded.

use std::fmt;

/// One step of a field path.
#[derive(Debug, Clone, Copy)]
pub enum PathSegment<'a> {
    /// The message itself.
    Root,
    /// A field, by name.
    Field(&'static str),
    /// An element of a repeated field.
    Index(usize),
    /// A value of a map, by key.
    Key(&'a str),
}

/// Where a value sits in a message: a chain from the root, kept on the stack.
#[derive(Debug, Clone, Copy)]
pub struct FieldPath<'a> {
    parent: Option<&'a FieldPath<'a>>,
    segment: PathSegment<'a>,
}

impl<'a> FieldPath<'a> {
    /// The message itself.
    pub const ROOT: FieldPath<'static> = FieldPath { parent: None, segment: PathSegment::Root };

    /// The path of a field of this value.
    pub fn field(&'a self, name: &'static str) -> FieldPath<'a> {
        FieldPath { parent: Some(self), segment: PathSegment::Field(name) }
    }

    /// The path of an element of this repeated value.
    pub fn index(&'a self, i: usize) -> FieldPath<'a> {
        FieldPath { parent: Some(self), segment: PathSegment::Index(i) }
    }

    /// The path of a value of this map.
    pub fn key(&'a self, key: &'a str) -> FieldPath<'a> {
        FieldPath { parent: Some(self), segment: PathSegment::Key(key) }
    }
}

impl fmt::Display for FieldPath<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(parent) = self.parent {
            parent.fmt(f)?;
        }
        match self.segment {
            PathSegment::Root => Ok(()),
            PathSegment::Field(name) => {
                if matches!(self.parent, Some(p) if !matches!(p.segment, PathSegment::Root)) {
                    f.write_str(".")?;
                }
                f.write_str(name)
            }
            PathSegment::Index(i) => write!(f, "[{i}]"),
            PathSegment::Key(k) => write!(f, "[{k:?}]"),
        }
    }
}

/// Which rule a violation broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RuleId {
    /// A REQUIRED field is missing (empty string, `None`, no element, zero enum, no oneof variant).
    Required,
    /// A string is longer than its size limit.
    MaxBytes,
    /// A map or repeated string is larger, all together, than its size limit.
    MaxTotalBytes,
    /// A number the spec says MUST NOT be negative is negative.
    NonNegative,
    /// A name holds one of the control characters the spec bans.
    ControlChars,
    /// A secret key holds a character other than `[A-Za-z0-9._-]`.
    SecretKey,
    /// A rule of the message as a whole.
    Message,
}

impl RuleId {
    /// The rule's stable id, e.g. `required`.
    pub fn as_str(self) -> &'static str {
        match self {
            RuleId::Required => "required",
            RuleId::MaxBytes => "max_bytes",
            RuleId::MaxTotalBytes => "max_total_bytes",
            RuleId::NonNegative => "non_negative",
            RuleId::ControlChars => "no_control_chars",
            RuleId::SecretKey => "secret_keys",
            RuleId::Message => "message",
        }
    }
}

impl fmt::Display for RuleId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One broken rule, with the path of the offending field. Never holds a field's value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// Where, e.g. `volume_capabilities[1].access_mode.mode`.
    pub path: String,
    /// Which rule.
    pub rule: RuleId,
    /// What is wrong, in words, without the value.
    pub message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "{} ({})", self.message, self.rule)
        } else {
            write!(f, "{}: {} ({})", self.path, self.message, self.rule)
        }
    }
}

/// Every violation found in one message.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Violations(Vec<Violation>);

impl Violations {
    /// No violations; allocates nothing.
    pub const fn new() -> Self {
        Violations(Vec::new())
    }

    /// Records a violation at `path`.
    pub fn push(&mut self, path: &FieldPath<'_>, rule: RuleId, message: impl Into<String>) {
        self.0.push(Violation { path: path.to_string(), rule, message: message.into() });
    }

    /// True when nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// How many were recorded.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// The violations, in the order found.
    pub fn iter(&self) -> std::slice::Iter<'_, Violation> {
        self.0.iter()
    }

    /// `Ok(())` when empty, else `Err(self)`.
    pub fn into_result(self) -> Result<(), Violations> {
        if self.0.is_empty() { Ok(()) } else { Err(self) }
    }
}

impl IntoIterator for Violations {
    type Item = Violation;
    type IntoIter = std::vec::IntoIter<Violation>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl fmt::Display for Violations {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, v) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            v.fmt(f)?;
        }
        Ok(())
    }
}

impl std::error::Error for Violations {}

/// A message that knows the spec's rules for its fields.
pub trait Validate {
    /// Checks every rule; returns every violation, not just the first.
    ///
    /// # Errors
    ///
    /// [`Violations`] listing each broken rule with its field path.
    fn validate(&self) -> Result<(), Violations> {
        let mut out = Violations::new();
        self.validate_at(&FieldPath::ROOT, &mut out);
        out.into_result()
    }

    /// Checks every rule, recording violations under `path`.
    fn validate_at(&self, path: &FieldPath<'_>, out: &mut Violations);
}

impl<T: Validate + ?Sized> Validate for Box<T> {
    fn validate_at(&self, path: &FieldPath<'_>, out: &mut Violations) {
        (**self).validate_at(path, out);
    }
}

/// The checks the macro's expansion calls; public so that expansions in other crates reach them.
#[doc(hidden)]
pub mod check {
    use super::{FieldPath, RuleId, Violations};

    /// The characters the spec bans in names: U+0000-U+0008, U+000B, U+000C, U+000E-U+001F,
    /// U+007F-U+009F.
    pub fn is_banned_control(c: char) -> bool {
        matches!(c, '\u{0}'..='\u{8}' | '\u{b}' | '\u{c}' | '\u{e}'..='\u{1f}' | '\u{7f}'..='\u{9f}')
    }

    /// The bytes a secret key may hold: `[A-Za-z0-9._-]`.
    const SECRET_KEY_BYTES: [bool; 256] = {
        let mut t = [false; 256];
        let mut b = 0;
        while b < 256 {
            let c = b as u8;
            t[b] = c.is_ascii_alphanumeric() || c == b'.' || c == b'_' || c == b'-';
            b += 1;
        }
        t
    };

    /// A secret key is made of `[A-Za-z0-9._-]` and is not empty.
    #[inline]
    pub fn is_secret_key(k: &str) -> bool {
        !k.is_empty() && k.bytes().all(|b| SECRET_KEY_BYTES[b as usize])
    }

    /// Checks a secrets map in one pass: every key in the secret charset, and keys plus values
    /// within `max` bytes.
    #[inline]
    pub fn secret_map<'a, K, V, I>(map: I, max: usize, path: &FieldPath<'_>, out: &mut Violations)
    where
        K: AsRef<str> + 'a,
        V: AsRef<str> + 'a,
        I: IntoIterator<Item = (&'a K, &'a V)> + Copy,
    {
        let mut total = 0;
        let mut keys_ok = true;
        for (k, v) in map {
            let k = k.as_ref();
            total += k.len() + v.as_ref().len();
            keys_ok &= is_secret_key(k);
        }
        if !keys_ok {
            secret_keys(map, path, out);
        }
        if total > max {
            out.push(path, RuleId::MaxTotalBytes, format!("holds {total} bytes of keys and values, more than the limit of {max}"));
        }
    }

    /// Records a missing REQUIRED field.
    pub fn required(path: &FieldPath<'_>, out: &mut Violations) {
        out.push(path, RuleId::Required, "is REQUIRED");
    }

    /// Checks a string's size.
    #[inline]
    pub fn max_bytes(s: &str, max: usize, path: &FieldPath<'_>, out: &mut Violations) {
        if s.len() > max {
            out.push(path, RuleId::MaxBytes, format!("is {} bytes, more than the limit of {max}", s.len()));
        }
    }

    /// Checks the total size of a map (keys plus values).
    #[inline]
    pub fn max_total_map<'a, K, V, I>(map: I, max: usize, path: &FieldPath<'_>, out: &mut Violations)
    where
        K: AsRef<str> + 'a,
        V: AsRef<str> + 'a,
        I: IntoIterator<Item = (&'a K, &'a V)>,
    {
        let total: usize = map.into_iter().map(|(k, v)| k.as_ref().len() + v.as_ref().len()).sum();
        if total > max {
            out.push(path, RuleId::MaxTotalBytes, format!("holds {total} bytes of keys and values, more than the limit of {max}"));
        }
    }

    /// Checks the total size of a repeated string.
    #[inline]
    pub fn max_total_list<S: AsRef<str>>(list: &[S], max: usize, path: &FieldPath<'_>, out: &mut Violations) {
        let total: usize = list.iter().map(|s| s.as_ref().len()).sum();
        if total > max {
            out.push(path, RuleId::MaxTotalBytes, format!("holds {total} bytes, more than the limit of {max}"));
        }
    }

    /// Checks a number is not negative.
    #[inline]
    pub fn non_negative<N: PartialOrd + Default>(n: N, path: &FieldPath<'_>, out: &mut Violations) {
        if n < N::default() {
            out.push(path, RuleId::NonNegative, "MUST NOT be negative");
        }
    }

    /// Checks a name has none of the banned control characters.
    #[inline]
    pub fn no_control_chars(s: &str, path: &FieldPath<'_>, out: &mut Violations) {
        // Every banned character is below U+0020, U+007F, or encoded with a 0xC2 lead byte
        // (U+0080-U+009F): a byte scan rules out almost every name without decoding it.
        if s.bytes().all(|b| b >= 0x20 && b != 0x7f && b != 0xc2) {
            return;
        }
        if let Some(pos) = s.chars().position(is_banned_control) {
            out.push(path, RuleId::ControlChars, format!("holds a banned control character at character {pos}"));
        }
    }

    /// Checks every key of a secrets map.
    #[inline]
    pub fn secret_keys<'a, K, V, I>(map: I, path: &FieldPath<'_>, out: &mut Violations)
    where
        K: AsRef<str> + 'a,
        V: 'a,
        I: IntoIterator<Item = (&'a K, &'a V)>,
    {
        for (k, _) in map {
            let k = k.as_ref();
            if !is_secret_key(k) {
                // Keys may be shown; values never are.
                out.push(&path.key(k), RuleId::SecretKey, "secret keys hold only letters, digits, '.', '_' and '-'");
            }
        }
    }
}

/// Why [`validate_encoded`](crate::validate_encoded) refused a message.
#[derive(Debug)]
pub enum ValidateEncodedError {
    /// No message type has that full name.
    UnknownType(String),
    /// The bytes do not decode as that type.
    Decode(prost::DecodeError),
    /// The message decoded and broke the spec's rules.
    Invalid(Violations),
}

impl fmt::Display for ValidateEncodedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ValidateEncodedError::UnknownType(name) => write!(f, "no message type is named '{name}'"),
            ValidateEncodedError::Decode(e) => write!(f, "the bytes do not decode: {e}"),
            ValidateEncodedError::Invalid(v) => write!(f, "{} violation(s): {v}", v.len()),
        }
    }
}

impl std::error::Error for ValidateEncodedError {}

/// A request that breaks the spec's rules is the caller's error: INVALID_ARGUMENT, with every
/// violation's path and rule in the message (never a value).
#[cfg(any(feature = "client", feature = "server"))]
impl From<Violations> for tonic::Status {
    fn from(v: Violations) -> Self {
        tonic::Status::invalid_argument(v.to_string())
    }
}
