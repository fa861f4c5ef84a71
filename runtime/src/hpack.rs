//! HPACK (RFC 7541) as csikit reads it: integers, strings, the Huffman code, the static table and
//! a [`Decoder`] that follows a peer's dynamic table. Pure bytes, no panic on any input, no
//! allocation per header beyond what the dynamic table keeps, so it runs beside the data path.
//!
//! Its users: the server skeleton's `:authority` rewriter (`server::authority`), which reads the
//! integers and strings of a client's header blocks and decodes only what it must, and csi-view's
//! proxy tap, which decodes every header block of both directions to see calls.
//!
//! The Huffman code is canonical (RFC 7541, Appendix B): codes of one length are consecutive and
//! in symbol order, and each length's codes follow the shorter ones'. So the code is the table of
//! lengths alone, and a symbol is found by comparing the next 32 bits with the largest code of
//! each length, shortest first, rather than walking a tree bit by bit.
//!
//! ```
//! use csikit_runtime::hpack::Decoder;
//!
//! // `:method: POST` (static index 3), then `:path: /csi.v1.Identity/Probe`, a literal added to
//! // the dynamic table, then the same path again by its new index (62).
//! let path = b"/csi.v1.Identity/Probe";
//! let mut block = vec![0x83, 0x44, path.len() as u8];
//! block.extend_from_slice(path);
//! block.push(0xbe);
//! let mut seen = Vec::new();
//! Decoder::default().decode(&block, |name, value| seen.push((name.to_vec(), value.to_vec())))?;
//! assert_eq!(seen[0], (b":method".to_vec(), b"POST".to_vec()));
//! assert_eq!(seen[1].1, b"/csi.v1.Identity/Probe");
//! assert_eq!(seen[1], seen[2]);
//! # Ok::<(), csikit_runtime::hpack::HpackError>(())
//! ```

use std::collections::VecDeque;
use std::fmt;

use crate::h2frame::MAX_HEADER_BLOCK;

/// The static table (RFC 7541, Appendix A), index 1 first.
pub const STATIC_TABLE: [(&str, &str); 61] = [
    (":authority", ""),
    (":method", "GET"),
    (":method", "POST"),
    (":path", "/"),
    (":path", "/index.html"),
    (":scheme", "http"),
    (":scheme", "https"),
    (":status", "200"),
    (":status", "204"),
    (":status", "206"),
    (":status", "304"),
    (":status", "400"),
    (":status", "404"),
    (":status", "500"),
    ("accept-charset", ""),
    ("accept-encoding", "gzip, deflate"),
    ("accept-language", ""),
    ("accept-ranges", ""),
    ("accept", ""),
    ("access-control-allow-origin", ""),
    ("age", ""),
    ("allow", ""),
    ("authorization", ""),
    ("cache-control", ""),
    ("content-disposition", ""),
    ("content-encoding", ""),
    ("content-language", ""),
    ("content-length", ""),
    ("content-location", ""),
    ("content-range", ""),
    ("content-type", ""),
    ("cookie", ""),
    ("date", ""),
    ("etag", ""),
    ("expect", ""),
    ("expires", ""),
    ("from", ""),
    ("host", ""),
    ("if-match", ""),
    ("if-modified-since", ""),
    ("if-none-match", ""),
    ("if-range", ""),
    ("if-unmodified-since", ""),
    ("last-modified", ""),
    ("link", ""),
    ("location", ""),
    ("max-forwards", ""),
    ("proxy-authenticate", ""),
    ("proxy-authorization", ""),
    ("range", ""),
    ("referer", ""),
    ("refresh", ""),
    ("retry-after", ""),
    ("server", ""),
    ("set-cookie", ""),
    ("strict-transport-security", ""),
    ("transfer-encoding", ""),
    ("user-agent", ""),
    ("vary", ""),
    ("via", ""),
    ("www-authenticate", ""),
];

