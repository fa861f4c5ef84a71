//! Any `:authority` over a unix socket: a reader between the accepted socket and hyper that
//! rewrites a request's `:authority` h2 would refuse, and nothing else.
//!
//! h2 (under hyper and tonic) refuses a request whose `:authority` is not a valid URI authority
//! (hyperium/h2#487), and has no switch for it. Over a unix socket, real CSI clients send what h2
//! refuses: grpcio (Python, C++) from 1.57 the %-encoded socket path, grpc-java and older grpc-go
//! tools (gocsi's `csc`) the path itself; grpc-go as kubelet and the sidecars use it sends
//! `localhost`. The authority means nothing on a unix socket, so the skeleton puts a valid one in
//! its place before h2 reads it.
//!
//! # Design
//!
//! [`AuthorityFix`] wraps the accepted stream. Writes (server to client) pass straight through.
//! Reads pass the client's connection preface and every frame through byte for byte, except a
//! request's header block (HEADERS plus any CONTINUATION frames) with a literal `:authority` that
//! `http::uri::Authority` (h2's own check) refuses. Only that value is replaced, so h2's HPACK
//! decoder and the client's encoder stay in step without a second encoder:
//!
//! * each representation of the block is copied as it came (indexed fields, table size updates,
//!   other literals, the name part of the rewritten literal), and only the value string of a
//!   refused `:authority` literal is written anew, as a plain (not Huffman) string;
//! * a literal the client adds to its dynamic table gets a replacement of exactly the same length
//!   (`localhost`, cut or padded with `x`), so the entry h2 adds has the size the client's has,
//!   evictions happen at the same moments and every later index means the same entry on both
//!   sides; a later indexed reference to that entry reads the replacement in h2;
//! * the rewritten block goes out as a HEADERS frame (with the original flags and priority, but no
//!   padding) and CONTINUATION frames of at most 16,384 bytes, the frame size every peer accepts.
//!
//! Frames are read and written by the runtime's one frame layer, [`crate::h2frame`] (headers,
//! padding, header-block assembly and its limit), and HPACK's integers, strings and Huffman code
//! by [`crate::hpack`]; this module only follows the table and edits the block.
//!
//! To know what a name index means, the reader follows the client's dynamic table (whether each
//! entry's name is `:authority`, and its size) through every header block and size update.
//!
//! # Limits
//!
//! * A header block larger than [`MAX_HEADER_BLOCK`] (1 MiB), a malformed frame, an HPACK error, a
//!   PUSH_PROMISE (which no client may send), or anything that is not HTTP/2 with prior
//!   knowledge is passed through untouched from there on (h2 then answers as it would have);
//!   nothing is rewritten on that connection afterwards.
//! * An empty `:authority` added to the dynamic table cannot get a same-length replacement and is
//!   left as it is (h2 refuses that request); no known client sends one.
//! * A connection whose first [`SETTLE_AFTER`] requests all carried an `:authority` h2 takes
//!   is passed through from then on, without a look: a client that later switched to a
//!   refused authority on that connection would have those requests refused by h2. No known
//!   client changes its authority on a connection (a gRPC channel has one).
//! * TCP endpoints are not wrapped: h2's checks stay as they are there.

