//! The HTTP/2 frame layer (RFC 9113, section 4 and 6): the one place that reads and writes frame
//! headers, strips padding and puts a header block together across CONTINUATION frames, with one
//! set of limits. Pure bytes in, bytes out: no sockets, no allocation beyond the block being
//! assembled, no panic on any input, so it is tested and fuzzed on its own.
//!
//! Its users: the server skeleton's `:authority` rewriter (`server::authority`), which reads a
//! client's frames and rewrites one header field, and csi-view's proxy tap, which follows both
//! directions of a connection to show its calls. Neither decodes HPACK here: a header block comes
//! out as the fragment bytes, for [`crate::hpack`].
//!
//! ```
//! use csikit_runtime::h2frame::{self, Assembler, Head, Step};
//!
//! // A HEADERS frame without END_HEADERS, then its CONTINUATION.
//! let mut bytes = Vec::new();
//! Head { len: 2, kind: h2frame::HEADERS, flags: 0, stream: 1 }.encode(&mut bytes);
//! bytes.extend_from_slice(&[0x82, 0x86]);
//! Head { len: 1, kind: h2frame::CONTINUATION, flags: h2frame::END_HEADERS, stream: 1 }
//!     .encode(&mut bytes);
//! bytes.push(0x84);
//!
//! let mut assembler = Assembler::default();
//! let mut rest = &bytes[..];
//! let mut blocks = Vec::new();
//! while let Some((head, payload)) = h2frame::split_frame(rest) {
//!     rest = &rest[h2frame::HEADER_LEN + head.len..];
//!     if let Step::Block(block) = assembler.push(&head, payload)? {
//!         blocks.push(block);
//!     }
//! }
//! assert_eq!(blocks[0].fragment, [0x82, 0x86, 0x84]);
//! assert_eq!(blocks[0].stream, 1);
//! # Ok::<(), h2frame::FrameError>(())
//! ```

use std::fmt;

/// The client connection preface, before the client's first frame.
pub const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
/// A frame header's length.
pub const HEADER_LEN: usize = 9;

/// Frame type DATA.
pub const DATA: u8 = 0x0;
/// Frame type HEADERS.
pub const HEADERS: u8 = 0x1;
/// Frame type PRIORITY.
pub const PRIORITY_FRAME: u8 = 0x2;
/// Frame type RST_STREAM.
pub const RST_STREAM: u8 = 0x3;
/// Frame type SETTINGS.
pub const SETTINGS: u8 = 0x4;
/// Frame type PUSH_PROMISE.
pub const PUSH_PROMISE: u8 = 0x5;
/// Frame type PING.
pub const PING: u8 = 0x6;
/// Frame type GOAWAY.
pub const GOAWAY: u8 = 0x7;
/// Frame type WINDOW_UPDATE.
pub const WINDOW_UPDATE: u8 = 0x8;
/// Frame type CONTINUATION.
pub const CONTINUATION: u8 = 0x9;

/// Flag END_STREAM (DATA, HEADERS).
pub const END_STREAM: u8 = 0x1;
/// Flag END_HEADERS (HEADERS, PUSH_PROMISE, CONTINUATION).
pub const END_HEADERS: u8 = 0x4;
/// Flag PADDED (DATA, HEADERS, PUSH_PROMISE).
pub const PADDED: u8 = 0x8;
/// Flag PRIORITY (HEADERS).
pub const PRIORITY: u8 = 0x20;

/// The largest payload every peer accepts (SETTINGS_MAX_FRAME_SIZE's initial value): frames
/// written here are never larger.
pub const MAX_WRITTEN_FRAME: usize = 16_384;

