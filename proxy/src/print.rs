//! How the proxy prints a completed call: a block of annotated text, or one JSON object per line.
//! Secret values are hidden in both.

use std::io::Write;
use std::time::SystemTime;

use anyhow::Result;
use csi_view_core::redact::redact;
use csi_view_core::rpcs::status_name;
use csi_view_core::schema::Schema;
use csi_view_core::text::{TextOptions, TextPrinter};
use prost_reflect::{DynamicMessage, MessageDescriptor};

use crate::tracker::{CallRecord, key_kind};
use csi_view_core::timestamp::{rfc3339, write_rfc3339};

/// One side of a call: its messages (in the call's record), and their type when the schema
/// knows the method.
pub(crate) struct Side<'a> {
    pub(crate) desc: Option<MessageDescriptor>,
    pub(crate) messages: Vec<&'a [u8]>,
}

/// A completed call as the logger saw it: the record, and what was made of it.
pub(crate) struct Seen<'a> {
    pub(crate) call: &'a CallRecord,
    pub(crate) start: SystemTime,
    /// The gRPC status code; -1 when the call ended without one.
    pub(crate) status: i32,
    /// The status message, scrubbed unless secrets are kept.
    pub(crate) message: &'a str,
    pub(crate) requests: Side<'a>,
    pub(crate) responses: Side<'a>,
    pub(crate) violations: &'a [String],
}

/// Prints `seen` as a block of annotated text, appended to `b`.
pub(crate) fn text(schema: &Schema, seen: &Seen<'_>, b: &mut Vec<u8>) -> Result<()> {
    write!(b, "#{} {} ", seen.call.id, seen.call.method)?;
    write_rfc3339(b, seen.start)?;
    // Milliseconds with three decimals: the duration rounded to the microsecond.
    let us = (seen.call.duration.as_nanos() + 500) / 1000;
    write!(b, " {}.{:03} ms {}", us / 1000, us % 1000, status_name(seen.status))?;
    if !seen.message.is_empty() {
        write!(b, ": {}", seen.message)?;
    }
    b.push(b'\n');
    for (what, side) in [("request", &seen.requests), ("response", &seen.responses)] {
        for (i, m) in side.messages.iter().enumerate() {
            write!(b, "  {what}")?;
            if side.messages.len() > 1 {
                write!(b, " {}", i + 1)?;
            }
            match &side.desc {
                Some(desc) => {
                    writeln!(b, ": {}", desc.full_name())?;
                    let options =
                        TextOptions { annotate: true, explain: false, show_secrets: false };
                    // Printed in place, two levels in; nothing is left of a message that does
                    // not decode but the reason.
                    let mark = b.len();
                    let printed = TextPrinter::new(schema, &mut *b, options, None)
                        .indented(2)
                        .print_fields(desc, m, 0);
                    if let Err(e) = printed {
                        b.truncate(mark);
                        writeln!(b, "    (cannot decode: {e})")?;
                    }
                }
                None => {
                    writeln!(b, ": {} bytes (method not in the schema; bytes not shown)", m.len())?
                }
            }
        }
    }
    for v in seen.violations {
        writeln!(b, "  violation: {v}")?;
    }
    for (other, method) in &seen.call.concurrent_with {
        writeln!(
            b,
            "  ! concurrent: call #{other} ({method}) on the same {} was in flight; the spec says a CO should not issue it",
            seen.call.key.as_deref().map_or("object", key_kind)
        )?;
    }
    if let Some(e) = &seen.call.proxy_error {
        writeln!(b, "  (answered by the proxy: {e})")?;
    }
    if let Some(n) = &seen.call.note {
        writeln!(b, "  (no answer on the wire: {n})")?;
    }
    Ok(())
}

/// Prints `seen` as one line of JSON.
pub(crate) fn json(schema: &Schema, seen: &Seen<'_>, out: &mut dyn Write) -> Result<()> {
    let decode = |s: &Side| -> Vec<serde_json::Value> {
        s.messages
            .iter()
            .map(|m| {
                let Some(desc) = &s.desc else {
                    return serde_json::json!({"bytes": m.len()});
                };
                match DynamicMessage::decode(desc.clone(), *m) {
                    Ok(mut msg) => {
                        redact(schema, &mut msg);
                        let opts = prost_reflect::SerializeOptions::new();
                        msg.serialize_with_options(serde_json::value::Serializer, &opts)
                            .unwrap_or(serde_json::Value::Null)
                    }
                    Err(e) => serde_json::json!({"error": e.to_string()}),
                }
            })
            .collect()
    };
    let v = serde_json::json!({
        "call": seen.call.id,
        "method": seen.call.method,
        "start": rfc3339(seen.start),
        "duration_us": seen.call.duration.as_micros(),
        "status": seen.status,
        "code": status_name(seen.status),
        "message": seen.message,
        "request_type": seen.requests.desc.as_ref().map(|d| d.full_name().to_owned()),
        "requests": decode(&seen.requests),
        "response_type": seen.responses.desc.as_ref().map(|d| d.full_name().to_owned()),
        "responses": decode(&seen.responses),
        "violations": seen.violations,
        "concurrent_with": seen.call.concurrent_with.iter().map(|(id, _)| id).collect::<Vec<_>>(),
        "proxy_error": seen.call.proxy_error,
        "note": seen.call.note,
    });
    serde_json::to_writer(&mut *out, &v)?;
    out.write_all(b"\n")?;
    Ok(())
}
