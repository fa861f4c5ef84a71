//! The tap's HTTP/2 reader: one direction of a connection, frame by frame, with its own HPACK
//! decoder (so the header table stays in step with the peer's). Frames, padding, header-block
//! assembly and their limits are csikit-runtime's one frame layer (`h2frame`, which the
//! `:authority` rewriter stands on too), HPACK its `hpack`; this module turns what they give into
//! the few frames, and the few header fields, the tap cares about.

use csikit_runtime::h2frame::{
    Assembler, DATA, END_STREAM, HEADER_LEN, PREFACE, PUSH_PROMISE, RST_STREAM, Step,
    match_preface, split_frame, strip_padding,
};

use csikit_runtime::hpack::Decoder;

use crate::queue::Dir;

/// The header fields the tap reads; the others are decoded (to keep the table in step) and
/// dropped.
const FIELDS: [&[u8]; 4] = [b":path", b":status", b"grpc-status", b"grpc-message"];

/// One direction of a connection, as the tap follows it.
pub(crate) struct Reader {
    /// Bytes not yet made into frames.
    buf: Vec<u8>,
    /// Preface bytes seen so far, while the client's preface is not complete (`None` once it is,
    /// and in the plugin's direction).
    preface: Option<usize>,
    decoder: Decoder,
    blocks: Assembler,
}

impl Reader {
    pub(crate) fn new(dir: Dir) -> Self {
        Self {
            buf: Vec::new(),
            preface: (dir == Dir::Client).then_some(0),
            decoder: Decoder::default(),
            blocks: Assembler::default(),
        }
    }
}

/// A frame, as far as the tap cares.
pub(crate) enum Frame {
    /// A header block; `fields` holds those of [`FIELDS`] it has, in order.
    Headers {
        stream: u32,
        end_stream: bool,
        fields: Vec<(Vec<u8>, Vec<u8>)>,
    },
    Data {
        stream: u32,
        end_stream: bool,
        data: Vec<u8>,
    },
    Reset {
        stream: u32,
        code: u32,
    },
}

/// Adds `bytes` to `r` and reads the whole frames now in it.
pub(crate) fn read_frames(
    r: &mut Reader,
    mut bytes: &[u8],
    out: &mut Vec<Frame>,
) -> Result<(), String> {
    if let Some(seen) = r.preface {
        let n = match_preface(seen, bytes).map_err(|e| e.to_string())?;
        r.preface = (seen + n < PREFACE.len()).then_some(seen + n);
        bytes = &bytes[n..];
    }
    r.buf.extend_from_slice(bytes);
    let mut at = 0;
    while let Some((head, payload)) = split_frame(&r.buf[at..]) {
        at += HEADER_LEN + head.len;
        match r.blocks.push(&head, payload).map_err(|e| e.to_string())? {
            Step::Partial => {}
            Step::Block(block) => {
                // A pushed request's header block only keeps the decoder in step.
                let stream = if block.kind == PUSH_PROMISE { 0 } else { block.stream };
                let end_stream = block.end_stream();
                out.push(headers(&mut r.decoder, stream, end_stream, &block.fragment)?);
            }
            Step::Frame => match head.kind {
                DATA => {
                    let data = strip_padding(&head, payload).map_err(|e| e.to_string())?;
                    out.push(Frame::Data {
                        stream: head.stream,
                        end_stream: head.has(END_STREAM),
                        data: data.to_vec(),
                    });
                }
                RST_STREAM => {
                    let code = payload.first_chunk::<4>().map_or(0, |c| u32::from_be_bytes(*c));
                    out.push(Frame::Reset { stream: head.stream, code });
                }
                _ => {}
            },
        }
    }
    r.buf.drain(..at);
    Ok(())
}