use std::collections::VecDeque;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::h2frame::{
    self, Assembler, CONTINUATION, END_HEADERS, HEADER_LEN, HEADERS, HeaderBlock, MAX_HEADER_BLOCK,
    MAX_WRITTEN_FRAME, PREFACE, PUSH_PROMISE, Step,
};
use crate::hpack::{
    DEFAULT_TABLE_SIZE, ENTRY_OVERHEAD, RawString, STATIC_TABLE, huffman_decode, read_int,
    read_string,
};
/// How much is read from the socket at once into the rewriter's own buffer.
const READ_CHUNK: usize = 16 * 1024;
/// The room a reader's buffer needs for the socket to be read straight into it: a frame
/// header's worth at least (hyper's buffers hold kilobytes).
const MIN_DIRECT: usize = 64;
/// The most raw frame bytes held for one header block (fragments and frame headers): bounds a
/// flood of empty CONTINUATION frames, which [`MAX_HEADER_BLOCK`] alone does not.
const MAX_HELD: usize = 2 * MAX_HEADER_BLOCK;
/// After this many requests whose `:authority` h2 takes, none rewritten, the connection is
/// passed through untouched: a client sends one authority per connection (tonic, and grpc-go as
/// kubelet and the sidecars use it, send `localhost`), so the rest of its requests need nothing,
/// and the reader costs them nothing (the `Limits` above say what this gives up).
pub const SETTLE_AFTER: u64 = 8;
/// The room kept for the next header block once one has been handled: what ordinary requests'
/// headers need; a larger buffer (a huge block) is freed.
const KEPT_PENDING: usize = 16 * 1024;

/// The accepted stream, with the `:authority` of each request made acceptable to h2.
#[derive(Debug)]
pub struct AuthorityFix<S> {
    inner: S,
    rewriter: Rewriter,
    /// Bytes read from the socket and not yet processed.
    input: Vec<u8>,
    /// Processed bytes not yet handed to the reader.
    output: Vec<u8>,
    /// Where in `output` the reader is.
    output_at: usize,
    /// Where the socket is read into.
    scratch: Vec<u8>,
    eof: bool,
}

impl<S> AuthorityFix<S> {
    /// Wraps an accepted stream.
    pub fn new(inner: S) -> Self {
        Self {
            inner,
            rewriter: Rewriter::default(),
            input: Vec::new(),
            output: Vec::new(),
            output_at: 0,
            scratch: Vec::new(),
            eof: false,
        }
    }

    /// The wrapped stream.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// How many header blocks had their `:authority` rewritten so far.
    pub fn rewritten(&self) -> u64 {
        self.rewriter.rewritten()
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for AuthorityFix<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if this.output_at == this.output.len() && this.input.is_empty() && this.rewriter.passing() {
            // Settled, lost track or not HTTP/2: the socket as it is.
            return Pin::new(&mut this.inner).poll_read(cx, buf);
        }
        loop {
            if this.output_at < this.output.len() {
                let n = buf.remaining().min(this.output.len() - this.output_at);
                buf.put_slice(&this.output[this.output_at..this.output_at + n]);
                this.output_at += n;
                if this.output_at == this.output.len() {
                    this.output.clear();
                    this.output_at = 0;
                }
                return Poll::Ready(Ok(()));
            }
            if this.eof {
                return Poll::Ready(Ok(()));
            }
            if this.input.is_empty() && this.rewriter.idle() && buf.remaining() >= MIN_DIRECT {
                // Nothing held: the socket is read straight into the reader's buffer and what
                // needs no change stays there, without a copy (the usual case, per request).
                let before = buf.filled().len();
                match Pin::new(&mut this.inner).poll_read(cx, buf) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                    Poll::Ready(Ok(())) => {}
                }
                let read = &buf.filled()[before..];
                if read.is_empty() {
                    // The peer is gone, and nothing was held.
                    this.eof = true;
                    return Poll::Ready(Ok(()));
                }
                let scanned = this.rewriter.scan(read, &mut this.output);
                if scanned.consumed < read.len() {
                    this.input.extend_from_slice(&read[scanned.consumed..]);
                    this.rewriter.process(&mut this.input, &mut this.output);
                }
                buf.set_filled(before + scanned.unchanged);
                if scanned.unchanged > 0 {
                    return Poll::Ready(Ok(()));
                }
                continue;
            }
            // One scratch buffer per connection, zeroed once, not one per poll.
            if this.scratch.is_empty() {
                this.scratch = vec![0; READ_CHUNK];
            }
            let mut read = ReadBuf::new(&mut this.scratch);
            match Pin::new(&mut this.inner).poll_read(cx, &mut read) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Ready(Ok(())) => {
                    let filled = read.filled();
                    if filled.is_empty() {
                        // The peer is gone: whatever is left unparsed goes on as it came.
                        this.eof = true;
                        this.rewriter.finish(&mut this.input, &mut this.output);
                    } else {
                        this.input.extend_from_slice(filled);
                        this.rewriter.process(&mut this.input, &mut this.output);
                    }
                }
            }
        }
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for AuthorityFix<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