/// The largest header block (the fragments of a HEADERS or PUSH_PROMISE frame and its
/// CONTINUATIONs, HPACK-encoded) put together; a larger one is an error, and the caller stops
/// reading that direction (the rewriter passes the rest through, the tap stops following).
///
/// 1 MiB: far above what gRPC peers send or accept (tonic's server, through hyper, refuses a
/// decoded header list over 16 KiB; gRPC's C core over 16 KiB by default), so no call a plugin
/// would serve is lost, while one connection holds at most this much. grpc-go allows 16 MiB, but
/// CSI metadata is a handful of short headers; a block of megabytes is an attack, not a call.
pub const MAX_HEADER_BLOCK: usize = 1 << 20;

/// A frame header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Head {
    /// The payload's length (24 bits on the wire).
    pub len: usize,
    /// The frame type.
    pub kind: u8,
    /// The flags.
    pub flags: u8,
    /// The stream id (31 bits; the reserved bit is dropped when read).
    pub stream: u32,
}

impl Head {
    /// The frame header at the start of `bytes`; `None` when fewer than [`HEADER_LEN`] bytes
    /// are there.
    pub fn parse(bytes: &[u8]) -> Option<Head> {
        let h = bytes.get(..HEADER_LEN)?;
        Some(Head {
            len: usize::from(h[0]) << 16 | usize::from(h[1]) << 8 | usize::from(h[2]),
            kind: h[3],
            flags: h[4],
            stream: u32::from_be_bytes([h[5], h[6], h[7], h[8]]) & 0x7fff_ffff,
        })
    }

    /// Appends the header's nine bytes to `out`. A length over 24 bits is cut to its low 24
    /// bits; callers write frames of at most [`MAX_WRITTEN_FRAME`].
    pub fn encode(&self, out: &mut Vec<u8>) {
        let len = u32::try_from(self.len & 0xff_ffff).unwrap_or(0).to_be_bytes();
        out.extend_from_slice(&[len[1], len[2], len[3], self.kind, self.flags]);
        out.extend_from_slice(&(self.stream & 0x7fff_ffff).to_be_bytes());
    }

    /// Whether every bit of `flag` is set.
    pub fn has(&self, flag: u8) -> bool {
        self.flags & flag == flag
    }
}

/// The first whole frame in `bytes`: its header and payload; `None` until all of it is there
/// (the caller reads more, or gives up on a frame it will not wait for by looking at
/// [`Head::parse`]'s length).
pub fn split_frame(bytes: &[u8]) -> Option<(Head, &[u8])> {
    let head = Head::parse(bytes)?;
    let payload = bytes.get(HEADER_LEN..HEADER_LEN.checked_add(head.len)?)?;
    Some((head, payload))
}

/// How much of `bytes` continues the client connection preface of which `seen` bytes came
/// already; the rest of `bytes` is frames.
///
/// # Errors
///
/// [`FrameError::NoPreface`] when the bytes differ from the preface.
pub fn match_preface(seen: usize, bytes: &[u8]) -> Result<usize, FrameError> {
    let expected = PREFACE.get(seen..).unwrap_or_default();
    let n = expected.len().min(bytes.len());
    if bytes[..n] == expected[..n] { Ok(n) } else { Err(FrameError::NoPreface) }
}

/// What is wrong with the frames read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FrameError {
    /// The client's bytes are not the HTTP/2 connection preface.
    NoPreface,
    /// A PADDED frame with no room for its pad length.
    NoPadLength,
    /// Padding longer than the frame.
    Padding,
    /// A HEADERS or PUSH_PROMISE frame too short for its priority or promised stream.
    ShortHeaders,
    /// A frame other than its CONTINUATION inside a header block.
    Interrupted,
    /// A CONTINUATION outside a header block.
    StrayContinuation,
    /// A header block over [`MAX_HEADER_BLOCK`].
    BlockTooLarge,
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::NoPreface => "no HTTP/2 connection preface",
            Self::NoPadLength => "a padded frame without its pad length",
            Self::Padding => "padding longer than its frame",
            Self::ShortHeaders => "a header frame too short",
            Self::Interrupted => "a header block without its CONTINUATION",
            Self::StrayContinuation => "a CONTINUATION without a header block",
            Self::BlockTooLarge => "a header block over 1 MiB",
        })
    }
}

