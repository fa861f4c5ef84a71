//! No secret value appears in the `Debug` output of any message holding secrets; the list of
//! such messages is generated from the Models (`support::SECRET_HOLDERS`), not picked by hand.

mod fill;
use csikit::registry as support;

use fill::{KEY_MARK, SECRET_MARK, filled};
use prost::Message as _;

fn is_secret(message: &str, field: &str) -> bool {
    support::packages()
        .iter()
        .filter_map(|(facts, _)| facts.message(message))
        .any(|m| m.field(field).is_some_and(|f| f.secret))
}

#[test]
fn debug_never_prints_a_secret_value() {
    assert!(
        !support::SECRET_HOLDERS.is_empty(),
        "the Models hold secrets; the list must not be empty"
    );
    let mut checked = Vec::new();
    for (facts, pool) in support::packages() {
        for &name in support::SECRET_HOLDERS.iter().filter(|n| facts.message(n).is_some()) {
            let desc = pool
                .get_message_by_name(name)
                .unwrap_or_else(|| panic!("'{name}' is in the descriptor pool"));
            let bytes = filled(&desc, &is_secret, 0).encode_to_vec();
            // The encoded message really carries the secret values the Debug output must hide.
            assert!(
                bytes.windows(SECRET_MARK.len()).any(|w| w == SECRET_MARK.as_bytes()),
                "'{name}' was filled with secrets"
            );
            let text = support::debug_of(name, &bytes).expect("known type").expect("decodes");
            assert!(!text.contains(SECRET_MARK), "'{name}' prints a secret value in Debug: {text}");
            assert!(text.contains(KEY_MARK), "'{name}' should still print map keys: {text}");
            assert!(
                text.contains(csikit::redact::REDACTED),
                "'{name}' should mark redacted values: {text}"
            );
            checked.push(name);
        }
    }
    checked.sort_unstable();
    checked.dedup();
    assert_eq!(checked.len(), support::SECRET_HOLDERS.len(), "every secret holder was checked");
}

#[test]
fn every_message_with_a_secret_field_is_a_holder() {
    for (facts, _) in support::packages() {
        for m in facts.messages.iter().filter(|m| m.fields.iter().any(|f| f.secret)) {
            assert!(
                support::SECRET_HOLDERS.contains(&&*m.full_name),
                "'{}' has a secret field",
                m.full_name
            );
        }
    }
}

#[test]
fn messages_without_secrets_print_their_values() {
    let pool = csikit::v1::descriptor_pool();
    let desc = pool.get_message_by_name("csi.v1.Volume").expect("csi.v1.Volume exists");
    let bytes = filled(&desc, &is_secret, 0).encode_to_vec();
    let text = support::debug_of("csi.v1.Volume", &bytes).expect("known type").expect("decodes");
    assert!(text.contains("text") && !text.contains(csikit::redact::REDACTED), "{text}");
}