impl<S: tonic::transport::server::Connected> tonic::transport::server::Connected
    for AuthorityFix<S>
{
    type ConnectInfo = S::ConnectInfo;

    fn connect_info(&self) -> Self::ConnectInfo {
        self.inner.connect_info()
    }
}

/// Where the reader is in the client's byte stream.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Waiting for the connection preface.
    #[default]
    Preface,
    /// Reading frames.
    Frames,
    /// Passing everything through untouched: not HTTP/2, the reader lost track, or the
    /// connection settled (see [`SETTLE_AFTER`]).
    PassThrough,
}

/// The frame-level state machine: pure, so it can be tested and fuzzed without sockets.
#[derive(Debug, Default)]
pub struct Rewriter {
    stage: Stage,
    table: Table,
    /// Puts each header block together.
    assembler: Assembler,
    /// The frames of a header block whose END_HEADERS has not come yet, as they came.
    pending: Vec<u8>,
    /// Header blocks rewritten so far.
    rewritten: u64,
    /// Header blocks read that needed no change.
    clean: u64,
    /// Where Huffman-coded strings are decoded.
    scratch: Vec<u8>,
    /// Bytes of a frame that is not part of a header block, still to come and passed as they
    /// come ([`Rewriter::scan`] passes such a frame in parts; [`Rewriter::process`] holds it
    /// whole).
    skip: usize,
}

/// What [`Rewriter::scan`] made of bytes just read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scanned {
    /// The first `unchanged` bytes go on as they came, where they are.
    pub unchanged: usize,
    /// The bytes from `unchanged` to `consumed` were one header block, now rewritten at the end
    /// of the output; the bytes from `consumed` on go through [`Rewriter::process`].
    pub consumed: usize,
}

impl Rewriter {
    /// How many header blocks had their `:authority` rewritten so far.
    pub fn rewritten(&self) -> u64 {
        self.rewritten
    }

    /// At the end of the stream: what is held (an unfinished header block, an incomplete frame)
    /// goes to `output` as it came.
    pub fn finish(&mut self, input: &mut Vec<u8>, output: &mut Vec<u8>) {
        output.append(&mut self.pending);
        output.append(input);
    }

    /// Moves every complete unit (the preface, whole frames, whole header blocks) from the front
    /// of `input` to `output`, rewritten where needed; an incomplete tail stays in `input`.
    pub fn process(&mut self, input: &mut Vec<u8>, output: &mut Vec<u8>) {
        let mut at = 0;
        loop {
            let rest = &input[at..];
            match self.stage {
                Stage::PassThrough => {
                    output.extend_from_slice(&self.pending);
                    self.pending.clear();
                    output.extend_from_slice(rest);
                    at = input.len();
                    break;
                }
                Stage::Preface => match h2frame::match_preface(0, rest) {
                    Err(_) => self.stage = Stage::PassThrough,
                    Ok(n) if n < PREFACE.len() => break,
                    Ok(n) => {
                        output.extend_from_slice(PREFACE);
                        at += n;
                        self.stage = Stage::Frames;
                    }
                },
                Stage::Frames => {
                    let Some(head) = h2frame::Head::parse(rest) else { break };
                    let Some((head, payload)) = h2frame::split_frame(rest) else {
                        if head.len > MAX_HEADER_BLOCK + MAX_WRITTEN_FRAME {
                            // Larger than anything assembled here: no need to hold it.
                            self.stage = Stage::PassThrough;
                            continue;
                        }
                        break;
                    };
                    let frame = &rest[..HEADER_LEN + head.len];
                    at += frame.len();
                    match self.assembler.push(&head, payload) {
                        Ok(Step::Frame) => output.extend_from_slice(frame),
                        Ok(Step::Partial) => {
                            self.pending.extend_from_slice(frame);
                            if self.pending.len() > MAX_HELD {
                                self.stage = Stage::PassThrough;
                            }
                        }
                        Ok(Step::Block(block)) => {
                            self.pending.extend_from_slice(frame);
                            // Taken for the call and put back emptied: the buffer keeps its
                            // room for the next request's headers instead of being freed and
                            // allocated again per request (unless a huge block made it large).
                            let mut frames = std::mem::take(&mut self.pending);
                            self.finish_block(&block, &frames, output);
                            if frames.capacity() <= KEPT_PENDING {
                                frames.clear();
                                self.pending = frames;
                            }
                        }
                        Err(_) => {
                            // A malformed frame, or one inside a header block: h2 will say so.
                            output.extend_from_slice(&self.pending);
                            self.pending.clear();
                            output.extend_from_slice(frame);
                            self.stage = Stage::PassThrough;
                        }
                    }
                }
            }
        }
        input.drain(..at);
    }

