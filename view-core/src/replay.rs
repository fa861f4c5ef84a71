//! The offline parts of `csi-view replay`: the calls of a capture sent again and each answer
//! judged beside the recorded one. The sending is the viewer's (it needs a runtime); everything
//! it decides is here, without one.
//!
//! [`prepare`] reads every recorded call against the schema before anything is sent (a method
//! the schema lacks, a message that is not its type: one error naming the capture's line and,
//! for the bytes, the offset); [`plan`] says when each call may start (the recorded order, with
//! the overlap the recording had); [`ids`] follows the values the plugin generated from the
//! recording to the replay and rewrites requests with them; [`compare`] sets a replayed response
//! beside the recorded one; [`report`] holds the verdicts and prints them.
//!
//! Which values the plugin generates is a fact of the spec (`plugin_generated`, read from its
//! comments into the Model, and so into the facts every tool reads); that timestamps are left
//! uncompared is replay's own judgement, in [`compare`].

pub mod compare;
pub mod ids;
pub mod plan;
pub mod report;

use anyhow::{Result, anyhow};
use prost_reflect::{DynamicMessage, MessageDescriptor, MethodDescriptor};

use crate::capture::Capture;
use crate::schema::Schema;
use crate::text::decode_checked;
use plan::Timing;

/// One recorded call, read against the schema.
#[derive(Debug, Clone)]
pub struct RecordedCall {
    /// Its number in the capture.
    pub call: u64,
    /// The capture line it was read from.
    pub line: usize,
    /// The gRPC method path.
    pub method: String,
    /// The method.
    pub descriptor: MethodDescriptor,
    /// The request to send again; `None` when the call is not replayed ([`RecordedCall::skip`]).
    pub request: Option<DynamicMessage>,
    /// The recorded status code (-1: none).
    pub status: i32,
    /// The recorded status message.
    pub message: String,
    /// The recorded response, when there was one.
    pub response: Option<DynamicMessage>,
    /// When it ran.
    pub timing: Timing,
    /// Why the call is not sent again, when it is not.
    pub skip: Option<String>,
}

/// Reads every call of `capture` (named `name` in errors) as the types its method names.
///
/// # Errors
///
/// A method the schema does not have, or a recorded message that is not of its type, with the
/// capture's line (`name:LINE: call #N: ...`) and, for the bytes, the byte offset.
pub fn prepare(schema: &Schema, capture: &Capture, name: &str) -> Result<Vec<RecordedCall>> {
    capture
        .calls
        .iter()
        .zip(&capture.lines)
        .map(|(call, &line)| {
            let at = |what: String| anyhow!("{name}:{line}: call #{}: {what}", call.call);
            let descriptor = schema.find_method(&call.method).ok_or_else(|| {
                at(format!(
                    "method {} is not in the schema (give its spec with --spec-dir, --proto or --descriptor-set)",
                    call.method
                ))
            })?;
            let requests = call.request_bytes().map_err(|e| at(format!("requests: {e}")))?;
            let responses = call.response_bytes().map_err(|e| at(format!("responses: {e}")))?;
            let decode = |side: &str, desc: &MessageDescriptor, list: Vec<Vec<u8>>| {
                list.iter()
                    .enumerate()
                    .map(|(i, bytes)| {
                        let not = |e: String| {
                            at(format!("{side} {} is not a {}: {e}", i + 1, desc.full_name()))
                        };
                        decode_checked(desc, bytes, 0).map_err(|e| not(e.to_string()))
                    })
                    .collect::<Result<Vec<_>>>()
            };
            let mut requests = decode("request", &descriptor.input(), requests)?;
            let mut responses = decode("response", &descriptor.output(), responses)?;
            let streaming = descriptor.is_client_streaming() || descriptor.is_server_streaming();
            let skip = if streaming {
                Some("a streaming call (replay sends unary calls only)".to_owned())
            } else if requests.len() != 1 {
                Some(format!("the recording holds {} requests for this unary call", requests.len()))
            } else {
                None
            };
            let request = if skip.is_none() { requests.pop() } else { None };
            let response = if responses.len() == 1 { responses.pop() } else { None };
            Ok(RecordedCall {
                call: call.call,
                line,
                method: call.method.clone(),
                descriptor,
                request,
                status: call.status,
                message: call.message.clone(),
                response,
                timing: Timing { start_ns: call.start_unix_ns, duration_ns: call.duration_ns },
                skip,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Vec<RecordedCall>> {
        let schema = Schema::builtin()?;
        let capture = crate::capture::parse(text.as_bytes(), "c.jsonl")?;
        prepare(&schema, &capture, "c.jsonl")
    }

    const HEADER: &str =
        r#"{"csi_view_capture":1,"secrets":"blanked","upstream":"unix:///p.sock"}"#;

    fn line(method: &str, request: &str) -> String {
        format!(
            r#"{{"call":1,"method":"{method}","start":"x","start_unix_ns":5,"duration_ns":1,"status":0,"message":"","requests":["{request}"],"responses":[""]}}"#
        )
    }

    fn err(text: &str) -> String {
        parse(text).err().map(|e| e.to_string()).unwrap_or_default()
    }

    #[test]
    fn a_good_capture_reads_with_its_lines() {
        let text = format!("{HEADER}\n\n{}\n", line("/csi.v1.Identity/Probe", ""));
        let calls = parse(&text).expect("reads");
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].line, 3);
        assert!(calls[0].request.is_some() && calls[0].response.is_some());
        assert_eq!(calls[0].skip, None);
    }

    #[test]
    fn a_streaming_call_is_read_but_not_replayed() {
        let method = "/csi.v1.SnapshotMetadata/GetMetadataAllocated";
        let calls = parse(&format!("{HEADER}\n{}\n", line(method, ""))).expect("reads");
        assert!(calls[0].request.is_none());
        let skip = calls[0].skip.as_deref().unwrap_or_default();
        assert!(skip.contains("streaming"), "{skip}");
    }

    #[test]
    fn an_unknown_method_names_its_line() {
        let text = format!("{HEADER}\n{}\n", line("/csi.v1.Identity/Nope", ""));
        let e = err(&text);
        assert!(
            e.starts_with("c.jsonl:2: call #1: method /csi.v1.Identity/Nope is not in the schema"),
            "{e}"
        );
    }

    #[test]
    fn bad_base64_names_its_line_and_character() {
        let text = format!("{HEADER}\n{}\n", line("/csi.v1.Identity/Probe", "AB*D"));
        let e = err(&text);
        assert!(
            e.starts_with(
                "c.jsonl:2: requests: message 1 is not base64: invalid symbol at character 2"
            ),
            "{e}"
        );
    }

    #[test]
    fn bytes_that_are_not_the_type_name_their_offset() {
        // NodeGetInfoRequest is empty; field 1 as a length of 5 with 1 byte left.
        let text = format!("{HEADER}\n{}\n", line("/csi.v1.Controller/DeleteVolume", "CgVh"));
        let e = err(&text);
        assert!(
            e.starts_with("c.jsonl:2: call #1: request 1 is not a csi.v1.DeleteVolumeRequest: "),
            "{e}"
        );
        assert!(e.contains("at byte "), "{e}");
    }

    #[test]
    fn a_truncated_capture_says_so_with_its_line() {
        let full = line("/csi.v1.Identity/Probe", "");
        let text = format!("{HEADER}\n{full}\n{}", &full[..40]);
        let e = err(&text);
        assert!(
            e.starts_with("c.jsonl:3: not a recorded call: the line ends before the call does"),
            "{e}"
        );
    }
}
