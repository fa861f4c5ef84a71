//! The secret values a call's requests hold, found with the method's types (the one finder,
//! `csi_view_core::mask::secret_values`), for the runtime's one scrubbing rule
//! (`csikit_runtime::redact::scrub`) to take out of its status message before it is printed or
//! recorded: drivers echo their input in errors.

use csi_view_core::schema::Schema;
use prost_reflect::MessageDescriptor;

/// The secret string values of the requests, messages of type `desc` (none when the method, and
/// so the type, is unknown).
pub(crate) fn secret_values(
    schema: &Schema,
    desc: Option<&MessageDescriptor>,
    messages: &[Vec<u8>],
) -> Vec<String> {
    desc.map(|d| csi_view_core::mask::secret_values(schema, d, messages)).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_method_has_no_secrets_to_scrub() {
        assert!(secret_values(&Schema::builtin().expect("schema"), None, &[vec![1, 2]]).is_empty());
    }
}