/// HPACK's initial dynamic table size (SETTINGS_HEADER_TABLE_SIZE's initial value).
pub const DEFAULT_TABLE_SIZE: usize = 4096;

/// What HPACK adds to a table entry's name and value lengths for its size.
pub const ENTRY_OVERHEAD: usize = 32;

/// Why a header block could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HpackError {
    /// An integer or string runs past the end of the block.
    Truncated,
    /// An integer larger than any header block this reader takes.
    IntegerTooLarge,
    /// An index that is neither in the static table nor in the dynamic table.
    BadIndex(usize),
    /// A Huffman-coded string that is not a valid code (a bad padding, or the end-of-string
    /// symbol inside it).
    Huffman,
    /// A dynamic table size update larger than this reader allows.
    TableTooLarge(usize),
    /// A dynamic table size update after a header field.
    LateSizeUpdate,
}

impl fmt::Display for HpackError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HpackError::Truncated => f.write_str("truncated header block"),
            HpackError::IntegerTooLarge => f.write_str("integer too large"),
            HpackError::BadIndex(i) => write!(f, "no table entry at index {i}"),
            HpackError::Huffman => f.write_str("invalid Huffman code"),
            HpackError::TableTooLarge(n) => write!(f, "dynamic table size {n} over the limit"),
            HpackError::LateSizeUpdate => {
                f.write_str("a dynamic table size update after a header field")
            }
        }
    }
}

impl std::error::Error for HpackError {}

/// An HPACK integer with an `n`-bit prefix at `block[*at]`, moving `at` past it.
///
/// # Errors
///
/// When it runs past the block, or is larger than 16 times [`MAX_HEADER_BLOCK`] (no length or
/// index in a block this size can be).
pub fn read_int(block: &[u8], at: &mut usize, n: u32) -> Result<usize, HpackError> {
    let mask = (1u16 << n.min(8)) - 1;
    let first = u16::from(*block.get(*at).ok_or(HpackError::Truncated)?) & mask;
    *at += 1;
    if first < mask {
        return Ok(usize::from(first));
    }
    let mut value = usize::from(mask);
    let mut shift = 0u32;
    loop {
        let b = *block.get(*at).ok_or(HpackError::Truncated)?;
        *at += 1;
        value = usize::from(b & 0x7f)
            .checked_shl(shift)
            .and_then(|v| value.checked_add(v))
            .ok_or(HpackError::IntegerTooLarge)?;
        if b & 0x80 == 0 {
            return if value <= MAX_HEADER_BLOCK * 16 {
                Ok(value)
            } else {
                Err(HpackError::IntegerTooLarge)
            };
        }
        shift += 7;
        if shift > 28 {
            return Err(HpackError::IntegerTooLarge);
        }
    }
}

/// An HPACK string as it is in a block, not decoded. Its Debug form shows its length, not its
/// bytes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct RawString<'a> {
    /// Whether the bytes are Huffman-coded.
    pub huffman: bool,
    /// The string's bytes in the block.
    pub bytes: &'a [u8],
}

impl fmt::Debug for RawString<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RawString")
            .field("huffman", &self.huffman)
            .field("len", &self.bytes.len())
            .finish()
    }
}

impl RawString<'_> {
    /// The string's bytes, Huffman-decoded into `scratch` when they are coded.
    ///
    /// # Errors
    ///
    /// A Huffman code that is not valid.
    pub fn decode<'s>(&'s self, scratch: &'s mut Vec<u8>) -> Result<&'s [u8], HpackError> {
        if self.huffman {
            scratch.clear();
            huffman_decode(self.bytes, scratch)?;
            Ok(scratch)
        } else {
            Ok(self.bytes)
        }
    }
}

