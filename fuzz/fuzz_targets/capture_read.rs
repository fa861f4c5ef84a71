//! Fuzzes the capture reader and what `decode --capture` does with each message: any bytes
//! (half of the inputs behind a valid header line, to reach the call lines) must give a capture
//! or an error, never a panic; every message of a capture that reads is printed with the type
//! its method names.
#![no_main]

use std::sync::LazyLock;

use csi_view_core::schema::Schema;
use csi_view_core::text::{TextOptions, TextPrinter};
use libfuzzer_sys::fuzz_target;

static SCHEMA: LazyLock<Schema> = LazyLock::new(|| Schema::builtin().expect("built-in schema"));

const HEADER: &[u8] = b"{\"csi_view_capture\":1,\"secrets\":\"blanked\",\"upstream\":\"unix:///p.sock\"}\n";

fuzz_target!(|data: &[u8]| {
    let input: Vec<u8> = match data.split_first() {
        Some((flag, rest)) if flag & 1 == 1 => [HEADER, rest].concat(),
        _ => data.to_vec(),
    };
    let Ok(capture) = csi_view_core::capture::parse(input.as_slice(), "fuzz") else { return };
    for call in &capture.calls {
        let Some(method) = SCHEMA.find_method(&call.method) else { continue };
        let sides = [
            (method.input(), call.request_bytes()),
            (method.output(), call.response_bytes()),
        ];
        for (desc, messages) in sides {
            let Ok(messages) = messages else { continue };
            for m in messages {
                let options = TextOptions { annotate: true, explain: false, show_secrets: false };
                let mut out = Vec::new();
                let _ = TextPrinter::new(&SCHEMA, &mut out, options, None).print(&desc, &m, 0);
            }
        }
    }
});