    /// A whole header block (its HEADERS and CONTINUATION frames, as they came): copied, or
    /// sent anew with the `:authority` value replaced.
    fn finish_block(&mut self, block: &HeaderBlock, frames: &[u8], output: &mut Vec<u8>) {
        if block.kind == PUSH_PROMISE {
            // No client may push; h2 ends the connection, and nothing more is read here.
            output.extend_from_slice(frames);
            self.stage = Stage::PassThrough;
            return;
        }
        let rewritten = self.rewrite(
            block.stream,
            block.flags,
            block.priority.as_ref(),
            &block.fragment,
            output,
        );
        if rewritten != Ok(true) {
            output.extend_from_slice(frames);
        }
    }

    /// Reads a request's header block, following the table: `Ok(true)` when it was written to
    /// `output` with a refused `:authority` replaced, `Ok(false)` when it goes on as it came,
    /// `Err` when it is not valid HPACK (it goes on as it came, and so does everything after it).
    fn rewrite(
        &mut self,
        stream: u32,
        flags: u8,
        priority: Option<&[u8; 5]>,
        fragment: &[u8],
        output: &mut Vec<u8>,
    ) -> Result<bool, ()> {
        match rewrite_block(&mut self.table, fragment, &mut self.scratch) {
            Err(()) => {
                self.stage = Stage::PassThrough;
                Err(())
            }
            Ok(None) => {
                self.clean += 1;
                if self.rewritten == 0 && self.clean >= SETTLE_AFTER {
                    // h2's table is the client's, byte for byte: nothing more to follow.
                    self.stage = Stage::PassThrough;
                }
                Ok(false)
            }
            Ok(Some(new_block)) => {
                self.rewritten += 1;
                h2frame::write_header_block(stream, flags, priority, &new_block, output);
                Ok(true)
            }
        }
    }

    /// Whether everything from here on passes untouched (once nothing is held any more).
    pub fn passing(&self) -> bool {
        self.stage == Stage::PassThrough && self.pending.is_empty()
    }

    /// Whether nothing is held: no unfinished header block, no preface still to come. Bytes
    /// read then may go through [`Rewriter::scan`] in place.
    pub fn idle(&self) -> bool {
        self.stage != Stage::Preface && self.pending.is_empty() && !self.assembler.in_block()
    }