/// The HPACK string at `block[*at]`, moving `at` past it.
///
/// # Errors
///
/// When its length or bytes run past the block.
pub fn read_string<'a>(block: &'a [u8], at: &mut usize) -> Result<RawString<'a>, HpackError> {
    let huffman = *block.get(*at).ok_or(HpackError::Truncated)? & 0x80 != 0;
    let len = read_int(block, at, 7)?;
    let end = at.checked_add(len).ok_or(HpackError::Truncated)?;
    let bytes = block.get(*at..end).ok_or(HpackError::Truncated)?;
    *at = end;
    Ok(RawString { huffman, bytes })
}

/// The length of each symbol's code (RFC 7541, Appendix B): bytes 0 to 255, then the
/// end-of-string symbol (256).
const CODE_LENGTHS: [u8; 257] = [
    13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 30, 28,
    28, 28, 28, 28, 28, 28, 28, 28, 6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6, 5, 5,
    5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12, 10, 13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,
    7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19, 13, 14, 6, 15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6,
    6, 5, 6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13, 28, 20, 22, 20, 20, 22, 22, 22, 23, 22,
    23, 23, 23, 23, 23, 24, 23, 24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24, 22,
    21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23, 21, 21, 22, 21, 23, 22, 23, 23, 20,
    22, 22, 22, 23, 22, 22, 23, 26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25, 19,
    21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27, 20, 24, 20, 21, 22, 21, 21, 23, 22,
    22, 25, 25, 24, 24, 26, 23, 26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26, 30,
];

/// The end-of-string symbol.
const EOS: u16 = 256;
/// The longest code.
const MAX_LEN: usize = 30;
/// The shortest code.
const MIN_LEN: usize = 5;

/// The canonical code, derived from [`CODE_LENGTHS`] at compile time.
struct Canonical {
    /// Per length: one past the largest code of that length and those before it, aligned to the
    /// left of 32 bits (a 33-bit number for the longest).
    limit: [u64; MAX_LEN + 1],
    /// Per length: its first code.
    first: [u32; MAX_LEN + 1],
    /// Per length: where its symbols start in `symbols`.
    offset: [u16; MAX_LEN + 1],
    /// The symbols by code length, then by symbol (which is code order).
    symbols: [u16; 257],
}

const CODE: Canonical = canonical();

const fn canonical() -> Canonical {
    let mut count = [0u32; MAX_LEN + 1];
    let mut s = 0;
    while s < CODE_LENGTHS.len() {
        count[CODE_LENGTHS[s] as usize] += 1;
        s += 1;
    }
    let mut offset = [0u16; MAX_LEN + 1];
    let mut first = [0u32; MAX_LEN + 1];
    let mut limit = [0u64; MAX_LEN + 1];
    let (mut at, mut code, mut len) = (0u16, 0u32, 1);
    while len <= MAX_LEN {
        offset[len] = at;
        first[len] = code;
        limit[len] = ((code + count[len]) as u64) << (32 - len);
        at += count[len] as u16;
        code = (code + count[len]) << 1;
        len += 1;
    }
    let mut symbols = [0u16; 257];
    let mut next = offset;
    s = 0;
    while s < CODE_LENGTHS.len() {
        let l = CODE_LENGTHS[s] as usize;
        symbols[next[l] as usize] = s as u16;
        next[l] += 1;
        s += 1;
    }
    Canonical { limit, first, offset, symbols }
}

