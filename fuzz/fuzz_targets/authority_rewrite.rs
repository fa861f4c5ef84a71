//! The `:authority` rewriter on any byte stream, fed in chunks the input chooses: it never panics,
//! whenever it rewrote nothing what comes out is exactly what went in, and reading in place
//! (`Rewriter::scan` while nothing is held, as the socket's reader does) gives the same bytes
//! as the buffered path alone.
#![no_main]

use csikit_runtime::server::authority::Rewriter;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&chunk, data)) = data.split_first() else { return };
    // Half the inputs start with the connection preface, so the frame reader gets exercised.
    let mut stream = Vec::with_capacity(data.len() + 24);
    if chunk & 0x80 != 0 {
        stream.extend_from_slice(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
    }
    stream.extend_from_slice(data);
    let chunk = usize::from(chunk & 0x7f) + 1;
    let mut rewriter = Rewriter::default();
    let (mut pending, mut out) = (Vec::new(), Vec::new());
    for piece in stream.chunks(chunk) {
        pending.extend_from_slice(piece);
        rewriter.process(&mut pending, &mut out);
    }
    rewriter.finish(&mut pending, &mut out);
    if rewriter.rewritten() == 0 {
        assert!(out == stream, "nothing was rewritten, yet the bytes changed");
    }

    let mut scanning = Rewriter::default();
    let (mut held, mut output, mut read) = (Vec::new(), Vec::new(), Vec::new());
    for piece in stream.chunks(chunk) {
        // The reader takes what the rewriter wrote before the socket is read again.
        read.append(&mut output);
        if held.is_empty() && scanning.idle() {
            let scanned = scanning.scan(piece, &mut output);
            read.extend_from_slice(&piece[..scanned.unchanged]);
            if scanned.consumed < piece.len() {
                held.extend_from_slice(&piece[scanned.consumed..]);
                scanning.process(&mut held, &mut output);
            }
        } else {
            held.extend_from_slice(piece);
            scanning.process(&mut held, &mut output);
        }
    }
    read.append(&mut output);
    scanning.finish(&mut held, &mut read);
    assert!(read == out, "reading in place gave other bytes than the buffered path");
    assert_eq!(scanning.rewritten(), rewriter.rewritten());
});