fn headers(
    decoder: &mut Decoder,
    stream: u32,
    end_stream: bool,
    block: &[u8],
) -> Result<Frame, String> {
    let mut fields = Vec::new();
    decoder
        .decode(block, |n, v| {
            if FIELDS.contains(&n) {
                fields.push((n.to_vec(), v.to_vec()));
            }
        })
        .map_err(|e| format!("HPACK: {e}"))?;
    Ok(Frame::Headers { stream, end_stream, fields })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use csikit_runtime::h2frame::{self, CONTINUATION, END_HEADERS, HEADERS, PADDED, PRIORITY};

    /// One frame's bytes, its header written by the runtime's frame layer.
    pub(crate) fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
        let mut f = Vec::new();
        h2frame::write_frame(kind, flags, stream, payload, &mut f);
        f
    }

    #[test]
    fn frames_split_anywhere_read_the_same() {
        let mut encoder = loona_hpack::Encoder::new();
        let block = encoder.encode([(&b":path"[..], &b"/csi.v1.Identity/Probe"[..])]);
        let mut bytes = PREFACE.to_vec();
        bytes.extend(frame(0x4, 0, 0, &[]));
        // A header block over HEADERS (padded, with priority) and a CONTINUATION.
        let (a, b) = block.split_at(3);
        let mut first = vec![2u8];
        first.extend_from_slice(&[0, 0, 0, 0, 16]);
        first.extend_from_slice(a);
        first.extend_from_slice(&[0, 0]);
        bytes.extend(frame(HEADERS, PADDED | PRIORITY, 1, &first));
        bytes.extend(frame(CONTINUATION, END_HEADERS, 1, b));
        bytes.extend(frame(DATA, END_STREAM, 1, &[0, 0, 0, 0, 0]));
        for cut in 0..bytes.len() {
            let mut r = Reader::new(Dir::Client);
            let mut out = Vec::new();
            read_frames(&mut r, &bytes[..cut], &mut out).expect("reads");
            read_frames(&mut r, &bytes[cut..], &mut out).expect("reads");
            assert_eq!(out.len(), 2, "cut at {cut}");
            match &out[0] {
                Frame::Headers { stream: 1, end_stream: false, fields } => {
                    assert_eq!(fields, &[(b":path".to_vec(), b"/csi.v1.Identity/Probe".to_vec())]);
                }
                _ => panic!("cut at {cut}: not the headers"),
            }
            assert!(
                matches!(&out[1], Frame::Data { stream: 1, end_stream: true, data } if data.len() == 5)
            );
        }
    }

    #[test]
    fn any_bytes_are_frames_or_a_reason_never_a_panic() {
        // A fixed-seed generator: frames with random types, flags, lengths and payloads (header
        // blocks included), cut at random places.
        let mut rng = fastrand::Rng::with_seed(0x2545_f491_4f6c_dd1d);
        let mut next = move || rng.u64(..);
        let (mut followed, mut refused) = (0, 0);
        for _ in 0..5_000 {
            let mut bytes = PREFACE.to_vec();
            for _ in 0..(next() % 6) {
                let kind = [DATA, HEADERS, RST_STREAM, PUSH_PROMISE, CONTINUATION, 0x4, 0x8]
                    [(next() % 7) as usize];
                let flags = (next() % 64) as u8;
                let len = (next() % 40) as usize;
                let payload: Vec<u8> = (0..len).map(|_| next() as u8).collect();
                bytes.extend(frame(kind, flags, (next() % 4) as u32, &payload));
            }
            let cut = (next() as usize) % (bytes.len() + 1);
            let mut r = Reader::new(Dir::Client);
            let mut out = Vec::new();
            let read = read_frames(&mut r, &bytes[..cut], &mut out)
                .and_then(|()| read_frames(&mut r, &bytes[cut..], &mut out));
            if read.is_ok() { followed += 1 } else { refused += 1 }
        }
        assert!(followed > 100 && refused > 100, "{followed} followed, {refused} refused");
    }

    #[test]
    fn what_is_not_http2_is_refused_with_a_reason() {
        let mut r = Reader::new(Dir::Client);
        let e = read_frames(&mut r, b"GET / HTTP/1.1\r\n", &mut Vec::new()).err();
        assert_eq!(e.as_deref(), Some("no HTTP/2 connection preface"));
        let mut r = Reader::new(Dir::Plugin);
        let e =
            read_frames(&mut r, &frame(CONTINUATION, END_HEADERS, 1, b"x"), &mut Vec::new()).err();
        assert_eq!(e.as_deref(), Some("a CONTINUATION without a header block"));
        let mut r = Reader::new(Dir::Plugin);
        let e = read_frames(
            &mut r,
            &frame(HEADERS, END_HEADERS, 1, &[0xff, 0xff, 0xff, 0xff, 0x0f]),
            &mut Vec::new(),
        )
        .err();
        assert!(e.is_some_and(|e| e.starts_with("HPACK")));
        let mut r = Reader::new(Dir::Plugin);
        let e = read_frames(&mut r, &frame(DATA, PADDED, 1, &[9, 1, 2]), &mut Vec::new()).err();
        assert_eq!(e.as_deref(), Some("padding longer than its frame"));
    }
}
