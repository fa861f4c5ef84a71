//! The protobuf wire format, read without a schema: tags, varints and length-delimited records,
//! each with the byte offset it starts at, so every error can say where the bytes went wrong.

use std::fmt;

/// How deep groups and nested messages may go before the bytes are rejected (protoc uses 100).
pub const MAX_DEPTH: usize = 100;

/// The largest field number protobuf allows.
pub const MAX_FIELD_NUMBER: u64 = (1 << 29) - 1;

/// A wire type, as the low three bits of a tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireType {
    /// 0: a base-128 varint.
    Varint,
    /// 1: eight little-endian bytes.
    I64,
    /// 2: a length, then that many bytes.
    Len,
    /// 3: start of a (deprecated) group.
    StartGroup,
    /// 4: end of a group.
    EndGroup,
    /// 5: four little-endian bytes.
    I32,
}

impl WireType {
    /// The wire type of the low three bits of a tag, if valid.
    pub fn from_bits(bits: u64) -> Option<WireType> {
        Some(match bits {
            0 => WireType::Varint,
            1 => WireType::I64,
            2 => WireType::Len,
            3 => WireType::StartGroup,
            4 => WireType::EndGroup,
            5 => WireType::I32,
            _ => return None,
        })
    }

    /// The three-bit number of this wire type.
    pub fn bits(self) -> u8 {
        match self {
            WireType::Varint => 0,
            WireType::I64 => 1,
            WireType::Len => 2,
            WireType::StartGroup => 3,
            WireType::EndGroup => 4,
            WireType::I32 => 5,
        }
    }

    /// The short name protoscope uses.
    pub fn name(self) -> &'static str {
        match self {
            WireType::Varint => "VARINT",
            WireType::I64 => "I64",
            WireType::Len => "LEN",
            WireType::StartGroup => "SGROUP",
            WireType::EndGroup => "EGROUP",
            WireType::I32 => "I32",
        }
    }
}

impl fmt::Display for WireType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Bytes that are not valid protobuf, with the absolute offset where the problem starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireError {
    /// Byte offset in the whole input.
    pub offset: usize,
    /// What is wrong, lowercase, no trailing period.
    pub message: String,
}

impl WireError {
    /// An error at `offset`.
    pub fn new(offset: usize, message: impl Into<String>) -> WireError {
        WireError { offset, message: message.into() }
    }
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.message, self.offset)
    }
}

impl std::error::Error for WireError {}

/// The value of one field record, borrowing from the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireValue<'a> {
    /// A varint.
    Varint(u64),
    /// Eight bytes.
    I64(u64),
    /// Four bytes.
    I32(u32),
    /// A length-delimited payload.
    Len(&'a [u8]),
    /// The bytes between a start-group tag and its end-group tag.
    Group(&'a [u8]),
}

/// One field record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record<'a> {
    /// Absolute offset of the tag.
    pub offset: usize,
    /// Absolute offset of the value (after the tag, and after the length for `Len`).
    pub value_offset: usize,
    /// Absolute offset just past the record.
    pub end: usize,
    /// Field number.
    pub number: u32,
    /// Wire type.
    pub wire_type: WireType,
    /// The value.
    pub value: WireValue<'a>,
}

/// Reads a varint at `pos`; returns the value and the position after it.
///
/// # Errors
///
/// When the bytes end inside the varint or it is longer than ten bytes.
pub fn read_varint(buf: &[u8], pos: usize, base: usize) -> Result<(u64, usize), WireError> {
    let mut value: u64 = 0;
    for i in 0..10 {
        let Some(&b) = buf.get(pos + i) else {
            return Err(WireError::new(base + pos, "truncated varint"));
        };
        if i == 9 && b > 1 {
            return Err(WireError::new(base + pos, "varint longer than 64 bits"));
        }
        value |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Ok((value, pos + i + 1));
        }
    }
    Err(WireError::new(base + pos, "varint longer than 10 bytes"))
}

/// Iterates over the records of one message. `base` is the absolute offset of `buf` in the input.
#[derive(Debug, Clone)]
pub struct Records<'a> {
    buf: &'a [u8],
    pos: usize,
    base: usize,
    depth: usize,
    failed: bool,
}

