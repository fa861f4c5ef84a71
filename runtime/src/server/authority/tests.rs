//! The rewriter's tests: client streams built with a real HPACK encoder (loona's) and an indexing
//! one of the tests' own, cut into reads of every size, through the buffered path and the reader
//! in place alike.

use loona_hpack::{Decoder, Encoder};

use super::*;
use crate::h2frame::{CONTINUATION, END_HEADERS, HEADERS, PADDED, PRIORITY, write_frame};

fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    write_frame(kind, flags, stream, payload, &mut out);
    out
}

/// A request's headers as a client's encoder writes them.
fn request(authority: &[u8], extra: &[(Vec<u8>, Vec<u8>)]) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut h = vec![
        (b":method".to_vec(), b"POST".to_vec()),
        (b":scheme".to_vec(), b"http".to_vec()),
        (b":path".to_vec(), b"/csi.v1.Node/NodePublishVolume".to_vec()),
        (b":authority".to_vec(), authority.to_vec()),
        (b"content-type".to_vec(), b"application/grpc".to_vec()),
        (b"te".to_vec(), b"trailers".to_vec()),
    ];
    h.extend_from_slice(extra);
    h
}

/// Runs `input` through a rewriter in chunks of the given sizes (cycled).
fn run(input: &[u8], chunks: &[usize]) -> (Vec<u8>, u64) {
    let mut rewriter = Rewriter::default();
    let (mut pending, mut out) = (Vec::new(), Vec::new());
    let mut at = 0;
    for &size in chunks.iter().cycle() {
        if at >= input.len() {
            break;
        }
        let end = (at + size.max(1)).min(input.len());
        pending.extend_from_slice(&input[at..end]);
        rewriter.process(&mut pending, &mut out);
        at = end;
    }
    rewriter.finish(&mut pending, &mut out);
    // The socket's reader gives the same bytes, whether it reads in place (`scan`) or
    // through its own buffer (a reader's buffer too small to read into).
    for reader_buffer in [MIN_DIRECT - 1, MIN_DIRECT, 1000, 16_384] {
        let (read, rewritten) = read_through_fix(input, chunks, reader_buffer);
        assert!(read == out, "chunks {chunks:?}, reader buffer {reader_buffer}: bytes differ");
        assert_eq!(rewritten, rewriter.rewritten, "reader buffer {reader_buffer}");
    }
    (out, rewriter.rewritten)
}

/// A socket that gives `input` in chunks of the given sizes (cycled), then its end.
struct Chunks<'a> {
    input: &'a [u8],
    sizes: std::iter::Cycle<std::slice::Iter<'a, usize>>,
}

impl AsyncRead for Chunks<'_> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let size = self.sizes.next().copied().unwrap_or(1).max(1);
        let n = size.min(self.input.len()).min(buf.remaining());
        let (now, later) = self.input.split_at(n);
        buf.put_slice(now);
        self.input = later;
        Poll::Ready(Ok(()))
    }
}

/// What a reader with a buffer of `reader_buffer` bytes gets from [`AuthorityFix`] over a
/// socket giving `input` in `chunks`.
fn read_through_fix(input: &[u8], chunks: &[usize], reader_buffer: usize) -> (Vec<u8>, u64) {
    let mut fix = AuthorityFix::new(Chunks { input, sizes: chunks.iter().cycle() });
    let mut cx = Context::from_waker(std::task::Waker::noop());
    let (mut out, mut buffer) = (Vec::new(), vec![0; reader_buffer]);
    loop {
        let mut read = ReadBuf::new(&mut buffer);
        let Poll::Ready(result) = Pin::new(&mut fix).poll_read(&mut cx, &mut read) else {
            panic!("a socket that never waits made the reader wait");
        };
        result.unwrap();
        if read.filled().is_empty() {
            return (out, fix.rewritten());
        }
        out.extend_from_slice(read.filled());
    }
}

/// The header blocks of a client's frame stream, each decoded by its own decoder in order.
fn decoded_blocks(stream: &[u8]) -> Vec<Vec<(Vec<u8>, Vec<u8>)>> {
    assert!(stream.starts_with(PREFACE));
    let mut decoder = Decoder::new();
    let mut assembler = Assembler::default();
    let (mut rest, mut blocks) = (&stream[PREFACE.len()..], Vec::new());
    while let Some((head, payload)) = h2frame::split_frame(rest) {
        rest = &rest[HEADER_LEN + head.len..];
        if let Step::Block(block) = assembler.push(&head, payload).unwrap() {
            blocks.push(decoder.decode(&block.fragment).unwrap());
        }
    }
    assert!(rest.is_empty());
    blocks
}

