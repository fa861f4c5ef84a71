//! Reading input: raw bytes, hex or base64 (detected, or forced), and gRPC length-prefixed
//! frames, each message with the offset it starts at so errors can point into the input.

use std::fmt;

use crate::wire::WireError;

/// How the input bytes are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum InputFormat {
    /// Decide from the bytes: hex if only hex digits and spaces, else base64 if it decodes, else raw.
    Auto,
    /// The bytes as they are.
    Raw,
    /// Hexadecimal digits; whitespace is ignored.
    Hex,
    /// Standard or URL-safe base64, padded or not; whitespace is ignored.
    Base64,
}

/// One message of the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// Offset of the message's first byte in the decoded input.
    pub offset: usize,
    /// The message bytes.
    pub bytes: Vec<u8>,
}

/// Bad input: what and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError(pub WireError);

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for InputError {}

impl From<WireError> for InputError {
    fn from(e: WireError) -> Self {
        InputError(e)
    }
}

fn err(offset: usize, message: impl Into<String>) -> InputError {
    InputError(WireError::new(offset, message))
}

/// Decodes `data` written in `format` into bytes; returns the format actually used.
///
/// # Errors
///
/// Empty input, or text that is not valid in a forced format (offset in the text).
pub fn decode_text(
    data: Vec<u8>,
    format: InputFormat,
) -> Result<(Vec<u8>, InputFormat), InputError> {
    // Zero bytes is a message too: every field unset (ProbeRequest's only form, say).
    let format = match format {
        InputFormat::Auto => detect_format(&data),
        f => f,
    };
    // Raw input is used as it is: no copy, so peak memory stays near the input size.
    let bytes = match format {
        InputFormat::Hex => decode_hex(&data)?,
        InputFormat::Base64 => decode_base64(&data)?,
        InputFormat::Raw | InputFormat::Auto => data,
    };
    Ok((bytes, format))
}

/// Guesses how `data` is written: all hex digits (an even count) means hex; only base64
/// characters that decode means base64; anything else is raw bytes.
pub fn detect_format(data: &[u8]) -> InputFormat {
    let first = data.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(data.len());
    let hex_start = if data[first..].starts_with(b"0x") { first + 2 } else { first };
    let (mut hex, mut b64) = (true, true);
    let mut hex_digits = 0usize;
    for (i, &b) in data.iter().enumerate() {
        if b.is_ascii_whitespace() {
            continue;
        }
        if i >= hex_start {
            if b.is_ascii_hexdigit() {
                hex_digits += 1;
            } else {
                hex = false;
            }
        }
        if !is_base64_symbol(b) && b != b'=' {
            b64 = false;
        }
        // Raw protobuf almost always has a byte that is neither (a tag or a length), early.
        if !hex && !b64 {
            return InputFormat::Raw;
        }
    }
    if hex && hex_digits > 0 && hex_digits.is_multiple_of(2) {
        return InputFormat::Hex;
    }
    if b64 && first < data.len() && decode_base64(data).is_ok() {
        return InputFormat::Base64;
    }
    InputFormat::Raw
}

/// Whitespace that may stand anywhere in hex or base64 input (line breaks, indentation).
const WHITESPACE: &str = " \t\r\n\x0b\x0c";

/// The codecs, from `data-encoding`: hex in either case, and base64 in the standard and the
/// URL-safe alphabet, padded or not, all ignoring whitespace.
struct Codecs {
    hex: data_encoding::Encoding,
    base64: [data_encoding::Encoding; 4],
}