impl<'a> Records<'a> {
    /// Records of `buf`, which starts at absolute offset `base`, nested `depth` levels deep.
    pub fn new(buf: &'a [u8], base: usize, depth: usize) -> Records<'a> {
        Records { buf, pos: 0, base, depth, failed: false }
    }

    fn read(&mut self) -> Result<Record<'a>, WireError> {
        let buf = self.buf;
        let start = self.pos;
        // A tag is the low 32 bits of its varint, as protoc reads it.
        let (tag, pos) = read_varint(buf, start, self.base)?;
        let tag = tag & 0xffff_ffff;
        let number = tag >> 3;
        let wire_type = WireType::from_bits(tag & 7).ok_or_else(|| {
            WireError::new(self.base + start, format!("invalid wire type {}", tag & 7))
        })?;
        if number == 0 {
            return Err(WireError::new(self.base + start, "field number 0 is not allowed"));
        }
        if number > MAX_FIELD_NUMBER {
            return Err(WireError::new(
                self.base + start,
                format!("field number {number} is out of range"),
            ));
        }
        let number = number as u32;
        let (value, value_offset, end) = match wire_type {
            WireType::Varint => {
                let (v, end) = read_varint(buf, pos, self.base)?;
                (WireValue::Varint(v), pos, end)
            }
            WireType::I64 => {
                let bytes = buf
                    .get(pos..pos + 8)
                    .ok_or_else(|| WireError::new(self.base + pos, "truncated 64-bit value"))?;
                let mut a = [0u8; 8];
                a.copy_from_slice(bytes);
                (WireValue::I64(u64::from_le_bytes(a)), pos, pos + 8)
            }
            WireType::I32 => {
                let bytes = buf
                    .get(pos..pos + 4)
                    .ok_or_else(|| WireError::new(self.base + pos, "truncated 32-bit value"))?;
                let mut a = [0u8; 4];
                a.copy_from_slice(bytes);
                (WireValue::I32(u32::from_le_bytes(a)), pos, pos + 4)
            }
            WireType::Len => {
                let (len, data) = read_varint(buf, pos, self.base)?;
                let remaining = buf.len() - data;
                if len > remaining as u64 {
                    return Err(WireError::new(
                        self.base + pos,
                        format!(
                            "length {len} of field {number} exceeds the {remaining} bytes left"
                        ),
                    ));
                }
                let end = data + len as usize;
                (WireValue::Len(&buf[data..end]), data, end)
            }
            WireType::StartGroup => {
                if self.depth >= MAX_DEPTH {
                    return Err(WireError::new(self.base + start, "groups nested too deeply"));
                }
                let mut inner = Records::new(&buf[pos..], self.base + pos, self.depth + 1);
                let close = loop {
                    match inner.read_inner()? {
                        Inner::Record(_) => {}
                        Inner::End(off, n) => break (off, n),
                        Inner::Eof => {
                            return Err(WireError::new(
                                self.base + start,
                                format!("group {number} is never closed"),
                            ));
                        }
                    }
                };
                let (close_off, close_number, close_end) = (close.0, close.1.0, close.1.1);
                if close_number != number {
                    return Err(WireError::new(
                        self.base + pos + close_off,
                        format!("group {number} closed by end-group tag of field {close_number}"),
                    ));
                }
                (WireValue::Group(&buf[pos..pos + close_off]), pos, pos + close_end)
            }
            WireType::EndGroup => {
                return Err(WireError::new(
                    self.base + start,
                    format!("end-group tag of field {number} without a group"),
                ));
            }
        };
        self.pos = end;
        Ok(Record {
            offset: self.base + start,
            value_offset: self.base + value_offset,
            end: self.base + end,
            number,
            wire_type,
            value,
        })
    }

    /// Reads one record, reporting an end-group tag instead of failing on it.
    fn read_inner(&mut self) -> Result<Inner<'a>, WireError> {
        if self.pos >= self.buf.len() {
            return Ok(Inner::Eof);
        }
        let (tag, after) = read_varint(self.buf, self.pos, self.base)?;
        if tag & 7 == 4 {
            let start = self.pos;
            self.pos = after;
            return Ok(Inner::End(start, ((tag >> 3) as u32, after)));
        }
        self.read().map(Inner::Record)
    }
}

enum Inner<'a> {
    Record(#[allow(dead_code, reason = "groups are only scanned for their end")] Record<'a>),
    End(usize, (u32, usize)),
    Eof,
}

impl<'a> Iterator for Records<'a> {
    type Item = Result<Record<'a>, WireError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.pos >= self.buf.len() {
            return None;
        }
        let r = self.read();
        if r.is_err() {
            self.failed = true;
        }
        Some(r)
    }
}

/// Checks that `buf` is a whole message: every record valid, nothing left over.
///
/// # Errors
///
/// The first problem found, at its absolute offset.
pub fn check_message(buf: &[u8], base: usize, depth: usize) -> Result<(), WireError> {
    for r in Records::new(buf, base, depth) {
        r?;
    }
    Ok(())
}

/// True when `buf` is non-empty and parses as a message, the rule `protoc --decode_raw` uses to
/// show a length-delimited value as a nested message.
pub fn looks_like_message(buf: &[u8], depth: usize) -> bool {
    !buf.is_empty() && depth < MAX_DEPTH && check_message(buf, 0, depth).is_ok()
}