/// An encoder that adds every new header to its dynamic table (literal name, incremental
/// indexing) and refers to what is there by index, so `:authority` literals are indexed and
/// later referenced, and the table fills and evicts. Its output is checked by loona's decoder.
#[derive(Default)]
struct IndexingEncoder {
    table: VecDeque<(Vec<u8>, Vec<u8>)>,
}

impl IndexingEncoder {
    fn encode<'a>(&mut self, headers: impl Iterator<Item = (&'a [u8], &'a [u8])>) -> Vec<u8> {
        let mut out = Vec::new();
        for (name, value) in headers {
            if let Some(i) = self.table.iter().position(|(n, v)| n == name && v == value) {
                write_int(62 + i, 7, 0x80, &mut out);
                continue;
            }
            out.push(0x40);
            write_int(name.len(), 7, 0, &mut out);
            out.extend_from_slice(name);
            write_int(value.len(), 7, 0, &mut out);
            out.extend_from_slice(value);
            self.table.push_front((name.to_vec(), value.to_vec()));
            let size = |t: &VecDeque<(Vec<u8>, Vec<u8>)>| {
                t.iter().map(|(n, v)| n.len() + v.len() + 32).sum::<usize>()
            };
            while size(&self.table) > DEFAULT_TABLE_SIZE {
                self.table.pop_back();
            }
        }
        out
    }
}

/// A stream of `n` requests; every `refused_every`-th has a refused authority; header values
/// vary so the dynamic table fills and evicts.
fn stream_of(n: usize, authority: &[u8], refused_every: usize) -> Vec<u8> {
    stream_with_messages(n, authority, refused_every, 2)
}

/// [`stream_of`] with each request's message `message_len` bytes long (its DATA frame
/// 5 more).
fn stream_with_messages(
    n: usize,
    authority: &[u8],
    refused_every: usize,
    message_len: u8,
) -> Vec<u8> {
    let mut encoder = IndexingEncoder::default();
    let mut out = PREFACE.to_vec();
    out.extend(frame(0x4, 0, 0, &[0, 4, 0, 0, 0x10, 0])); // SETTINGS
    for i in 0..n {
        // Refused authorities vary (one of eleven sockets), so several sit in the table.
        let mut auth = b"localhost".to_vec();
        if i % refused_every == 0 {
            auth = authority.to_vec();
            auth.extend_from_slice(format!("{}", i % 11).as_bytes());
        }
        let extra = vec![
            (format!("x-csi-{}", i % 7).into_bytes(), vec![b'v'; 40 + (i * 37) % 300]),
            (b"grpc-timeout".to_vec(), format!("{}m", 1000 + i).into_bytes()),
        ];
        let headers = request(&auth, &extra);
        let block = encoder.encode(headers.iter().map(|(n, v)| (n.as_slice(), v.as_slice())));
        let id = u32::try_from(2 * i + 1).unwrap();
        out.extend(frame(HEADERS, END_HEADERS, id, &block));
        let mut message = vec![0, 0, 0, 0, message_len];
        message.extend((0..message_len).map(|b| b.wrapping_mul(31)));
        out.extend(frame(0x0, 0x1, id, &message));
    }
    out
}

#[test]
fn a_stream_with_nothing_to_rewrite_passes_byte_identical() {
    let input = stream_of(200, b"localhost", 1);
    for chunks in [&[1usize][..], &[7, 3, 64], &[16_384], &[9, 1, 1, 200]] {
        let (out, rewritten) = run(&input, chunks);
        assert_eq!(rewritten, 0);
        assert!(out == input, "chunks {chunks:?}: the output differs");
    }
}