impl std::error::Error for FrameError {}

/// The payload of a DATA, HEADERS or PUSH_PROMISE frame without its padding (the pad-length byte
/// and the padding); any other payload as it is.
///
/// # Errors
///
/// When the padding does not fit the frame.
pub fn strip_padding<'a>(head: &Head, payload: &'a [u8]) -> Result<&'a [u8], FrameError> {
    if !head.has(PADDED) || !matches!(head.kind, DATA | HEADERS | PUSH_PROMISE) {
        return Ok(payload);
    }
    let (&pad, rest) = payload.split_first().ok_or(FrameError::NoPadLength)?;
    rest.get(..rest.len().checked_sub(usize::from(pad)).ok_or(FrameError::Padding)?)
        .ok_or(FrameError::Padding)
}

/// A whole header block: the fields of its first frame and every fragment joined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderBlock {
    /// HEADERS or PUSH_PROMISE.
    pub kind: u8,
    /// The stream it came on.
    pub stream: u32,
    /// The first frame's flags (END_STREAM is there; END_HEADERS was on the last frame).
    pub flags: u8,
    /// The priority fields of a HEADERS frame with PRIORITY (exclusive bit, dependency, weight).
    pub priority: Option<[u8; 5]>,
    /// The promised stream of a PUSH_PROMISE.
    pub promised: Option<u32>,
    /// The HPACK-encoded block.
    pub fragment: Vec<u8>,
}

impl HeaderBlock {
    /// Whether the block ends its stream (a HEADERS frame with END_STREAM).
    pub fn end_stream(&self) -> bool {
        self.kind == HEADERS && self.flags & END_STREAM != 0
    }
}

/// The first frame of a header block (HEADERS or PUSH_PROMISE), read in place: its fields and
/// its fragment, padding stripped. A HEADERS frame with END_HEADERS is a whole block, which a
/// reader can take from here without [`Assembler`]'s copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FirstFrame<'a> {
    /// The priority fields of a HEADERS frame with PRIORITY (exclusive bit, dependency, weight).
    pub priority: Option<[u8; 5]>,
    /// The promised stream of a PUSH_PROMISE.
    pub promised: Option<u32>,
    /// The frame's part of the HPACK-encoded block.
    pub fragment: &'a [u8],
}

impl<'a> FirstFrame<'a> {
    /// Reads a HEADERS or PUSH_PROMISE frame's payload.
    ///
    /// # Errors
    ///
    /// Bad padding, a payload too short for its fields, a fragment over [`MAX_HEADER_BLOCK`].
    pub fn read(head: &Head, payload: &'a [u8]) -> Result<FirstFrame<'a>, FrameError> {
        let mut rest = strip_padding(head, payload)?;
        let mut priority = None;
        let mut promised = None;
        if head.kind == HEADERS && head.has(PRIORITY) {
            let (p, tail) = rest.split_first_chunk::<5>().ok_or(FrameError::ShortHeaders)?;
            priority = Some(*p);
            rest = tail;
        }
        if head.kind == PUSH_PROMISE {
            let (p, tail) = rest.split_first_chunk::<4>().ok_or(FrameError::ShortHeaders)?;
            promised = Some(u32::from_be_bytes(*p) & 0x7fff_ffff);
            rest = tail;
        }
        if rest.len() > MAX_HEADER_BLOCK {
            return Err(FrameError::BlockTooLarge);
        }
        Ok(FirstFrame { priority, promised, fragment: rest })
    }
}

/// What [`Assembler::push`] made of a frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// The frame is not part of a header block: the caller reads it itself.
    Frame,
    /// The frame began or continued a header block that has not ended.
    Partial,
    /// The frame ended a header block.
    Block(HeaderBlock),
}