/// True when `buf` is non-empty and parses as a message whose text form encodes back to exactly
/// these bytes: every varint in its shortest form, no groups, tags within 32 bits. The text
/// printer shows unknown payloads as nested messages only then, so text round-trips.
pub fn is_canonical_message(buf: &[u8], depth: usize) -> bool {
    if buf.is_empty() || depth >= MAX_DEPTH {
        return false;
    }
    let canonical = |pos: usize| -> Option<(u64, usize)> {
        let (v, next) = read_varint(buf, pos, 0).ok()?;
        (next - pos == varint_len(v)).then_some((v, next))
    };
    let mut pos = 0;
    while pos < buf.len() {
        let Some((tag, p)) = canonical(pos) else {
            return false;
        };
        if tag > u64::from(u32::MAX) || tag >> 3 == 0 {
            return false;
        }
        pos = match tag & 7 {
            0 => match canonical(p) {
                Some((_, q)) => q,
                None => return false,
            },
            1 => p + 8,
            5 => p + 4,
            2 => match canonical(p) {
                Some((len, q)) if len <= (buf.len() - q) as u64 => q + len as usize,
                _ => return false,
            },
            _ => return false,
        };
        if pos > buf.len() {
            return false;
        }
    }
    true
}

/// How many bytes `v` takes as a varint.
pub fn varint_len(v: u64) -> usize {
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

/// Appends `v` as a varint.
pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Appends a tag.
pub fn put_tag(out: &mut Vec<u8>, number: u32, wire_type: WireType) {
    put_varint(out, (u64::from(number) << 3) | u64::from(wire_type.bits()));
}

/// Appends a length-delimited record.
pub fn put_len(out: &mut Vec<u8>, number: u32, payload: &[u8]) {
    put_tag(out, number, WireType::Len);
    put_varint(out, payload.len() as u64);
    out.extend_from_slice(payload);
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "a failing unwrap is a failing test")]
mod tests {
    use super::*;

    fn records(buf: &[u8]) -> Result<Vec<Record<'_>>, WireError> {
        Records::new(buf, 0, 0).collect()
    }

    #[test]
    fn reads_each_wire_type() {
        let buf = [
            0x08, 0x96, 0x01, 0x12, 0x02, b'h', b'i', 0x1d, 1, 0, 0, 0, 0x21, 2, 0, 0, 0, 0, 0, 0,
            0,
        ];
        let rs = records(&buf).expect("valid");
        assert_eq!(rs.len(), 4);
        assert_eq!(rs[0].value, WireValue::Varint(150));
        assert_eq!(rs[1].value, WireValue::Len(b"hi"));
        assert_eq!(rs[1].value_offset, 5);
        assert_eq!(rs[2].value, WireValue::I32(1));
        assert_eq!(rs[3].value, WireValue::I64(2));
    }

    #[test]
    fn groups_nest_and_close() {
        let buf = [0x0b, 0x10, 0x01, 0x0c, 0x18, 0x02];
        let rs = records(&buf).expect("valid");
        assert_eq!(rs[0].value, WireValue::Group(&[0x10, 0x01]));
        assert_eq!(rs[1].number, 3);
        let bad = [0x0b, 0x10, 0x01, 0x14];
        assert!(records(&bad).is_err());
    }

    #[test]
    fn errors_carry_offsets() {
        assert_eq!(records(&[0x08, 0x96]).unwrap_err(), WireError::new(1, "truncated varint"));
        let e = records(&[0x08, 0x01, 0x12, 0x05, b'a']).unwrap_err();
        assert_eq!(e.offset, 3);
        assert!(e.message.contains("exceeds"));
        assert_eq!(records(&[0x00]).unwrap_err().offset, 0);
        assert!(records(&[0x0f]).unwrap_err().message.contains("wire type"));
        let huge = [0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f];
        assert!(records(&huge).unwrap_err().message.contains("exceeds"));
        let long = [0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f];
        assert!(records(&long).is_err());
    }

    #[test]
    fn canonical_messages() {
        assert!(is_canonical_message(&[0x08, 0x01], 0));
        assert!(!is_canonical_message(&[0xd5, 0x8b, 0x00, 1, 2, 3, 4], 0));
        assert!(!is_canonical_message(&[0x08, 0x80, 0x00], 0));
        assert!(!is_canonical_message(&[0x0b, 0x0c], 0));
        assert!(!is_canonical_message(&[], 0));
        for v in [0, 1, 127, 128, 16383, 16384, u64::MAX] {
            let mut b = Vec::new();
            put_varint(&mut b, v);
            assert_eq!(b.len(), varint_len(v));
        }
    }

    #[test]
    fn deep_groups_are_refused_not_overflowed() {
        let mut buf = vec![0x0b; 5000];
        buf.extend(vec![0x0c; 5000]);
        assert!(records(&buf).unwrap_err().message.contains("deeply"));
    }
}