static CODECS: std::sync::LazyLock<Codecs> = std::sync::LazyLock::new(|| {
    let spec = |symbols: &str, padding: bool| {
        let mut spec = data_encoding::Specification::new();
        spec.symbols.push_str(symbols);
        spec.padding = padding.then_some('=');
        spec.ignore.push_str(WHITESPACE);
        if symbols.len() == 16 {
            spec.translate.from.push_str("ABCDEF");
            spec.translate.to.push_str("abcdef");
        }
        spec.check_trailing_bits = false;
        spec.encoding()
    };
    const STANDARD: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const URL_SAFE: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    // The specifications are constants that data-encoding accepts; a failure is a bug here.
    #[allow(clippy::expect_used, reason = "constant specifications, checked by the tests")]
    let codecs = Codecs {
        hex: spec("0123456789abcdef", false).expect("hex specification"),
        base64: [
            spec(STANDARD, true).expect("base64 specification"),
            spec(STANDARD, false).expect("base64 specification"),
            spec(URL_SAFE, true).expect("base64url specification"),
            spec(URL_SAFE, false).expect("base64url specification"),
        ],
    };
    codecs
});

/// A symbol of base64, in the standard or the URL-safe alphabet.
fn is_base64_symbol(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'-' | b'_')
}

fn decode_hex(data: &[u8]) -> Result<Vec<u8>, InputError> {
    let first = data.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(0);
    let skip = if data[first..].starts_with(b"0x") { first + 2 } else { 0 };
    CODECS.hex.decode(&data[skip..]).map_err(|e| {
        let at = skip + e.position;
        match e.kind {
            data_encoding::DecodeKind::Length => err(at, "odd number of hex digits"),
            _ => err(
                at,
                format!(
                    "invalid hex digit {}",
                    data.get(at).map_or_else(String::new, |b| show_byte(*b))
                ),
            ),
        }
    })
}

fn decode_base64(data: &[u8]) -> Result<Vec<u8>, InputError> {
    let url_safe = data.iter().any(|b| matches!(b, b'-' | b'_'));
    let padded = data.contains(&b'=');
    let codec = &CODECS.base64[usize::from(url_safe) * 2 + usize::from(!padded)];
    codec.decode(data).map_err(|e| {
        let at = e.position;
        match e.kind {
            data_encoding::DecodeKind::Symbol => err(
                at,
                format!(
                    "invalid base64 character {}",
                    data.get(at).map_or_else(String::new, |b| show_byte(*b))
                ),
            ),
            data_encoding::DecodeKind::Padding => err(at, "base64 padding before the end"),
            kind => err(at, format!("invalid base64: {kind}")),
        }
    })
}

fn show_byte(b: u8) -> String {
    if b.is_ascii_graphic() { format!("'{}'", b as char) } else { format!("0x{b:02x}") }
}

/// One length-prefixed gRPC message of an input, read in place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GrpcFrame<'a> {
    /// Offset of its five-byte prefix in the input.
    pub offset: usize,
    /// The prefix's first byte: 0 uncompressed, 1 compressed; gRPC defines no other.
    pub flag: u8,
    /// The message's bytes, as they came (compressed ones too).
    pub payload: &'a [u8],
}

/// The end of an input that is not a whole gRPC frame: what [`grpc_frames`] ends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GrpcTail {
    /// Fewer than the prefix's five bytes, at `offset`.
    Header {
        /// Where the prefix starts.
        offset: usize,
        /// How many of its bytes there are.
        have: usize,
    },
    /// A prefix at `offset` whose length is more than the bytes after it.
    Payload {
        /// Where the prefix starts.
        offset: usize,
        /// The length it says.
        len: usize,
        /// The bytes after it.
        left: usize,
    },
}

impl From<GrpcTail> for InputError {
    fn from(tail: GrpcTail) -> InputError {
        match tail {
            GrpcTail::Header { offset, have } => {
                err(offset, format!("truncated gRPC frame header ({have} of 5 bytes)"))
            }
            // The length's first byte is where the input goes wrong.
            GrpcTail::Payload { offset, len, left } => {
                err(offset + 1, format!("gRPC frame length {len} exceeds the {left} bytes left"))
            }
        }
    }
}

