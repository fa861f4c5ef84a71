//! A shrunk history as csi-view's capture (view-core's format, one home): the header, then each
//! call as sent and answered, secrets blanked by view-core's mask and status messages scrubbed
//! of the values sent, written whole (a temporary file beside it, then a rename), so that
//! `csi-view replay CAPTURE --endpoint E` sends the same history to a fixed build and shows what
//! differs.

use std::path::Path;
use std::time::UNIX_EPOCH;

use csi_view_core::capture::{self, Call, Header};
use csi_view_core::mask::{SecretMask, redact_bytes};
use csi_view_core::schema::Schema;

use super::exec::Exchange;

/// Writes `exchanges` as a capture of calls to `upstream` at `path`; `secrets`: the values
/// sent, scrubbed from status messages.
///
/// # Errors
///
/// When the built-in schema cannot be read or the file cannot be written.
pub(crate) fn write(
    path: &Path,
    upstream: &str,
    exchanges: &[&Exchange],
    secrets: &[String],
) -> Result<(), String> {
    let schema = Schema::builtin().map_err(|e| format!("the built-in schema: {e:#}"))?;
    let header = Header {
        csi_view_capture: capture::VERSION,
        secrets: "blanked".to_owned(),
        upstream: upstream.to_owned(),
    };
    let mut text = serde_json::to_string(&header).map_err(|e| e.to_string())?;
    text.push('\n');
    for (i, x) in exchanges.iter().enumerate() {
        let Some(facts) = crate::exchange::method(x.rpc) else {
            return Err(format!("no facts for {} (an explorer bug)", x.rpc));
        };
        let method = schema
            .find_method(&facts.path)
            .ok_or_else(|| format!("{} is not in the built-in schema", facts.path))?;
        let blank = |desc: &prost_reflect::MessageDescriptor, bytes: &[u8]| {
            let mask = SecretMask::of_types(&schema, bytes, [desc]);
            capture::encode(&redact_bytes(desc, bytes, &mask))
        };
        let (status, message, responses) = match &x.answer {
            Ok(bytes) => (0, String::new(), vec![blank(&method.output(), bytes)]),
            Err((code, message)) => {
                let scrubbed = csikit::redact::scrub(message, secrets).into_owned();
                (*code as i32, scrubbed, Vec::new())
            }
        };
        let start_unix_ns = x.start.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let call = Call {
            call: u64::try_from(i + 1).unwrap_or(u64::MAX),
            method: facts.path.to_string(),
            start: csi_view_core::timestamp::rfc3339(x.start),
            start_unix_ns,
            duration_ns: u64::try_from(x.duration.as_nanos()).unwrap_or(u64::MAX),
            status,
            message,
            requests: vec![blank(&method.input(), &x.request)],
            responses,
        };
        text.push_str(&serde_json::to_string(&call).map_err(|e| e.to_string())?);
        text.push('\n');
    }
    csikit_runtime::fs::write_atomic(path, text.as_bytes())
        .map_err(|e| format!("cannot write the capture '{}': {e}", path.display()))
}

/// The request of `x` as canonical JSON with its secrets hidden, for the report.
pub(crate) fn request_json(schema: &Schema, x: &Exchange) -> serde_json::Value {
    let Some(facts) = crate::exchange::method(x.rpc) else { return serde_json::Value::Null };
    let Some(method) = schema.find_method(&facts.path) else { return serde_json::Value::Null };
    csi_view_core::render::to_json(schema, &method.input(), &x.request, false)
        .unwrap_or(serde_json::Value::Null)
}