/// Decodes a Huffman-coded string, appending it to `out`.
///
/// # Errors
///
/// A code that is not valid: padding longer than 7 bits or not the end-of-string code's first
/// bits, or the end-of-string symbol itself.
pub fn huffman_decode(raw: &[u8], out: &mut Vec<u8>) -> Result<(), HpackError> {
    out.reserve(raw.len() * 8 / 5);
    // The bits not used yet, from the top of `acc`.
    let (mut acc, mut bits, mut next) = (0u64, 0u32, 0);
    loop {
        while bits <= 56 && next < raw.len() {
            acc |= u64::from(raw[next]) << (56 - bits);
            bits += 8;
            next += 1;
        }
        if bits == 0 {
            return Ok(());
        }
        // The next 32 bits, the missing ones read as ones (the padding's bits).
        let window = (acc | u64::MAX.checked_shr(bits).unwrap_or(0)) >> 32;
        let mut len = MIN_LEN;
        while window >= CODE.limit[len] {
            len += 1;
        }
        if len as u32 > bits {
            // What is left is padding: at most 7 bits, all ones.
            let ones = acc >> (64 - bits) == (1 << bits) - 1;
            return if bits <= 7 && ones { Ok(()) } else { Err(HpackError::Huffman) };
        }
        let code = (window >> (32 - len)) as u32;
        let symbol =
            CODE.symbols[usize::from(CODE.offset[len]) + (code - CODE.first[len]) as usize];
        if symbol == EOS {
            return Err(HpackError::Huffman);
        }
        out.push(symbol as u8);
        acc <<= len;
        bits -= len as u32;
    }
}

/// One entry of a dynamic table: name and value in one buffer.
struct Entry {
    bytes: Box<[u8]>,
    name_len: usize,
}

impl Entry {
    fn name(&self) -> &[u8] {
        &self.bytes[..self.name_len]
    }

    fn value(&self) -> &[u8] {
        &self.bytes[self.name_len..]
    }

    fn size(&self) -> usize {
        self.bytes.len() + ENTRY_OVERHEAD
    }
}

/// Decodes the header blocks of one direction of a connection, following the encoder's dynamic
/// table. Its Debug form shows the table's size, not its entries: header values may be
/// credentials.
pub struct Decoder {
    /// Newest first.
    entries: VecDeque<Entry>,
    size: usize,
    max: usize,
    /// The largest size an update may set.
    limit: usize,
    /// Huffman-decoded strings of the field being read.
    name: Vec<u8>,
    value: Vec<u8>,
}

impl fmt::Debug for Decoder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Decoder")
            .field("entries", &self.entries.len())
            .field("size", &self.size)
            .field("max", &self.max)
            .field("limit", &self.limit)
            .finish_non_exhaustive()
    }
}

impl Default for Decoder {
    /// A decoder with HPACK's initial table size, taking size updates up to
    /// [`MAX_HEADER_BLOCK`].
    fn default() -> Self {
        Decoder::new(MAX_HEADER_BLOCK)
    }
}

impl Decoder {
    /// A decoder taking dynamic table size updates up to `limit` bytes (the
    /// SETTINGS_HEADER_TABLE_SIZE the decoding side sent, or a bound when that is not known).
    pub fn new(limit: usize) -> Self {
        Decoder {
            entries: VecDeque::new(),
            size: 0,
            max: DEFAULT_TABLE_SIZE,
            limit,
            name: Vec::new(),
            value: Vec::new(),
        }
    }

    /// The current dynamic table size (name and value lengths plus 32 per entry).
    pub fn table_size(&self) -> usize {
        self.size
    }

    /// The name and value at `index` (static table, then dynamic).
    fn get(&self, index: usize) -> Result<(&[u8], &[u8]), HpackError> {
        match index {
            1..=61 => {
                let (n, v) = STATIC_TABLE[index - 1];
                Ok((n.as_bytes(), v.as_bytes()))
            }
            _ => index
                .checked_sub(62)
                .and_then(|i| self.entries.get(i))
                .map(|e| (e.name(), e.value()))
                .ok_or(HpackError::BadIndex(index)),
        }
    }

    fn evict_to(&mut self, max: usize) {
        while self.size > max {
            match self.entries.pop_back() {
                Some(old) => self.size -= old.size(),
                None => break,
            }
        }
    }