#[test]
fn refused_authorities_are_replaced_and_tables_stay_in_step() {
    // Shorter and longer than `localhost`: a replacement of another length would make h2's
    // table evict at other moments than the client's.
    for authority in [
        &b"/s"[..],
        b"%2Ftmp%2Fcsi%20dir%2Fcsi.sock",
        b"/var/lib/kubelet/plugins/csi.example.com/csi.sock",
        b"/tmp/dir with spaces/csi.sock",
        "/tmp/\u{fc}n\u{ef}c\u{f6}d\u{e9}/csi.sock".as_bytes(),
    ] {
        let input = stream_of(300, authority, 3);
        let (out, rewritten) = run(&input, &[5, 1000, 13]);
        // A refused authority still in the table is referenced by index, not rewritten again.
        assert!(rewritten > 0 && rewritten <= 100, "{rewritten} blocks rewritten");
        let (sent, seen) = (decoded_blocks(&input), decoded_blocks(&out));
        assert_eq!(sent.len(), seen.len());
        for (i, (sent, seen)) in sent.iter().zip(&seen).enumerate() {
            assert_eq!(sent.len(), seen.len(), "block {i}");
            for ((n1, v1), (n2, v2)) in sent.iter().zip(seen) {
                assert_eq!(n1, n2, "block {i}: names in step");
                if n1 == b":authority" {
                    assert!(acceptable(v2), "block {i}: {:?}", String::from_utf8_lossy(v2));
                    if acceptable(v1) {
                        assert_eq!(v1, v2, "block {i}: an acceptable authority is kept");
                    }
                } else {
                    assert_eq!(v1, v2, "block {i}: every other header is kept");
                }
            }
        }
    }
}

#[test]
fn static_name_index_padding_priority_and_size_updates() {
    // 0x20|0x1f... is a size update to 256; 0x41 is `:authority` by static index with
    // incremental indexing; 0x10 is never indexed with a literal name; 0xbe is the newest
    // dynamic entry referenced.
    let mut block = vec![0x3f, 0xe1, 0x01]; // size update: 31 + 225 = 256
    block.extend([0x41, 11]);
    block.extend(b"/x/csi.sock");
    block.extend([0x10, 10]);
    block.extend(b":authority");
    block.extend([5]);
    block.extend(b"/a.sk");
    block.push(0xbe);
    let mut payload = vec![3]; // pad length
    payload.extend([0x80, 0, 0, 3, 15]); // priority: exclusive, depends on 3, weight 15
    payload.extend(&block);
    payload.extend([0, 0, 0]);
    let mut input = PREFACE.to_vec();
    input.extend(frame(HEADERS, END_HEADERS | PADDED | PRIORITY | 0x1, 1, &payload));
    let (out, rewritten) = run(&input, &[4]);
    assert_eq!(rewritten, 1);
    let seen = decoded_blocks(&out);
    let values: Vec<&[u8]> = seen[0].iter().map(|(_, v)| v.as_slice()).collect();
    assert_eq!(values, [&b"localhostxx"[..], b"localhost", b"localhostxx"]);
    // Flags: END_STREAM and PRIORITY kept, padding dropped; the priority bytes kept.
    assert_eq!(out[PREFACE.len() + 4], END_HEADERS | PRIORITY | 0x1);
    assert_eq!(&out[PREFACE.len() + 9..PREFACE.len() + 14], &[0x80, 0, 0, 3, 15]);
}

#[test]
fn a_large_rewritten_block_is_split_into_continuation_frames() {
    let mut encoder = Encoder::new();
    let big = vec![(b"x-big".to_vec(), vec![b'b'; 40_000])];
    let block = encoder
        .encode(request(b"/tmp/csi.sock", &big).iter().map(|(n, v)| (n.as_slice(), v.as_slice())));
    let mut input = PREFACE.to_vec();
    let (a, b) = block.split_at(10_000);
    input.extend(frame(HEADERS, 0, 1, a));
    input.extend(frame(CONTINUATION, END_HEADERS, 1, b));
    let (out, rewritten) = run(&input, &[333]);
    assert_eq!(rewritten, 1);
    let mut rest = &out[PREFACE.len()..];
    let mut sizes = Vec::new();
    while let Some((head, _)) = h2frame::split_frame(rest) {
        sizes.push(head.len);
        rest = &rest[HEADER_LEN + head.len..];
    }
    assert!(sizes.len() >= 3 && sizes.iter().all(|&s| s <= MAX_WRITTEN_FRAME), "{sizes:?}");
    let seen = decoded_blocks(&out);
    // loona's encoder writes `:authority` by its static name without indexing: any length.
    assert_eq!(seen[0][3], (b":authority".to_vec(), b"localhost".to_vec()));
    assert_eq!(seen[0][6].1.len(), 40_000);
}

