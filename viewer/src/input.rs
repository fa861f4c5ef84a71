//! Reading input: raw bytes, hex or base64 (detected, or forced), and gRPC length-prefixed
//! frames, each message with the offset it starts at so errors can point into the input.

use std::fmt;

use crate::wire::WireError;

/// How the input bytes are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
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
    if data.is_empty() {
        return Err(err(0, "empty input"));
    }
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
    if bytes.is_empty() {
        return Err(err(0, "empty input (no bytes after decoding)"));
    }
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
        if base64_value(b).is_none() && b != b'=' {
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

fn decode_hex(data: &[u8]) -> Result<Vec<u8>, InputError> {
    let mut out = Vec::with_capacity(data.len() / 2);
    let mut high: Option<(u8, usize)> = None;
    let skip = {
        let first = data.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(0);
        if data[first..].starts_with(b"0x") { first + 2 } else { 0 }
    };
    for (i, &b) in data.iter().enumerate().skip(skip) {
        if b.is_ascii_whitespace() {
            continue;
        }
        let v = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            b'A'..=b'F' => b - b'A' + 10,
            _ => return Err(err(i, format!("invalid hex digit {}", show_byte(b)))),
        };
        match high.take() {
            None => high = Some((v, i)),
            Some((h, _)) => out.push(h << 4 | v),
        }
    }
    if let Some((_, i)) = high {
        return Err(err(i, "odd number of hex digits"));
    }
    Ok(out)
}

fn base64_value(b: u8) -> Option<u8> {
    Some(match b {
        b'A'..=b'Z' => b - b'A',
        b'a'..=b'z' => b - b'a' + 26,
        b'0'..=b'9' => b - b'0' + 52,
        b'+' | b'-' => 62,
        b'/' | b'_' => 63,
        _ => return None,
    })
}

fn decode_base64(data: &[u8]) -> Result<Vec<u8>, InputError> {
    let mut out = Vec::with_capacity(data.len() * 3 / 4);
    let mut acc: u32 = 0;
    let mut bits = 0;
    let mut padding_at: Option<usize> = None;
    for (i, &b) in data.iter().enumerate() {
        if b.is_ascii_whitespace() {
            continue;
        }
        if b == b'=' {
            padding_at.get_or_insert(i);
            continue;
        }
        if let Some(p) = padding_at {
            return Err(err(p, "base64 padding before the end"));
        }
        let v = base64_value(b)
            .ok_or_else(|| err(i, format!("invalid base64 character {}", show_byte(b))))?;
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    if bits >= 6 {
        return Err(err(data.len(), "truncated base64 (a single character in the last group)"));
    }
    Ok(out)
}

fn show_byte(b: u8) -> String {
    if b.is_ascii_graphic() { format!("'{}'", b as char) } else { format!("0x{b:02x}") }
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
    let bytes = bytes.as_slice();
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < bytes.len() {
        let header = bytes.get(pos..pos + 5).ok_or_else(|| {
            err(pos, format!("truncated gRPC frame header ({} of 5 bytes)", bytes.len() - pos))
        })?;
        if header[0] > 1 {
            return Err(err(pos, format!("invalid gRPC compressed flag {}", header[0])));
        }
        if header[0] == 1 {
            return Err(err(pos, "compressed gRPC frame; decompress it first"));
        }
        let len = u32::from_be_bytes([header[1], header[2], header[3], header[4]]) as usize;
        let start = pos + 5;
        let left = bytes.len() - start;
        if len > left {
            return Err(err(
                pos + 1,
                format!("gRPC frame length {len} exceeds the {left} bytes left"),
            ));
        }
        out.push(Message { offset: start, bytes: bytes[start..start + len].to_vec() });
        pos = start + len;
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
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(char::from(b"0123456789abcdef"[usize::from(b >> 4)]));
        s.push(char::from(b"0123456789abcdef"[usize::from(b & 15)]));
    }
    s
}

/// Writes bytes as padded standard base64.
pub fn to_base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = (u32::from(chunk[0]) << 16)
            | (u32::from(chunk.get(1).copied().unwrap_or(0)) << 8)
            | u32::from(chunk.get(2).copied().unwrap_or(0));
        for i in 0..4 {
            if i <= chunk.len() {
                s.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                s.push('=');
            }
        }
    }
    s
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
    fn bad_text_points_at_the_byte() {
        assert_eq!(decode_text(b"0a0g".to_vec(), InputFormat::Hex).unwrap_err().0.offset, 3);
        assert_eq!(
            decode_text(Vec::new(), InputFormat::Auto).unwrap_err().0.message,
            "empty input"
        );
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
}
