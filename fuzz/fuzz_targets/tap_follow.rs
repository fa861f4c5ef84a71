//! Fuzzes the proxy's tap and logger on what a misbehaving peer may send: any bytes, cut into
//! chunks either way, are followed as a tapped connection's HTTP/2 traffic (frames, HPACK blocks,
//! gRPC messages) and every call put together is decoded, checked and printed, as text and as
//! JSON. Property: calls or a connection not followed, never a panic.
#![no_main]

use std::sync::{Arc, LazyLock};

use csi_view_core::schema::Schema;
use csi_view_proxy::{Format, replay};
use libfuzzer_sys::fuzz_target;

static SCHEMA: LazyLock<Arc<Schema>> =
    LazyLock::new(|| Arc::new(Schema::builtin().expect("built-in schema")));

fuzz_target!(|data: &[u8]| {
    for format in [Format::Text, Format::Json] {
        let _ = replay(SCHEMA.clone(), data, format, Box::new(std::io::sink()));
    }
});