/// Puts header blocks together from HEADERS / PUSH_PROMISE and CONTINUATION frames, one
/// direction of one connection at a time.
#[derive(Debug, Default)]
pub struct Assembler {
    open: Option<HeaderBlock>,
}

impl Assembler {
    /// Whether a header block has begun and not ended (only its CONTINUATION may come next).
    pub fn in_block(&self) -> bool {
        self.open.is_some()
    }

    /// Reads one frame.
    ///
    /// # Errors
    ///
    /// Bad padding, a frame too short, a header block interrupted or over
    /// [`MAX_HEADER_BLOCK`], a CONTINUATION out of place. The assembler is then empty; a
    /// caller goes on at its own risk (HPACK state is lost with the block).
    pub fn push(&mut self, head: &Head, payload: &[u8]) -> Result<Step, FrameError> {
        if let Some(mut block) = self.open.take() {
            if head.kind != CONTINUATION || head.stream != block.stream {
                return Err(FrameError::Interrupted);
            }
            if block.fragment.len() + payload.len() > MAX_HEADER_BLOCK {
                return Err(FrameError::BlockTooLarge);
            }
            block.fragment.extend_from_slice(payload);
            return Ok(self.hold_or_finish(head, block));
        }
        match head.kind {
            HEADERS | PUSH_PROMISE => {
                let first = FirstFrame::read(head, payload)?;
                let block = HeaderBlock {
                    kind: head.kind,
                    stream: head.stream,
                    flags: head.flags,
                    priority: first.priority,
                    promised: first.promised,
                    fragment: first.fragment.to_vec(),
                };
                Ok(self.hold_or_finish(head, block))
            }
            CONTINUATION => Err(FrameError::StrayContinuation),
            _ => Ok(Step::Frame),
        }
    }

    fn hold_or_finish(&mut self, head: &Head, block: HeaderBlock) -> Step {
        if head.has(END_HEADERS) {
            Step::Block(block)
        } else {
            self.open = Some(block);
            Step::Partial
        }
    }
}

/// Appends one frame: its header, then `payload` (of at most [`MAX_WRITTEN_FRAME`] bytes).
pub fn write_frame(kind: u8, flags: u8, stream: u32, payload: &[u8], out: &mut Vec<u8>) {
    Head { len: payload.len(), kind, flags, stream }.encode(out);
    out.extend_from_slice(payload);
}