#[test]
fn reading_in_place_gives_what_the_buffered_reader_gives() {
    // Requests with messages as large as a NodePublishVolume's, cut at random places: the
    // reader in place passes DATA frames in parts and stops at blocks to rewrite. `run`
    // holds every reader to the buffered one.
    let mut rng = fastrand::Rng::with_seed(0x9e37_79b9_7f4a_7c15);
    for authority in [&b"localhost"[..], b"%2Ftmp%2Fcsi.sock", b"/var/lib/kubelet/csi.sock"] {
        let input = stream_with_messages(120, authority, 4, 250);
        for _ in 0..20 {
            let chunks: Vec<usize> = (0..7).map(|_| rng.usize(1..900)).collect();
            let (out, rewritten) = run(&input, &chunks);
            if authority == b"localhost" {
                assert!(out == input && rewritten == 0, "chunks {chunks:?}");
            } else {
                assert!(rewritten > 0, "chunks {chunks:?}");
                assert_eq!(decoded_blocks(&out).len(), 120, "chunks {chunks:?}");
            }
        }
    }
}

/// A stream of requests with the given authorities, in order (each request's own
/// `grpc-timeout`, so every block adds to the table).
fn stream_with_authorities(authorities: &[&[u8]]) -> Vec<u8> {
    let mut encoder = IndexingEncoder::default();
    let mut out = PREFACE.to_vec();
    for (i, authority) in authorities.iter().enumerate() {
        let extra = vec![(b"grpc-timeout".to_vec(), format!("{}m", 1000 + i).into_bytes())];
        let headers = request(authority, &extra);
        let block = encoder.encode(headers.iter().map(|(n, v)| (n.as_slice(), v.as_slice())));
        out.extend(frame(HEADERS, END_HEADERS, u32::try_from(2 * i + 1).unwrap(), &block));
    }
    out
}

#[test]
fn a_connection_settles_after_its_first_requests_need_nothing() {
    let settle = usize::try_from(SETTLE_AFTER).unwrap();
    let refused: &[u8] = b"/var/lib/kubelet/csi.sock";
    // A refused authority among the first requests: rewritten, and the connection never
    // settles (every later refused literal is rewritten too).
    let mut early = vec![&b"localhost"[..]; settle - 1];
    early.extend([refused; 3]);
    early.extend(vec![&b"localhost"[..]; 2 * settle]);
    early.push(b"/tmp/other.sock");
    let input = stream_with_authorities(&early);
    let (out, rewritten) = run(&input, &[16_384]);
    assert_eq!(rewritten, 2, "the first refused literal and the later other one");
    let seen = decoded_blocks(&out);
    assert!(seen.iter().flatten().all(|(n, v)| n != b":authority" || acceptable(v)));
    // The same refused authority after the first `SETTLE_AFTER` requests: the connection
    // settled and passes it as it came (the limit the module's docs name).
    let mut late = vec![&b"localhost"[..]; settle];
    late.push(refused);
    let input = stream_with_authorities(&late);
    for chunks in [&[16_384usize][..], &[1], &[7, 300]] {
        let (out, rewritten) = run(&input, chunks);
        assert!(out == input && rewritten == 0, "chunks {chunks:?}");
    }
}

#[test]
fn garbage_passes_through_without_a_panic() {
    let mut rng = fastrand::Rng::with_seed(0x2545_f491_4f6c_dd1d);
    for round in 0..500 {
        let mut input = if round % 2 == 0 { PREFACE.to_vec() } else { Vec::new() };
        for _ in 0..(round % 97) * 7 {
            input.push(rng.u8(..));
        }
        let (out, rewritten) = run(&input, &[1 + round % 17]);
        // Nothing can be lost or invented: with nothing rewritten, the bytes are the same.
        if rewritten == 0 {
            assert!(out == input, "round {round}");
        }
    }
}

#[test]
fn an_unfinished_header_block_at_the_end_is_not_lost() {
    // Found by the fuzzer: HEADERS without END_HEADERS, then the stream ends.
    let mut input = PREFACE.to_vec();
    input.extend([0, 0, 0, 1, 0, 0, 0, 2, 0xff, 0xff, 0xee]);
    assert!(run(&input, &[11]).0 == input);
}

#[test]
fn not_http2_is_passed_through() {
    let input = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n".to_vec();
    assert_eq!(run(&input, &[3]).0, input);
}

#[test]
fn filler_has_the_length_asked_and_is_acceptable() {
    for len in 1..40 {
        let f = filler(len);
        assert_eq!(f.len(), len);
        assert!(acceptable(&f));
    }
    assert!(!acceptable(b"/tmp/csi.sock"));
}
