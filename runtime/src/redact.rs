//! Keeping secrets out of text: the `Debug` helpers the generated impls of messages that hold
//! `csi_secret` fields print with (map keys, never values), and [`scrub`], the one rule for
//! removing secret values from a message a driver wrote.

use std::borrow::Cow;
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

/// Secret values shorter than this many bytes are scrubbed only where they stand as a word of
/// their own (see [`scrub`]).
pub const SHORT_SECRET: usize = 4;

/// `message` with every secret value in it replaced by [`REDACTED`]: the one scrubbing rule, for
/// the status messages the server skeleton returns and logs and the messages csi-view's proxy
/// prints, in case a driver put a secret it was given into an error.
///
/// The word rule: a value of [`SHORT_SECRET`] bytes or more is replaced wherever it occurs; a
/// shorter one only where neither neighbouring character is alphanumeric. A one- to three-letter
/// value (a pin `42`, a user `ab`) occurs inside ordinary words and numbers, where it reveals
/// nothing, and cutting it out of them would garble the message. Neighbours are characters, not
/// words split at punctuation, so a short value that holds punctuation itself (`a:b`, `1.5`) is
/// still found. Every occurrence of every value is found in the original message (overlapping
/// ones too) before anything is replaced, so the order of `secrets` does not matter, a value that
/// holds another is replaced whole, and a value is never found inside a `<redacted>` put in for
/// another. Empty values are ignored. A message with nothing to replace is returned as it is,
/// without allocating.
///
/// ```
/// use csikit_runtime::redact::scrub;
/// let secrets = ["hunter2", "pw"];
/// assert_eq!(
///     scrub("bad password hunter2 for pw, pwd", &secrets),
///     "bad password <redacted> for <redacted>, pwd"
/// );
/// ```
pub fn scrub<'m, S: AsRef<str>>(message: &'m str, secrets: &[S]) -> Cow<'m, str> {
    let mut found = occurrences(message, secrets);
    if found.is_empty() {
        return Cow::Borrowed(message);
    }
    found.sort_unstable();
    let mut out = String::with_capacity(message.len());
    let mut copied = 0;
    let mut ranges = found.into_iter().peekable();
    while let Some((start, mut end)) = ranges.next() {
        // Join the occurrences that overlap this one.
        while let Some(&(next_start, next_end)) = ranges.peek() {
            if next_start >= end {
                break;
            }
            end = end.max(next_end);
            ranges.next();
        }
        out.push_str(&message[copied..start]);
        out.push_str(REDACTED);
        copied = end;
    }
    out.push_str(&message[copied..]);
    Cow::Owned(out)
}

/// The line (from 1) of `text` where a secret value first stands, by [`scrub`]'s word rule; `None`
/// when none does. For a log a driver wrote while it was sent these values: the line is said,
/// never the value.
///
/// ```
/// use csikit_runtime::redact::first_line_holding;
/// let log = "started\ncreate volume v1 with password=hunter2\n";
/// assert_eq!(first_line_holding(log, &["hunter2"]), Some(2));
/// assert_eq!(first_line_holding(log, &["pw"]), None);
/// ```
pub fn first_line_holding<S: AsRef<str>>(text: &str, secrets: &[S]) -> Option<usize> {
    let first = occurrences(text, secrets).into_iter().map(|(start, _)| start).min()?;
    Some(text[..first].matches('\n').count() + 1)
}

/// Every occurrence of every non-empty value of `secrets` in `message` by the word rule
/// (overlapping ones too), as byte ranges, unsorted.
fn occurrences<S: AsRef<str>>(message: &str, secrets: &[S]) -> Vec<(usize, usize)> {
    let mut found: Vec<(usize, usize)> = Vec::new();
    for secret in secrets.iter().map(AsRef::as_ref).filter(|s| !s.is_empty()) {
        let mut from = 0;
        while let Some(i) = message.get(from..).and_then(|rest| rest.find(secret)) {
            let (start, end) = (from + i, from + i + secret.len());
            if secret.len() >= SHORT_SECRET || stands_alone(message, start, end) {
                found.push((start, end));
            }
            // On to the next character, so overlapping occurrences are found too.
            from = start + message[start..].chars().next().map_or(1, char::len_utf8);
        }
    }
    found
}

/// Whether `message[start..end]` has no alphanumeric character on either side.
fn stands_alone(message: &str, start: usize, end: usize) -> bool {
    let before = message[..start].chars().next_back();
    let after = message[end..].chars().next();
    !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_secret_is_replaced_whatever_the_order() {
        for secrets in [["abc", "abcdef"], ["abcdef", "abc"]] {
            assert_eq!(
                scrub("bad password abcdef and abc", &secrets),
                "bad password <redacted> and <redacted>"
            );
        }
        assert!(matches!(scrub("nothing here", &["abcdef"]), Cow::Borrowed(_)));
        assert_eq!(scrub("x", &[""; 0]), "x");
        assert_eq!(scrub("an empty secret is no secret", &[""]), "an empty secret is no secret");
    }

    #[test]
    fn short_secrets_only_where_they_stand_alone() {
        let short = ["s", "ab"];
        assert_eq!(
            scrub("key 's' is wrong, so is ab; abs stays", &short),
            "key '<redacted>' is wrong, so is <redacted>; abs stays"
        );
        assert_eq!(scrub("s s-s", &["s"]), "<redacted> <redacted>-<redacted>");
        assert_eq!(scrub("ss", &["s"]), "ss");
        // Punctuation inside a short value does not hide it (a rule that splits words at
        // punctuation would never find these).
        assert_eq!(scrub("pin a:b rejected", &["a:b"]), "pin <redacted> rejected");
        assert_eq!(scrub("v=1.5;", &["1.5"]), "v=<redacted>;");
        // Non-ASCII letters are letters.
        assert_eq!(scrub("éab ab", &["ab"]), "éab <redacted>");
    }

    #[test]
    fn overlapping_and_nested_values_are_replaced_whole() {
        assert_eq!(scrub("xxababab!", &["abab"]), "xx<redacted>!");
        assert_eq!(scrub("key mysecret1 bad", &["secret", "mysecret1"]), "key <redacted> bad");
        assert_eq!(scrub("secretsecret", &["secret"]), "<redacted><redacted>");
        // A value is never found in the marker another one left.
        assert_eq!(scrub("pw hunter2", &["hunter2", "redacted"]), "pw <redacted>");
        assert_eq!(scrub("a <redacted> b", &["dact"]), "a <re<redacted>ed> b");
    }
}
