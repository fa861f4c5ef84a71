//! gRPC on the wire, as the proxy reads and writes it: length-prefixed messages, the coding of
//! `grpc-message`, and the statuses gRPC clients give an HTTP/2 reset or a non-gRPC HTTP answer.

use csi_view_core::input::grpc_frames;
use h2::Reason;
use percent_encoding::{AsciiSet, CONTROLS, utf8_percent_encode};

/// The payloads of the length-prefixed gRPC frames in `body`, read by view-core's one reader of
/// the prefix, in place: a compressed frame is kept as it came, and a truncated tail (a call cut
/// short) is dropped, as what was whole of it is still worth showing.
pub(crate) fn messages(body: &[u8]) -> impl Iterator<Item = &[u8]> {
    grpc_frames(body).map_while(Result::ok).map(|frame| frame.payload)
}

/// What gRPC percent-encodes in `grpc-message`: every byte outside printable ASCII, and `%`.
const GRPC_MESSAGE: &AsciiSet = &CONTROLS.add(b'%');

/// A `grpc-message` value decoded (gRPC's percent-encoding of UTF-8; bad UTF-8 is replaced).
pub(crate) fn percent_decode(v: &[u8]) -> String {
    percent_encoding::percent_decode(v).decode_utf8_lossy().into_owned()
}

/// `s` as a `grpc-message` value.
pub(crate) fn percent_encode(s: &str) -> String {
    utf8_percent_encode(s, GRPC_MESSAGE).to_string()
}

/// gRPC's status for a stream the server reset (as gRPC clients map it).
pub(crate) fn reset_status(code: u32) -> i32 {
    match Reason::from(code) {
        Reason::REFUSED_STREAM => 14,     // UNAVAILABLE
        Reason::CANCEL => 1,              // CANCELLED
        Reason::ENHANCE_YOUR_CALM => 8,   // RESOURCE_EXHAUSTED
        Reason::INADEQUATE_SECURITY => 7, // PERMISSION_DENIED
        _ => 13,                          // INTERNAL
    }
}

/// The name RFC 9113 gives an HTTP/2 error code (`CANCEL`), or `error code N`.
pub(crate) fn reset_name(code: u32) -> String {
    // h2 names the codes RFC 9113 defines and writes any other as `Reason(0x..)`.
    let name = format!("{:?}", Reason::from(code));
    if name.starts_with("Reason(") { format!("error code {code}") } else { name }
}

/// gRPC's mapping of a non-200 HTTP status to a status code.
pub(crate) fn http_status_code(status: &str) -> i32 {
    match status {
        "400" => 13,
        "401" => 16,
        "403" => 7,
        "404" => 12,
        "429" | "502" | "503" | "504" => 14,
        _ => 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grpc_frames_split_and_truncated_tails_dropped() {
        let body = [0, 0, 0, 0, 2, 8, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9, 1];
        assert_eq!(messages(&body).collect::<Vec<_>>(), [&[8, 1][..], &[]]);
        assert_eq!(messages(&[1, 0, 0, 0, 1, 7]).collect::<Vec<_>>(), [&[7][..]]);
    }

    #[test]
    fn grpc_message_coding_round_trips() {
        assert_eq!(percent_encode("100% ✓ done\n"), "100%25 %E2%9C%93 done%0A");
        assert_eq!(percent_decode(percent_encode("100% ✓ done\n").as_bytes()), "100% ✓ done\n");
        // Only two hex digits make an escape: a sign is not one (it was, read as a radix-16 number).
        assert_eq!(percent_decode(b"%+1 and %zz and 100%"), "%+1 and %zz and 100%");
        assert_eq!(percent_decode(b"bad %FF byte"), "bad \u{fffd} byte");
    }

    #[test]
    fn resets_are_named_and_mapped_as_grpc_clients_do() {
        assert_eq!(reset_name(8), "CANCEL");
        assert_eq!(reset_name(13), "HTTP_1_1_REQUIRED");
        assert_eq!(reset_name(42), "error code 42");
        assert_eq!([7, 8, 11, 12, 2, 42].map(reset_status), [14, 1, 8, 7, 13, 13]);
    }
}