    /// Reads bytes just read while [`idle`](Self::idle), where they are: the usual traffic (frames
    /// that are not part of a header block, in whole or in part, and requests whose header
    /// block is one HEADERS frame needing no change) goes on without being copied. It stops at
    /// what needs [`process`](Self::process): a header block to rewrite (written to `output`
    /// here, as its table update is already made), one spread over frames, a frame cut short
    /// inside a header block, anything malformed. Bytes it passes come out exactly as
    /// [`process`](Self::process) would give them.
    pub fn scan(&mut self, bytes: &[u8], output: &mut Vec<u8>) -> Scanned {
        let all = Scanned { unchanged: bytes.len(), consumed: bytes.len() };
        if self.stage == Stage::PassThrough {
            return all;
        }
        let mut at = self.skip.min(bytes.len());
        self.skip -= at;
        while at < bytes.len() {
            let rest = &bytes[at..];
            let Some(head) = h2frame::Head::parse(rest) else { break };
            if matches!(head.kind, HEADERS | PUSH_PROMISE | CONTINUATION) {
                let Some((head, payload)) = h2frame::split_frame(rest) else { break };
                if head.kind != HEADERS || !head.has(END_HEADERS) {
                    break;
                }
                let Ok(first) = h2frame::FirstFrame::read(&head, payload) else { break };
                let frame = HEADER_LEN + head.len;
                match self.rewrite(
                    head.stream,
                    head.flags,
                    first.priority.as_ref(),
                    first.fragment,
                    output,
                ) {
                    Ok(false) if self.stage == Stage::PassThrough => return all,
                    Ok(false) => at += frame,
                    Ok(true) => return Scanned { unchanged: at, consumed: at + frame },
                    Err(()) => return all,
                }
            } else {
                let end = HEADER_LEN + head.len;
                if end <= rest.len() {
                    at += end;
                    continue;
                }
                if head.len > MAX_HEADER_BLOCK + MAX_WRITTEN_FRAME {
                    // As `process` does with a frame too large to hold.
                    self.stage = Stage::PassThrough;
                    return all;
                }
                self.skip = end - rest.len();
                return all;
            }
        }
        Scanned { unchanged: at, consumed: at }
    }
}

/// What the reader keeps of one dynamic table entry: whether its name is `:authority`, its
/// name's length (for entries that reuse the name) and its HPACK size (name + value + 32).
#[derive(Debug, Clone, Copy)]
struct Entry {
    authority: bool,
    name_len: usize,
    size: usize,
}

/// The client encoder's dynamic table, as far as this reader needs it.
#[derive(Debug)]
struct Table {
    entries: VecDeque<Entry>,
    size: usize,
    max: usize,
}

impl Default for Table {
    fn default() -> Self {
        Self { entries: VecDeque::new(), size: 0, max: DEFAULT_TABLE_SIZE }
    }
}

impl Table {
    /// Whether the name at HPACK index `index` (1-based; static then dynamic) is `:authority`.
    fn name_is_authority(&self, index: usize) -> Result<bool, ()> {
        match index {
            0 => Err(()),
            // The static table's only `:authority` entry.
            1 => Ok(true),
            2..=61 => Ok(false),
            _ => self.entries.get(index - 62).map(|e| e.authority).ok_or(()),
        }
    }

    /// The length of the name at HPACK index `index`.
    fn name_len(&self, index: usize) -> Result<usize, ()> {
        match index {
            0 => Err(()),
            1..=61 => Ok(STATIC_TABLE[index - 1].0.len()),
            _ => self.entries.get(index - 62).map(|e| e.name_len).ok_or(()),
        }
    }

    fn insert(&mut self, entry: Entry) {
        while self.size + entry.size > self.max {
            match self.entries.pop_back() {
                Some(old) => self.size -= old.size,
                None => break,
            }
        }
        if entry.size <= self.max {
            self.size += entry.size;
            self.entries.push_front(entry);
        }
    }

    fn resize(&mut self, max: usize) {
        self.max = max;
        while self.size > self.max {
            match self.entries.pop_back() {
                Some(old) => self.size -= old.size,
                None => break,
            }
        }
    }
}

/// An HPACK string's bytes: where they are, or Huffman-decoded into `scratch` (one buffer per
/// connection, so a request's headers cost no allocation).
fn decode_string<'a>(raw: RawString<'a>, scratch: &'a mut Vec<u8>) -> Result<&'a [u8], ()> {
    if !raw.huffman {
        return Ok(raw.bytes);
    }
    scratch.clear();
    huffman_decode(raw.bytes, scratch).map_err(drop)?;
    Ok(scratch)
}

