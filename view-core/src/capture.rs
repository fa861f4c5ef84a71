//! The capture format `csi-view proxy --record` writes and the read commands take with
//! `--capture`: JSON Lines, one object per line, each line written whole.
//!
//! The first line says what the file is:
//!
//! ```json
//! {"csi_view_capture":1,"secrets":"blanked","upstream":"unix:///run/plugin.sock"}
//! ```
//!
//! `secrets` is `blanked` (the default: every value the method's types mark secret is replaced by
//! `<redacted>` in the stored bytes, numbers by zero, so the capture can be shared) or `kept`
//! (`--keep-secrets`: the bytes exactly as sent; the file is then created with mode 0600).
//! Every other line is one call, in the order calls completed:
//!
//! ```json
//! {"call":7,"method":"/csi.v1.Node/NodePublishVolume","start":"2026-11-23T08:12:01.250113Z",
//!  "start_unix_ns":1795421521250113000,"duration_ns":912000,"status":0,"message":"",
//!  "requests":["CgV2b2wtMRIK..."],"responses":[""]}
//! ```
//!
//! `requests` and `responses` hold each gRPC message (the payload of each length-prefixed frame)
//! in standard base64; an empty string is the empty message. `status` is the gRPC status code
//! (`message` its text, secrets scrubbed unless kept); `-1` when the call ended without one (the
//! plugin ended the stream with no status, or the client went away from a call the proxy
//! answered). A call cut short by its connection closing has UNAVAILABLE (14, the plugin's side
//! closed) or CANCELLED (1, the client's side), and `message` says so.

use std::io::BufRead;
use std::path::Path;

use anyhow::{Context, Result, anyhow, bail};
use serde::{Deserialize, Serialize};

use crate::rpcs::status_name;
use crate::schema::Schema;

/// The version of the format this module writes and reads.
pub const VERSION: u32 = 1;

/// The first line of a capture.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Header {
    /// The format version.
    pub csi_view_capture: u32,
    /// `blanked` or `kept`.
    pub secrets: String,
    /// The plugin the calls went to.
    pub upstream: String,
}

/// One recorded call.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Call {
    /// The call's number, from 1, in the order calls started.
    pub call: u64,
    /// The gRPC method path, `/package.Service/Method`.
    pub method: String,
    /// When it started, RFC 3339 UTC.
    pub start: String,
    /// When it started, nanoseconds since the Unix epoch.
    pub start_unix_ns: u128,
    /// How long it took, to the end of the response.
    pub duration_ns: u64,
    /// The gRPC status code; -1 when the call ended without one.
    pub status: i32,
    /// The status message.
    pub message: String,
    /// The request messages, base64.
    pub requests: Vec<String>,
    /// The response messages, base64.
    pub responses: Vec<String>,
}

impl Call {
    /// The request messages' bytes.
    ///
    /// # Errors
    ///
    /// When one is not base64.
    pub fn request_bytes(&self) -> Result<Vec<Vec<u8>>> {
        decode_all(&self.requests)
    }

    /// The response messages' bytes.
    ///
    /// # Errors
    ///
    /// When one is not base64.
    pub fn response_bytes(&self) -> Result<Vec<Vec<u8>>> {
        decode_all(&self.responses)
    }
}

/// Base64 for the capture's message fields.
pub fn encode(bytes: &[u8]) -> String {
    data_encoding::BASE64.encode(bytes)
}

fn decode_all(list: &[String]) -> Result<Vec<Vec<u8>>> {
    list.iter()
        .enumerate()
        .map(|(i, s)| {
            data_encoding::BASE64.decode(s.as_bytes()).map_err(|e| {
                anyhow!("message {} is not base64: {} at character {}", i + 1, e.kind, e.position)
            })
        })
        .collect()
}

/// A whole capture.
#[derive(Debug, Clone)]
pub struct Capture {
    /// Its first line.
    pub header: Header,
    /// Its calls.
    pub calls: Vec<Call>,
    /// The line of the file each call was read from (from 1), for errors about a call.
    pub lines: Vec<usize>,
}

