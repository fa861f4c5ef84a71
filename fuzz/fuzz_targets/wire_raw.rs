//! Fuzzes the wire parser and the raw layout printer, and the schema-driven text printer and
//! type detection on the same bytes.
#![no_main]

use std::sync::LazyLock;

use csi_view_core::raw::RawPrinter;
use csi_view_core::schema::Schema;
use csi_view_core::text::{TextOptions, TextPrinter};
use libfuzzer_sys::fuzz_target;

static SCHEMA: LazyLock<Schema> = LazyLock::new(|| {
    let s = Schema::builtin().expect("the built-in schema decodes");
    s
});

fuzz_target!(|data: &[u8]| {
    let _ = csi_view_core::wire::check_message(data, 0, 0);
    let _ = RawPrinter::new(std::io::sink(), None, true).print(data, 0, None);
    let schema = &*SCHEMA;
    if let Ok(ranking) = csi_view_core::detect::rank(schema, data) {
        if let Some(c) = ranking.candidates.first() {
            let opts = TextOptions { annotate: true, explain: false, show_secrets: false };
            let _ = TextPrinter::new(schema, std::io::sink(), opts, None).print(&c.desc, data, 0);
            let _ = RawPrinter::new(std::io::sink(), Some(schema), false).print(data, 0, Some(&c.desc));
        }
    }
});