/// Writes a header block as a HEADERS frame (with `flags` less PADDED and END_HEADERS, and the
/// `priority` fields when given) and as many CONTINUATION frames as it needs, none over
/// [`MAX_WRITTEN_FRAME`]; END_HEADERS goes on the last.
pub fn write_header_block(
    stream: u32,
    flags: u8,
    priority: Option<&[u8; 5]>,
    block: &[u8],
    out: &mut Vec<u8>,
) {
    let room = MAX_WRITTEN_FRAME - priority.map_or(0, |p| p.len());
    let (first, mut rest) = block.split_at(block.len().min(room));
    let mut first_flags = flags & !(PADDED | END_HEADERS | PRIORITY);
    if priority.is_some() {
        first_flags |= PRIORITY;
    }
    if rest.is_empty() {
        first_flags |= END_HEADERS;
    }
    let len = first.len() + priority.map_or(0, |p| p.len());
    Head { len, kind: HEADERS, flags: first_flags, stream }.encode(out);
    if let Some(p) = priority {
        out.extend_from_slice(p);
    }
    out.extend_from_slice(first);
    while !rest.is_empty() {
        let (part, tail) = rest.split_at(rest.len().min(MAX_WRITTEN_FRAME));
        let flags = if tail.is_empty() { END_HEADERS } else { 0 };
        write_frame(CONTINUATION, flags, stream, part, out);
        rest = tail;
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests")]
mod tests {
    use super::*;

    fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        write_frame(kind, flags, stream, payload, &mut out);
        out
    }

    /// Every frame of `bytes` through an assembler: the blocks, or the first error.
    fn blocks(bytes: &[u8]) -> Result<Vec<HeaderBlock>, FrameError> {
        let mut a = Assembler::default();
        let mut rest = bytes;
        let mut out = Vec::new();
        while let Some((head, payload)) = split_frame(rest) {
            rest = &rest[HEADER_LEN + head.len..];
            match a.push(&head, payload)? {
                Step::Block(b) => out.push(b),
                Step::Frame => drop(strip_padding(&head, payload)?),
                Step::Partial => {}
            }
        }
        Ok(out)
    }

    #[test]
    fn a_header_reads_back_as_written() {
        for head in [
            Head { len: 0, kind: DATA, flags: 0, stream: 0 },
            Head { len: 16_384, kind: HEADERS, flags: END_HEADERS | PRIORITY, stream: 1 },
            Head { len: (1 << 24) - 1, kind: 0xff, flags: 0xff, stream: 0x7fff_ffff },
        ] {
            let mut out = Vec::new();
            head.encode(&mut out);
            assert_eq!(out.len(), HEADER_LEN);
            assert_eq!(Head::parse(&out), Some(head));
        }
        // The reserved bit is dropped; a short header is not read.
        let bytes = [0, 0, 1, 0, 0, 0x80, 0, 0, 3];
        assert_eq!(Head::parse(&bytes).unwrap().stream, 3);
        assert_eq!(Head::parse(&bytes[..8]), None);
        assert_eq!(split_frame(&bytes), None, "its one payload byte has not come");
    }

    #[test]
    fn padding_and_priority_are_removed_and_blocks_joined() {
        let mut payload = vec![2u8]; // pad length
        payload.extend([0x80, 0, 0, 3, 15]); // priority
        payload.extend([0xaa, 0xbb]);
        payload.extend([0, 0]); // padding
        let mut bytes = frame(HEADERS, PADDED | PRIORITY | END_STREAM, 5, &payload);
        bytes.extend(frame(CONTINUATION, 0, 5, &[0xcc]));
        bytes.extend(frame(CONTINUATION, END_HEADERS, 5, &[0xdd]));
        bytes.extend(frame(DATA, PADDED, 5, &[1, 9, 0]));
        let got = blocks(&bytes).unwrap();
        assert_eq!(
            got,
            [HeaderBlock {
                kind: HEADERS,
                stream: 5,
                flags: PADDED | PRIORITY | END_STREAM,
                priority: Some([0x80, 0, 0, 3, 15]),
                promised: None,
                fragment: vec![0xaa, 0xbb, 0xcc, 0xdd],
            }]
        );
        assert!(got[0].end_stream());
        let data = Head { len: 3, kind: DATA, flags: PADDED, stream: 5 };
        assert_eq!(strip_padding(&data, &[1, 9, 0]), Ok(&[9u8][..]));
        // A PUSH_PROMISE's promised stream is taken off its block.
        let promise = frame(PUSH_PROMISE, END_HEADERS, 1, &[0, 0, 0, 2, 0x82]);
        let got = blocks(&promise).unwrap();
        assert_eq!((got[0].promised, got[0].fragment.as_slice()), (Some(2), &[0x82u8][..]));
        assert!(!got[0].end_stream());
    }

    #[test]
    fn malformed_frames_are_named() {
        let check = |bytes: Vec<u8>, want: FrameError| assert_eq!(blocks(&bytes), Err(want));
        check(frame(DATA, PADDED, 1, &[9, 1, 2]), FrameError::Padding);
        check(frame(HEADERS, PADDED | END_HEADERS, 1, &[]), FrameError::NoPadLength);
        check(frame(HEADERS, PRIORITY | END_HEADERS, 1, &[0, 0]), FrameError::ShortHeaders);
        check(frame(PUSH_PROMISE, END_HEADERS, 1, &[0]), FrameError::ShortHeaders);
        check(frame(CONTINUATION, END_HEADERS, 1, b"x"), FrameError::StrayContinuation);
        let mut interrupted = frame(HEADERS, 0, 1, b"x");
        interrupted.extend(frame(DATA, 0, 1, b"y"));
        check(interrupted, FrameError::Interrupted);
        let mut other_stream = frame(HEADERS, 0, 1, b"x");
        other_stream.extend(frame(CONTINUATION, END_HEADERS, 3, b"y"));
        check(other_stream, FrameError::Interrupted);
        // The limit: a block of exactly MAX_HEADER_BLOCK is read, one byte more is not.
        let mut at_limit = frame(HEADERS, 0, 1, &vec![0; MAX_HEADER_BLOCK - 1]);
        at_limit.extend(frame(CONTINUATION, END_HEADERS, 1, &[0]));
        assert_eq!(blocks(&at_limit).unwrap()[0].fragment.len(), MAX_HEADER_BLOCK);
        let mut over = frame(HEADERS, 0, 1, &vec![0; MAX_HEADER_BLOCK]);
        over.extend(frame(CONTINUATION, END_HEADERS, 1, &[0]));
        check(over, FrameError::BlockTooLarge);
        assert_eq!(FrameError::Padding.to_string(), "padding longer than its frame");
    }

    #[test]
    fn a_written_block_reads_back_whole_in_frames_of_at_most_the_initial_size() {
        for len in [0, 1, MAX_WRITTEN_FRAME - 5, MAX_WRITTEN_FRAME, 40_000] {
            let block: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
            for priority in [None, Some([0, 0, 0, 1, 200])] {
                let mut out = Vec::new();
                write_header_block(7, END_STREAM | PADDED, priority.as_ref(), &block, &mut out);
                let mut rest = &out[..];
                while let Some((head, _)) = split_frame(rest) {
                    assert!(head.len <= MAX_WRITTEN_FRAME);
                    rest = &rest[HEADER_LEN + head.len..];
                }
                assert!(rest.is_empty());
                let got = blocks(&out).unwrap();
                assert_eq!(got.len(), 1);
                assert_eq!(got[0].fragment, block, "len {len}");
                assert_eq!(got[0].priority, priority);
                assert_eq!(got[0].flags & (END_STREAM | PADDED), END_STREAM);
            }
        }
    }

    #[test]
    fn the_preface_is_matched_in_pieces() {
        assert_eq!(match_preface(0, b"PRI * "), Ok(6));
        assert_eq!(match_preface(6, &PREFACE[6..]), Ok(PREFACE.len() - 6));
        assert_eq!(match_preface(PREFACE.len(), b"\0\0\0"), Ok(0));
        let mut more = PREFACE.to_vec();
        more.extend([0, 0, 0, 4]);
        assert_eq!(match_preface(0, &more), Ok(PREFACE.len()));
        assert_eq!(match_preface(0, b"GET / HTTP/1.1"), Err(FrameError::NoPreface));
        assert_eq!(match_preface(99, b"x"), Ok(0));
    }

    #[test]
    fn any_bytes_are_frames_or_an_error_never_a_panic() {
        let mut rng = fastrand::Rng::with_seed(0x2545_f491_4f6c_dd1d);
        let mut next = move || rng.u64(..);
        let (mut read, mut refused) = (0, 0);
        for _ in 0..5_000 {
            let mut bytes = Vec::new();
            for _ in 0..(next() % 6) {
                let kind = [DATA, HEADERS, RST_STREAM, PUSH_PROMISE, CONTINUATION, SETTINGS]
                    [(next() % 6) as usize];
                let len = (next() % 40) as usize;
                let payload: Vec<u8> = (0..len).map(|_| next() as u8).collect();
                bytes.extend(frame(kind, (next() % 64) as u8, (next() % 3) as u32, &payload));
            }
            match blocks(&bytes) {
                Ok(_) => read += 1,
                Err(_) => refused += 1,
            }
        }
        assert!(read > 100 && refused > 100, "{read} read, {refused} refused");
    }
}
