//! The tap's HTTP/2 reader: one direction of a connection, frame by frame, with its own HPACK
//! decoder (so the header table stays in step with the peer's), header blocks put together
//! across CONTINUATION frames, padding stripped.

use crate::queue::Dir;

/// The HTTP/2 client connection preface.
pub(crate) const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
const FRAME_HEADER: usize = 9;
/// Frame types.
pub(crate) const DATA: u8 = 0x0;
pub(crate) const HEADERS: u8 = 0x1;
pub(crate) const RST_STREAM: u8 = 0x3;
pub(crate) const PUSH_PROMISE: u8 = 0x5;
pub(crate) const CONTINUATION: u8 = 0x9;
/// Flags.
pub(crate) const END_STREAM: u8 = 0x1;
pub(crate) const END_HEADERS: u8 = 0x4;
pub(crate) const PADDED: u8 = 0x8;
pub(crate) const PRIORITY: u8 = 0x20;
/// The largest frame a peer may be allowed to send (2^24 - 1); anything larger is not HTTP/2.
const MAX_FRAME: usize = (1 << 24) - 1;
/// The largest header block put together; a larger one is not followed.
const MAX_BLOCK: usize = 1 << 20;

/// One direction of a connection, as the tap follows it.
pub(crate) struct Reader {
    /// Bytes not yet made into frames.
    buf: Vec<u8>,
    /// Preface bytes still expected (the client's direction only).
    preface: usize,
    decoder: loona_hpack::Decoder<'static>,
    /// A header block waiting for its CONTINUATION frames: stream, END_STREAM, fragments so far.
    block: Option<(u32, bool, Vec<u8>)>,
}

impl Reader {
    pub(crate) fn new(dir: Dir) -> Self {
        Self {
            buf: Vec::new(),
            preface: if dir == Dir::Client { PREFACE.len() } else { 0 },
            decoder: loona_hpack::Decoder::new(),
            block: None,
        }
    }
}

/// A frame, as far as the tap cares.
pub(crate) enum Frame {
    Headers { stream: u32, end_stream: bool, fields: Vec<(Vec<u8>, Vec<u8>)> },
    Data { stream: u32, end_stream: bool, data: Vec<u8> },
    Reset { stream: u32, code: u32 },
}

/// Adds `bytes` to `r` and reads the whole frames now in it.
pub(crate) fn read_frames(
    r: &mut Reader,
    mut bytes: &[u8],
    out: &mut Vec<Frame>,
) -> Result<(), String> {
    if r.preface > 0 {
        let at = PREFACE.len() - r.preface;
        let n = r.preface.min(bytes.len());
        if bytes[..n] != PREFACE[at..at + n] {
            return Err("no HTTP/2 connection preface".into());
        }
        r.preface -= n;
        bytes = &bytes[n..];
    }
    r.buf.extend_from_slice(bytes);
    let mut at = 0;
    while let Some(h) = r.buf.get(at..at + FRAME_HEADER) {
        let len = usize::from(h[0]) << 16 | usize::from(h[1]) << 8 | usize::from(h[2]);
        let (kind, flags) = (h[3], h[4]);
        let stream = u32::from_be_bytes([h[5], h[6], h[7], h[8]]) & 0x7fff_ffff;
        if len > MAX_FRAME {
            return Err(format!("a frame of {len} bytes"));
        }
        let Some(payload) = r.buf.get(at + FRAME_HEADER..at + FRAME_HEADER + len) else { break };
        at += FRAME_HEADER + len;
        if let Some((block_stream, end_stream, mut block)) = r.block.take() {
            if kind != CONTINUATION || stream != block_stream {
                return Err("a header block without its CONTINUATION".into());
            }
            block.extend_from_slice(payload);
            if block.len() > MAX_BLOCK {
                return Err("a header block over 1 MiB".into());
            }
            if flags & END_HEADERS == 0 {
                r.block = Some((block_stream, end_stream, block));
            } else {
                out.push(headers(&mut r.decoder, stream, end_stream, &block)?);
            }
            continue;
        }
        match kind {
            DATA => {
                let data = unpad(payload, flags)?;
                out.push(Frame::Data {
                    stream,
                    end_stream: flags & END_STREAM != 0,
                    data: data.to_vec(),
                });
            }
            HEADERS | PUSH_PROMISE => {
                let mut fragment = unpad(payload, flags)?;
                let skip = match kind {
                    HEADERS if flags & PRIORITY != 0 => 5,
                    PUSH_PROMISE => 4,
                    _ => 0,
                };
                fragment = fragment.get(skip..).ok_or("a header frame too short")?;
                // A pushed request's header block only keeps the decoder in step.
                let stream = if kind == PUSH_PROMISE { 0 } else { stream };
                let end_stream = kind == HEADERS && flags & END_STREAM != 0;
                if flags & END_HEADERS == 0 {
                    r.block = Some((stream, end_stream, fragment.to_vec()));
                } else {
                    out.push(headers(&mut r.decoder, stream, end_stream, fragment)?);
                }
            }
            RST_STREAM => {
                let code =
                    payload.get(..4).map_or(0, |c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]));
                out.push(Frame::Reset { stream, code });
            }
            CONTINUATION => return Err("a CONTINUATION without a header block".into()),
            _ => {}
        }
    }
    r.buf.drain(..at);
    Ok(())
}

fn unpad(payload: &[u8], flags: u8) -> Result<&[u8], String> {
    if flags & PADDED == 0 {
        return Ok(payload);
    }
    let pad = usize::from(*payload.first().ok_or("a padded frame without its pad length")?);
    payload
        .get(1..payload.len().saturating_sub(pad))
        .filter(|_| pad < payload.len())
        .ok_or_else(|| "padding longer than its frame".into())
}

fn headers(
    decoder: &mut loona_hpack::Decoder<'static>,
    stream: u32,
    end_stream: bool,
    block: &[u8],
) -> Result<Frame, String> {
    let mut fields = Vec::new();
    decoder
        .decode_with_cb(block, |n, v| fields.push((n.into_owned(), v.into_owned())))
        .map_err(|e| format!("HPACK: {e:?}"))?;
    Ok(Frame::Headers { stream, end_stream, fields })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
        let len = payload.len();
        let mut f = vec![(len >> 16) as u8, (len >> 8) as u8, len as u8, kind, flags];
        f.extend_from_slice(&stream.to_be_bytes());
        f.extend_from_slice(payload);
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
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
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