    /// Reads one whole header block, calling `field(name, value)` for each field in order.
    ///
    /// # Errors
    ///
    /// When the block is not valid HPACK; the decoder is then out of step with the encoder and
    /// should not be used again on that connection.
    pub fn decode(
        &mut self,
        block: &[u8],
        mut field: impl FnMut(&[u8], &[u8]),
    ) -> Result<(), HpackError> {
        let mut at = 0;
        let mut fields = 0;
        while at < block.len() {
            let b = block[at];
            if b & 0x80 != 0 {
                let index = read_int(block, &mut at, 7)?;
                let (name, value) = self.get(index)?;
                field(name, value);
                fields += 1;
                continue;
            }
            if b & 0xe0 == 0x20 {
                if fields > 0 {
                    return Err(HpackError::LateSizeUpdate);
                }
                let max = read_int(block, &mut at, 5)?;
                if max > self.limit {
                    return Err(HpackError::TableTooLarge(max));
                }
                self.max = max;
                self.evict_to(max);
                continue;
            }
            // A literal: with incremental indexing (01), without (0000) or never indexed (0001).
            let (prefix, indexing) = if b & 0xc0 == 0x40 { (6, true) } else { (4, false) };
            let name_index = read_int(block, &mut at, prefix)?;
            if name_index == 0 {
                let raw = read_string(block, &mut at)?;
                let mut scratch = std::mem::take(&mut self.name);
                let decoded = raw.decode(&mut scratch).map(<[u8]>::to_vec);
                self.name = scratch;
                let name = decoded?;
                self.literal(&name, block, &mut at, indexing, &mut field)?;
            } else {
                // The name is copied out: adding the entry may evict the one it came from.
                let mut name = std::mem::take(&mut self.name);
                name.clear();
                name.extend_from_slice(self.get(name_index)?.0);
                let result = self.literal(&name, block, &mut at, indexing, &mut field);
                self.name = name;
                result?;
            }
            fields += 1;
        }
        Ok(())
    }

    /// A literal's value, named `name`: handed on, and added to the table when `indexing`.
    fn literal(
        &mut self,
        name: &[u8],
        block: &[u8],
        at: &mut usize,
        indexing: bool,
        field: &mut impl FnMut(&[u8], &[u8]),
    ) -> Result<(), HpackError> {
        let raw = read_string(block, at)?;
        let mut scratch = std::mem::take(&mut self.value);
        let value = raw.decode(&mut scratch);
        if let Ok(value) = value {
            field(name, value);
            if indexing {
                self.insert(name, value);
            }
        }
        let failed = value.is_err();
        self.value = scratch;
        if failed { Err(HpackError::Huffman) } else { Ok(()) }
    }