/// The gRPC frames of `bytes`, one after another: csi-view's one reader of gRPC's length
/// prefix (a flag byte, then the length as four big-endian bytes), for the read commands and the
/// proxy's logger alike. An input that ends inside a frame ends with [`GrpcTail`]. It allocates
/// nothing: each frame is a slice of the input.
pub fn grpc_frames(bytes: &[u8]) -> impl Iterator<Item = Result<GrpcFrame<'_>, GrpcTail>> {
    let mut pos = 0_usize;
    std::iter::from_fn(move || {
        let offset = pos;
        let rest = bytes.get(offset..).filter(|r| !r.is_empty())?;
        // Nothing follows a tail.
        pos = bytes.len();
        let Some((&[flag, a, b, c, d], after)) = rest.split_first_chunk::<5>() else {
            return Some(Err(GrpcTail::Header { offset, have: rest.len() }));
        };
        let len = u32::from_be_bytes([a, b, c, d]) as usize;
        let Some(payload) = after.get(..len) else {
            return Some(Err(GrpcTail::Payload { offset, len, left: after.len() }));
        };
        pos = offset + 5 + len;
        Some(Ok(GrpcFrame { offset, flag, payload }))
    })
}

/// Splits `bytes` into messages: the whole input, or gRPC frames when `grpc` is set.
///
/// # Errors
///
/// A truncated frame header, a compressed frame, or a frame length past the end of the input.
pub fn split_messages(bytes: Vec<u8>, grpc: bool) -> Result<Vec<Message>, InputError> {
    if !grpc {
        return Ok(vec![Message { offset: 0, bytes }]);
    }
    let mut out = Vec::new();
    for frame in grpc_frames(&bytes) {
        let GrpcFrame { offset, flag, payload } = frame?;
        match flag {
            0 => out.push(Message { offset: offset + 5, bytes: payload.to_vec() }),
            1 => return Err(err(offset, "compressed gRPC frame; decompress it first")),
            _ => return Err(err(offset, format!("invalid gRPC compressed flag {flag}"))),
        }
    }
    Ok(out)
}

/// Reads a whole input and splits it into messages.
///
/// # Errors
///
/// See [`decode_text`] and [`split_messages`].
pub fn parse_input(
    data: Vec<u8>,
    format: InputFormat,
    grpc: bool,
) -> Result<Vec<Message>, InputError> {
    let (bytes, _) = decode_text(data, format)?;
    split_messages(bytes, grpc)
}

/// Wraps `bytes` in one gRPC frame (uncompressed).
///
/// # Errors
///
/// When the message is larger than a frame can say (4 GiB).
pub fn grpc_frame(bytes: &[u8]) -> Result<Vec<u8>, InputError> {
    let len =
        u32::try_from(bytes.len()).map_err(|_| err(0, "message too large for a gRPC frame"))?;
    let mut out = Vec::with_capacity(bytes.len() + 5);
    out.push(0);
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(bytes);
    Ok(out)
}

/// Writes bytes as lowercase hex.
pub fn to_hex(bytes: &[u8]) -> String {
    data_encoding::HEXLOWER.encode(bytes)
}

/// Writes bytes as padded standard base64.
pub fn to_base64(bytes: &[u8]) -> String {
    data_encoding::BASE64.encode(bytes)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "a failing unwrap is a failing test")]
mod tests {
    use super::*;

    #[test]
    fn detects_formats() {
        assert_eq!(detect_format(b"0a 03 61 62 63\n"), InputFormat::Hex);
        assert_eq!(detect_format(b"CgNhYmM=\n"), InputFormat::Base64);
        assert_eq!(detect_format(b"\x0a\x03abc"), InputFormat::Raw);
        assert_eq!(
            decode_text(b"0a03616263".to_vec(), InputFormat::Auto).unwrap().0,
            b"\x0a\x03abc"
        );
        assert_eq!(decode_text(b"CgNhYmM=".to_vec(), InputFormat::Auto).unwrap().0, b"\x0a\x03abc");
        assert_eq!(
            decode_text(b"CgNhYmM".to_vec(), InputFormat::Base64).unwrap().0,
            b"\x0a\x03abc"
        );
    }

    #[test]
    fn round_trips_encodings() {
        for data in [&b""[..], b"a", b"ab", b"abc", b"\xff\x00\x10abcd"] {
            assert_eq!(decode_base64(to_base64(data).as_bytes()).unwrap(), data);
            assert_eq!(decode_hex(to_hex(data).as_bytes()).unwrap(), data);
        }
    }

