//! `Debug` helpers for secrets: the generated `Debug` impls of messages that hold `csi_secret`
//! fields print map keys but never values.

use std::collections::HashMap;
use std::fmt;

/// What a redacted value prints as.
pub const REDACTED: &str = "<redacted>";

/// Prints `<redacted>` in place of a secret value.
pub struct Redacted;

impl fmt::Debug for Redacted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

/// Prints a secret map with its keys, sorted, and every value redacted.
pub struct RedactedMap<'a, V>(pub &'a HashMap<String, V>);

impl<V> fmt::Debug for RedactedMap<'_, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut keys: Vec<&String> = self.0.keys().collect();
        keys.sort();
        f.debug_map().entries(keys.into_iter().map(|k| (k, Redacted))).finish()
    }
}

/// Prints a repeated secret as its length only.
pub struct RedactedList(pub usize);

impl fmt::Debug for RedactedList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{REDACTED}; {}]", self.0)
    }
}

/// Prints an enum field by value name, or the number when the value is unknown.
pub struct EnumValue(pub i32, pub fn(i32) -> Option<&'static str>);

impl fmt::Debug for EnumValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.1)(self.0) {
            Some(name) => f.write_str(name),
            None => fmt::Debug::fmt(&self.0, f),
        }
    }
}