    fn insert(&mut self, name: &[u8], value: &[u8]) {
        let size = name.len() + value.len() + ENTRY_OVERHEAD;
        if size > self.max {
            // An entry larger than the table empties it and is not added.
            self.entries.clear();
            self.size = 0;
            return;
        }
        self.evict_to(self.max - size);
        let mut bytes = Vec::with_capacity(name.len() + value.len());
        bytes.extend_from_slice(name);
        bytes.extend_from_slice(value);
        self.entries.push_front(Entry { bytes: bytes.into_boxed_slice(), name_len: name.len() });
        self.size += size;
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests")]
mod tests {
    use super::*;

    /// A fixed-seed generator for the property tests.
    fn rng(seed: u64) -> impl FnMut() -> u64 {
        let mut rng = fastrand::Rng::with_seed(seed);
        move || rng.u64(..)
    }

    fn huffman(raw: &[u8]) -> Result<Vec<u8>, HpackError> {
        let mut out = Vec::new();
        huffman_decode(raw, &mut out).map(|()| out)
    }

    /// `s` Huffman-coded with the canonical code derived here, padded with ones.
    fn huffman_encode(s: &[u8]) -> Vec<u8> {
        let (mut out, mut acc, mut bits) = (Vec::new(), 0u64, 0u32);
        for &b in s {
            let len = CODE_LENGTHS[usize::from(b)];
            let rank = (0..b).filter(|&o| CODE_LENGTHS[usize::from(o)] == len).count();
            let code = u64::from(CODE.first[usize::from(len)]) + rank as u64;
            acc = acc << len | code;
            bits += u32::from(len);
            while bits >= 8 {
                out.push((acc >> (bits - 8)) as u8);
                bits -= 8;
            }
        }
        if bits > 0 {
            out.push(((acc << (8 - bits)) | ((1 << (8 - bits)) - 1)) as u8);
        }
        out
    }

    #[test]
    fn every_symbol_reads_back_through_loonas_decoder() {
        // loona-hpack's decoder (another transcription of Appendix B) is the oracle: the code
        // derived from the lengths here is the one it reads.
        let mut oracle = loona_hpack::huffman::HuffmanDecoder::new();
        for b in 0..=255u8 {
            let encoded = huffman_encode(&[b]);
            assert_eq!(oracle.decode(&encoded).ok(), Some(vec![b]), "byte {b}");
            assert_eq!(huffman(&encoded), Ok(vec![b]), "byte {b}");
        }
    }

    #[test]
    fn any_string_reads_as_loonas_decoder_reads_it() {
        let mut oracle = loona_hpack::huffman::HuffmanDecoder::new();
        let mut next = rng(0x9e37_79b9_7f4a_7c15);
        for _ in 0..2_000 {
            let len = (next() % 80) as usize;
            // Mostly text, sometimes any byte.
            let s: Vec<u8> = (0..len)
                .map(|_| {
                    if next().is_multiple_of(4) { next() as u8 } else { b' ' + (next() % 95) as u8 }
                })
                .collect();
            let encoded = huffman_encode(&s);
            assert_eq!(oracle.decode(&encoded).ok().as_ref(), Some(&s));
            assert_eq!(huffman(&encoded), Ok(s));
            // Any bytes at all: both refuse, or both read the same.
            let junk: Vec<u8> = (0..len % 9).map(|_| next() as u8).collect();
            assert_eq!(huffman(&junk).ok(), oracle.decode(&junk).ok(), "{junk:x?}");
        }
    }

    #[test]
    fn padding_and_the_end_of_string_symbol_follow_the_rfc() {
        // RFC 7541, C.4.1: "www.example.com".
        let example = [0xf1, 0xe3, 0xc2, 0xe5, 0xf2, 0x3a, 0x6b, 0xa0, 0xab, 0x90, 0xf4, 0xff];
        assert_eq!(huffman(&example).unwrap(), b"www.example.com");
        // '0' (00000), then three ones of padding.
        assert_eq!(huffman(&[0b0000_0111]), Ok(b"0".to_vec()));
        // '0', then padding that is not all ones.
        assert_eq!(huffman(&[0b0000_0011]), Err(HpackError::Huffman));
        // Eight ones of padding: a whole byte, too long.
        assert_eq!(huffman(&[0xff]), Err(HpackError::Huffman));
        // The end-of-string symbol (30 ones) inside a string.
        assert_eq!(huffman(&[0xff, 0xff, 0xff, 0xfc]), Err(HpackError::Huffman));
        assert_eq!(huffman(&[]), Ok(Vec::new()));
    }

    #[test]
    fn the_static_table_is_loonas() {
        let mut oracle = loona_hpack::Decoder::new();
        for (i, (name, value)) in STATIC_TABLE.iter().enumerate() {
            let index = u8::try_from(i + 1).unwrap();
            let fields = oracle.decode(&[0x80 | index]).unwrap();
            assert_eq!(fields, [(name.as_bytes().to_vec(), value.as_bytes().to_vec())]);
        }
    }

    /// Random header lists encoded by loona's encoder (literals, indexing, Huffman, evictions
    /// as the table fills) read the same by this decoder and loona's.
    #[test]
    fn random_blocks_read_as_loonas_decoder_reads_them() {
        let mut next = rng(0x2545_f491_4f6c_dd1d);
        let mut encoder = loona_hpack::Encoder::new();
        let mut oracle = loona_hpack::Decoder::new();
        let mut decoder = Decoder::default();
        let names: [&[u8]; 6] =
            [b":path", b":authority", b"grpc-status", b"grpc-message", b"x-long", b"date"];
        for round in 0..3_000 {
            let mut headers: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
            for _ in 0..(next() % 6) {
                let name = names[(next() % 6) as usize].to_vec();
                let len = if name == b"x-long" { 500 + (next() % 900) as usize } else { 12 };
                let value: Vec<u8> = (0..len).map(|_| b'a' + (next() % 26) as u8).collect();
                let value =
                    if next().is_multiple_of(2) { value } else { format!("v{round}").into_bytes() };
                headers.push((name, value));
            }
            let block = encoder.encode(headers.iter().map(|(n, v)| (&n[..], &v[..])));
            let expected = oracle.decode(&block).unwrap();
            let mut seen = Vec::new();
            decoder.decode(&block, |n, v| seen.push((n.to_vec(), v.to_vec()))).unwrap();
            assert_eq!(seen, expected, "round {round}");
            assert_eq!(seen, headers, "round {round}");
        }
        assert!(decoder.table_size() > 0);
    }

    #[test]
    fn size_updates_evict_and_are_bounded() {
        let mut d = Decoder::new(8192);
        // `x: y` added to the table, then the table shrunk to nothing, then the index is gone.
        let mut block = vec![0x40, 1, b'x', 1, b'y'];
        d.decode(&block, |_, _| {}).unwrap();
        assert_eq!(d.table_size(), 34);
        block = vec![0x20, 0xbe];
        assert_eq!(d.decode(&block, |_, _| {}), Err(HpackError::BadIndex(62)));
        // Over the limit, and after a field.
        let mut over = vec![0x3f];
        let mut v = 8193 - 31;
        while v >= 0x80 {
            over.push((v & 0x7f) as u8 | 0x80);
            v >>= 7;
        }
        over.push(v as u8);
        assert_eq!(
            Decoder::new(8192).decode(&over, |_, _| {}),
            Err(HpackError::TableTooLarge(8193))
        );
        assert_eq!(
            Decoder::new(8192).decode(&[0x82, 0x20], |_, _| {}),
            Err(HpackError::LateSizeUpdate)
        );
        // Updates before any field, a block of updates alone included, are taken, as h2 takes
        // them (loona-hpack refuses a block that ends with one).
        let mut fields = 0;
        Decoder::new(8192).decode(&[0x20, 0x3f, 0xe1, 0x1f], |_, _| fields += 1).unwrap();
        Decoder::new(8192).decode(&[0x20, 0x3f, 0xe1, 0x1f, 0x82], |_, _| fields += 1).unwrap();
        assert_eq!(fields, 1);
    }

    #[test]
    fn a_decoder_shown_for_debugging_shows_no_header_value() {
        let mut d = Decoder::default();
        let mut block = vec![0x40, 13];
        block.extend_from_slice(b"authorization");
        block.push(14);
        block.extend_from_slice(b"Bearer hunter2");
        d.decode(&block, |_, _| {}).unwrap();
        let shown = format!("{d:?}");
        assert!(shown.contains("entries: 1") && !shown.contains("hunter2"), "{shown}");
    }

    #[test]
    fn any_bytes_are_fields_or_an_error_never_a_panic() {
        let mut next = rng(0x1234_5678_9abc_def1);
        for _ in 0..20_000 {
            let len = (next() % 24) as usize;
            let block: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            let mut d = Decoder::default();
            let _ = d.decode(&block, |_, _| {});
            let _ = huffman(&block);
            let mut at = 0;
            let _ = read_int(&block, &mut at, (next() % 8 + 1) as u32);
        }
    }
}