    #[test]
    fn whitespace_case_and_alphabets() {
        assert_eq!(decode_hex(b" 0x0A 03\n61 62\t63 ").unwrap(), b"\x0a\x03abc");
        assert_eq!(decode_base64(b"Cg Nh\nYmM=\n").unwrap(), b"\x0a\x03abc");
        assert_eq!(decode_base64(b"_-8").unwrap(), [0xff, 0xef]);
        assert_eq!(decode_base64(b"/+8=").unwrap(), [0xff, 0xef]);
        let e = decode_base64(b"Cg*hYmM=").unwrap_err();
        assert_eq!((e.0.offset, e.0.message.as_str()), (2, "invalid base64 character '*'"));
    }

    #[test]
    fn bad_text_points_at_the_byte() {
        assert_eq!(decode_text(b"0a0g".to_vec(), InputFormat::Hex).unwrap_err().0.offset, 3);
        assert!(decode_text(Vec::new(), InputFormat::Auto).unwrap().0.is_empty());
        assert!(decode_text(b"0a0".to_vec(), InputFormat::Hex).is_err());
    }

    #[test]
    fn splits_grpc_frames() {
        let mut data = grpc_frame(b"\x08\x01").unwrap();
        data.extend(grpc_frame(b"").unwrap());
        let msgs = split_messages(data, true).unwrap();
        assert_eq!(msgs.len(), 2);
        assert_eq!(msgs[0], Message { offset: 5, bytes: b"\x08\x01".to_vec() });
        assert!(msgs[1].bytes.is_empty());
        let huge = vec![0, 0xff, 0xff, 0xff, 0xff, 1];
        let e = split_messages(huge, true).unwrap_err();
        assert_eq!(e.0.offset, 1);
        assert!(split_messages(vec![0, 0], true).is_err());
        assert!(split_messages(vec![1, 0, 0, 0, 0], true).is_err());
    }

    #[test]
    fn grpc_frames_are_read_in_place_and_end_on_a_tail() {
        let mut data = grpc_frame(b"\x08\x01").unwrap();
        data.extend(grpc_frame(b"").unwrap());
        // A compressed frame is read as it came; the flag says what it is.
        data.extend([1, 0, 0, 0, 1, 0xff]);
        let frames: Vec<_> = grpc_frames(&data).collect();
        assert_eq!(
            frames,
            [
                Ok(GrpcFrame { offset: 0, flag: 0, payload: &b"\x08\x01"[..] }),
                Ok(GrpcFrame { offset: 7, flag: 0, payload: &[][..] }),
                Ok(GrpcFrame { offset: 12, flag: 1, payload: &[0xff][..] }),
            ]
        );
        assert_eq!(grpc_frames(&[]).count(), 0);
        // Ends: inside a prefix, or a length past the end; nothing is read after either.
        let mut cut = grpc_frame(b"ab").unwrap();
        cut.extend([0, 0, 0]);
        let read: Vec<_> = grpc_frames(&cut).collect();
        assert_eq!(read[1], Err(GrpcTail::Header { offset: 7, have: 3 }));
        assert_eq!(read.len(), 2);
        let long = [0, 0, 0, 0, 9, 1, 0, 0, 0, 0, 0];
        let read: Vec<_> = grpc_frames(&long).collect();
        assert_eq!(read, [Err(GrpcTail::Payload { offset: 0, len: 9, left: 6 })]);
        // The errors the read commands give for them.
        let e = split_messages(cut, true).unwrap_err();
        assert_eq!(
            (e.0.offset, e.0.message.as_str()),
            (7, "truncated gRPC frame header (3 of 5 bytes)")
        );
        let e = split_messages(long.to_vec(), true).unwrap_err();
        assert_eq!(
            (e.0.offset, e.0.message.as_str()),
            (1, "gRPC frame length 9 exceeds the 6 bytes left")
        );
        let e = split_messages(vec![2, 0, 0, 0, 0], true).unwrap_err();
        assert_eq!((e.0.offset, e.0.message.as_str()), (0, "invalid gRPC compressed flag 2"));
    }
}
