//! Fuzzes input decoding: format detection, hex, base64 and gRPC frame splitting.
#![no_main]

use csi_view_core::input::{InputFormat, parse_input};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for format in [InputFormat::Auto, InputFormat::Hex, InputFormat::Base64, InputFormat::Raw] {
        let _ = parse_input(data.to_vec(), format, false);
        let _ = parse_input(data.to_vec(), format, true);
    }
});