/// An HPACK integer with an `n`-bit prefix whose other bits are `high`.
fn write_int(value: usize, n: u32, high: u8, out: &mut Vec<u8>) {
    let mask = (1usize << n) - 1;
    if value < mask {
        // `value < mask <= 127`: fits in the prefix.
        out.push(high | u8::try_from(value).unwrap_or(0));
        return;
    }
    out.push(high | u8::try_from(mask).unwrap_or(0));
    let mut rest = value - mask;
    while rest >= 0x80 {
        out.push(u8::try_from(rest & 0x7f).unwrap_or(0) | 0x80);
        rest >>= 7;
    }
    out.push(u8::try_from(rest).unwrap_or(0));
}

/// Whether h2 takes `value` as a request's `:authority`.
fn acceptable(value: &[u8]) -> bool {
    http::uri::Authority::try_from(value).is_ok()
}

/// A valid authority of exactly `len` bytes: `localhost` cut short or padded with `x`.
fn filler(len: usize) -> Vec<u8> {
    let mut out: Vec<u8> = b"localhost".iter().copied().take(len).collect();
    out.resize(len, b'x');
    out
}

/// Reads one header block, following the dynamic table; returns the block with every refused
/// `:authority` value replaced, or `None` when nothing needs to change. `Err` when the block is
/// not valid HPACK (the caller then stops rewriting).
fn rewrite_block(
    table: &mut Table,
    block: &[u8],
    scratch: &mut Vec<u8>,
) -> Result<Option<Vec<u8>>, ()> {
    let mut out: Option<Vec<u8>> = None;
    // Bytes of `block` up to `copied` are already in `out` (when it exists).
    let mut copied = 0;
    let mut at = 0;
    while at < block.len() {
        let b = block[at];
        if b & 0x80 != 0 {
            // Indexed field: the index must exist; the table does not change.
            let index = read_int(block, &mut at, 7).map_err(drop)?;
            table.name_is_authority(index)?;
            continue;
        }
        if b & 0xe0 == 0x20 {
            let max = read_int(block, &mut at, 5).map_err(drop)?;
            table.resize(max);
            continue;
        }
        // A literal: with incremental indexing (01), without (0000) or never indexed (0001).
        let (prefix, indexing) = if b & 0xc0 == 0x40 { (6, true) } else { (4, false) };
        let name_index = read_int(block, &mut at, prefix).map_err(drop)?;
        let (authority, name_len) = if name_index == 0 {
            let name = decode_string(read_string(block, &mut at).map_err(drop)?, scratch)?;
            (name == b":authority", name.len())
        } else {
            (table.name_is_authority(name_index)?, table.name_len(name_index)?)
        };
        let value_start = at;
        let value = read_string(block, &mut at).map_err(drop)?;
        // Only what is needed is decoded: an `:authority` value, and the length of a value the
        // client adds to its table (a Huffman code's length is known only by decoding it).
        let value = match (authority, indexing, value) {
            (false, false, _) => continue,
            (false, true, RawString { huffman: false, bytes }) => {
                let size = name_len + bytes.len() + ENTRY_OVERHEAD;
                table.insert(Entry { authority, name_len, size });
                continue;
            }
            (_, _, value) => decode_string(value, scratch)?,
        };
        if indexing {
            table.insert(Entry {
                authority,
                name_len,
                size: name_len + value.len() + ENTRY_OVERHEAD,
            });
        }
        if authority && !acceptable(value) && !(indexing && value.is_empty()) {
            let new = out.get_or_insert_with(|| Vec::with_capacity(block.len() + 64));
            new.extend_from_slice(&block[copied..value_start]);
            let replacement = if indexing { filler(value.len()) } else { b"localhost".to_vec() };
            write_int(replacement.len(), 7, 0, new);
            new.extend_from_slice(&replacement);
            copied = at;
        }
    }
    Ok(out.map(|mut new| {
        new.extend_from_slice(&block[copied..]);
        new
    }))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests")]
mod tests;
