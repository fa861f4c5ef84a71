//! A message as `csi-view call` (and `replay`, the page) shows it: annotated text format from
//! the wire bytes ([`crate::text`]: presence, alpha, size limits; secrets hidden) or canonical
//! proto3 JSON (secrets hidden, default values on request), then scrubbed of the secret values
//! the call sent, so a plugin that echoes one into a field that is not secret still shows none.

use prost_reflect::{MessageDescriptor, SerializeOptions};

use crate::schema::Schema;
use crate::text::{PrintError, TextOptions, TextPrinter};
use crate::wire::WireError;

/// How to show a message.
#[derive(Debug, Clone, Copy, Default)]
pub struct RenderOptions {
    /// Canonical proto3 JSON instead of annotated text format.
    pub json: bool,
    /// JSON: include fields set to their default values.
    pub defaults: bool,
    /// Text: leave out the spec annotations.
    pub plain: bool,
}

/// A shown message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    /// The text, ending in a newline.
    pub text: String,
    /// A secret value sent was found in it (outside the secret fields) and hidden.
    pub scrubbed: bool,
}

/// Shows `bytes` as a message of type `desc`, then hides every value of `sent_secrets` in it.
///
/// # Errors
///
/// When the bytes are not a valid `desc`, with the byte offset.
pub fn render(
    schema: &Schema,
    desc: &MessageDescriptor,
    bytes: &[u8],
    options: RenderOptions,
    sent_secrets: &[String],
) -> Result<Rendered, WireError> {
    let text = if options.json {
        let value = to_json(schema, desc, bytes, options.defaults)?;
        let mut s = serde_json::to_string_pretty(&value).unwrap_or_default();
        s.push('\n');
        s
    } else {
        let mut out = Vec::new();
        let text_options =
            TextOptions { annotate: !options.plain, explain: false, show_secrets: false };
        match TextPrinter::new(schema, &mut out, text_options, None).print(desc, bytes, 0) {
            Ok(()) => {}
            Err(PrintError::Wire(e)) => return Err(e),
            // Writing to a Vec does not fail.
            Err(PrintError::Io(_)) => {}
        }
        String::from_utf8_lossy(&out).into_owned()
    };
    Ok(without_secrets(text, sent_secrets))
}

/// `text` with every value of `secrets` replaced (the runtime's one rule, `redact::scrub`).
pub fn without_secrets(text: String, secrets: &[String]) -> Rendered {
    match csikit::redact::scrub(&text, secrets) {
        std::borrow::Cow::Borrowed(_) => Rendered { text, scrubbed: false },
        std::borrow::Cow::Owned(s) => Rendered { text: s, scrubbed: true },
    }
}

/// `bytes` as canonical proto3 JSON, secret values hidden (`<redacted>`; map keys stay).
///
/// # Errors
///
/// When the bytes are not a valid `desc`, with the byte offset.
pub fn to_json(
    schema: &Schema,
    desc: &MessageDescriptor,
    bytes: &[u8],
    defaults: bool,
) -> Result<serde_json::Value, WireError> {
    let mut msg = crate::text::decode_checked(desc, bytes, 0)?;
    crate::redact::redact(schema, &mut msg);
    let options = SerializeOptions::new().skip_default_fields(!defaults);
    msg.serialize_with_options(serde_json::value::Serializer, &options)
        .map_err(|e| WireError::new(0, format!("cannot write JSON: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_hidden_in_both_forms_and_scrubbed_elsewhere() {
        let schema = Schema::builtin().expect("built in");
        let desc = schema.find_message("csi.v1.NodeStageVolumeRequest").expect("type");
        let msg = crate::request::parse_one(
            &desc,
            r#"{"volume_id": "v-hunter22", "secrets": {"pw": "hunter22"}, "volume_context": {"echo": "hunter22"}}"#,
        )
        .expect("request");
        let bytes = prost::Message::encode_to_vec(&msg);
        let sent = crate::request::secret_values(&schema, &msg);
        for json in [false, true] {
            let options = RenderOptions { json, ..RenderOptions::default() };
            let r = render(&schema, &desc, &bytes, options, &sent).expect("renders");
            assert!(!r.text.contains("hunter22"), "{}", r.text);
            assert!(r.scrubbed && r.text.contains("\"pw\""), "{}", r.text);
            // Unscrubbed, only the fields that are not secret hold it.
            let r = render(&schema, &desc, &bytes, options, &[]).expect("renders");
            assert_eq!(r.text.matches("hunter22").count(), 2, "{}", r.text);
        }
        let j = to_json(&schema, &desc, &[], true).expect("empty");
        assert_eq!(j["volumeId"], "", "{j}");
        assert!(
            to_json(&schema, &desc, &[], false)
                .expect("empty")
                .as_object()
                .is_some_and(|o| o.is_empty())
        );
    }
}
