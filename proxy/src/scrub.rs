//! Secret values scrubbed from a status message before it is printed or recorded: drivers echo
//! their input in errors.

use csi_view_core::mask::SecretMask;
use csi_view_core::redact::REDACTED;
use csi_view_core::schema::Schema;
use prost_reflect::MessageDescriptor;

/// The secret string values of the requests (to scrub them from status messages).
pub(crate) fn secret_values(
    schema: &Schema,
    desc: Option<&MessageDescriptor>,
    messages: &[Vec<u8>],
) -> Vec<String> {
    let Some(desc) = desc else { return Vec::new() };
    let mut out = Vec::new();
    for m in messages {
        let mask = SecretMask::of_types(schema, m, [desc]);
        for r in mask.ranges() {
            if let Some(v) = m.get(r.clone())
                && let Ok(s) = std::str::from_utf8(v)
                && !s.is_empty()
            {
                out.push(s.to_owned());
            }
        }
    }
    // Longest first, so a value holding another is replaced whole.
    out.sort_by_key(|s| std::cmp::Reverse(s.len()));
    out
}

/// `message` with every secret value replaced: values of 4 bytes or more wherever they occur,
/// shorter ones where they stand as a whole word.
pub(crate) fn scrub(message: &str, secrets: &[String]) -> String {
    let mut out = message.to_owned();
    for s in secrets {
        if s.len() >= 4 {
            out = out.replace(s.as_str(), REDACTED);
        } else {
            out = out
                .split_inclusive(|c: char| !c.is_alphanumeric())
                .map(|w| {
                    let word = w.trim_end_matches(|c: char| !c.is_alphanumeric());
                    if word == s { format!("{REDACTED}{}", &w[word.len()..]) } else { w.to_owned() }
                })
                .collect();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_messages_are_scrubbed() {
        let secrets = vec!["hunter2".to_owned(), "pw".to_owned()];
        assert_eq!(
            scrub("bad password hunter2 for pw, pwd", &secrets),
            "bad password <redacted> for <redacted>, pwd"
        );
    }
}
