//! The secret values a call's requests hold, found with the method's types, for the runtime's one
//! scrubbing rule (`csikit_runtime::redact::scrub`) to take out of its status message before it is
//! printed or recorded: drivers echo their input in errors.

use csi_view_core::mask::SecretMask;
use csi_view_core::schema::Schema;
use prost_reflect::MessageDescriptor;

/// The secret string values of the requests, messages of type `desc`.
pub(crate) fn secret_values(
    schema: &Schema,
    desc: Option<&MessageDescriptor>,
    messages: &[&[u8]],
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
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use csikit_runtime::redact::scrub;

    #[test]
    fn a_requests_secrets_are_found_and_scrubbed_from_the_status_message() {
        let schema = Schema::builtin().expect("the built-in schema");
        let desc = schema.find_message("csi.v1.CreateVolumeRequest").expect("known");
        let request = prost::Message::encode_to_vec(&csikit::v1::CreateVolumeRequest {
            name: "pw-volume".into(),
            secrets: [("password".to_owned(), "hunter2".to_owned()), ("pin".into(), "pw".into())]
                .into(),
            ..Default::default()
        });
        let mut found = secret_values(&schema, Some(&desc), &[&request]);
        found.sort();
        assert_eq!(found, ["hunter2", "pw"]);
        assert_eq!(
            scrub("bad password hunter2 for pw, pwd on pw-volume", &found),
            "bad password <redacted> for <redacted>, pwd on <redacted>-volume"
        );
        assert!(secret_values(&schema, None, &[&[1, 2]]).is_empty());
    }
}
