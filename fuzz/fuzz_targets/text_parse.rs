//! Fuzzes the text-format parser/encoder against every CSI request type, and checks that what
//! it encodes prints and encodes back to the same bytes.
#![no_main]

use std::sync::LazyLock;

use csi_view_core::schema::Schema;
use csi_view_core::text::{TextOptions, TextPrinter};
use csi_view_core::textparse::encode_text;
use libfuzzer_sys::fuzz_target;
use prost_reflect::MessageDescriptor;

static SCHEMA: LazyLock<(Schema, Vec<MessageDescriptor>)> = LazyLock::new(|| {
    let s = Schema::builtin().expect("the built-in schema decodes");
    let c = s.candidates();
    (s, c)
});

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else { return };
    let Ok(text) = std::str::from_utf8(rest) else { return };
    let (schema, types) = &*SCHEMA;
    let desc = &types[usize::from(first) % types.len()];
    if let Ok(bytes) = encode_text(desc, text, None) {
        let opts = TextOptions { annotate: false, explain: false, show_secrets: true };
        let mut printed = Vec::new();
        if TextPrinter::new(schema, &mut printed, opts, None).print(desc, &bytes, 0).is_ok() {
            let printed = String::from_utf8(printed).expect("printer writes UTF-8");
            let again = encode_text(desc, &printed, None).expect("printed text encodes");
            assert_eq!(again, bytes, "print then encode changed the bytes");
        }
    }
});