/// One message of a capture, with the type its call's method names.
#[derive(Debug, Clone)]
pub struct Typed {
    /// The call's number.
    pub call: u64,
    /// The call's method path.
    pub method: String,
    /// The call's status name (`OK`, `NOT_FOUND`, `NO STATUS`).
    pub status: String,
    /// `request` or `response`.
    pub side: &'static str,
    /// Which of the side's messages this is (from 1), and how many it has.
    pub index: usize,
    /// How many messages the side has.
    pub of: usize,
    /// The message's type.
    pub desc: prost_reflect::MessageDescriptor,
    /// The message's bytes.
    pub bytes: Vec<u8>,
}

impl Capture {
    /// Every message, in order, each with the type its call's method names in `schema`.
    ///
    /// # Errors
    ///
    /// When a call's method is not in the schema (`call #N: method M is not in the schema`).
    pub fn typed(&self, schema: &Schema) -> Result<Vec<Typed>> {
        let mut out = Vec::new();
        for call in &self.calls {
            let method = schema.find_method(&call.method).ok_or_else(|| {
                anyhow!("call #{}: method {} is not in the schema", call.call, call.method)
            })?;
            let status = status_name(call.status);
            for (side, desc, list) in [
                ("request", method.input(), call.request_bytes()?),
                ("response", method.output(), call.response_bytes()?),
            ] {
                let of = list.len();
                for (i, bytes) in list.into_iter().enumerate() {
                    out.push(Typed {
                        call: call.call,
                        method: call.method.clone(),
                        status: status.clone(),
                        side,
                        index: i + 1,
                        of,
                        desc: desc.clone(),
                        bytes,
                    });
                }
            }
        }
        Ok(out)
    }
}

/// Reads a capture file.
///
/// # Errors
///
/// When the file cannot be read or a line is not what the format says (the line number is
/// given).
pub fn read(path: &Path) -> Result<Capture> {
    let file =
        std::fs::File::open(path).with_context(|| format!("cannot read '{}'", path.display()))?;
    parse(std::io::BufReader::new(file), &path.display().to_string())
}

/// Reads a capture from `input`; `name` is how errors name it.
///
/// # Errors
///
/// When a line cannot be read or is not what the format says (`name:line: why`).
pub fn parse(input: impl BufRead, name: &str) -> Result<Capture> {
    let mut lines = input.lines().enumerate();
    let Some((_, first)) = lines.next() else {
        bail!("{name}: empty file, not a csi-view capture");
    };
    let first = first.with_context(|| format!("{name}:1: cannot read"))?;
    let header: Header = serde_json::from_str(&first).map_err(|e| {
        anyhow!("{name}:1: not a csi-view capture (the first line must be its header): {e}")
    })?;
    if header.csi_view_capture != VERSION {
        bail!(
            "{name}:1: capture format version {} (this csi-view reads version {VERSION})",
            header.csi_view_capture
        );
    }
    let mut calls = Vec::new();
    let mut numbers = Vec::new();
    for (i, line) in lines {
        let line = line.with_context(|| format!("{name}:{}: cannot read", i + 1))?;
        if line.trim().is_empty() {
            continue;
        }
        let call: Call = serde_json::from_str(&line).map_err(|e| {
            if e.is_eof() {
                anyhow!(
                    "{name}:{}: not a recorded call: the line ends before the call does (a truncated capture?): {e}",
                    i + 1
                )
            } else {
                anyhow!("{name}:{}: not a recorded call: {e}", i + 1)
            }
        })?;
        for (what, list) in [("requests", &call.requests), ("responses", &call.responses)] {
            decode_all(list).map_err(|e| anyhow!("{name}:{}: {what}: {e}", i + 1))?;
        }
        calls.push(call);
        numbers.push(i + 1);
    }
    Ok(Capture { header, calls, lines: numbers })
}
