//! The encoded `FileDescriptorSet` as a Rust byte-string literal, so the generated crate embeds
//! exactly the bytes the spec crate compiled (custom options and source info intact).

use std::fmt::Write as _;

/// A `pub const FILE_DESCRIPTOR_SET: &[u8]` item holding `bytes`.
pub fn descriptor_const(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 3);
    out.push_str("/// The encoded `google.protobuf.FileDescriptorSet` of this package and its imports, with\n");
    out.push_str("/// source info and custom options (`csi_secret`, `alpha_*`) intact.\n");
    out.push_str("pub const FILE_DESCRIPTOR_SET: &[u8] = b\"\\\n");
    let mut line_start = out.len();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            0x20..=0x7e => out.push(b as char),
            _ => {
                let _ = write!(out, "\\x{b:02x}");
            }
        }
        // Lines of at most 96 columns (an escape is 4) plus the `\` continuation. The
        // continuation also eats the next line's leading whitespace, so only break before a
        // byte that is not whitespace.
        let col = out.len() - line_start;
        if col >= 92 && bytes.get(i + 1).is_some_and(|&n| n != b' ') {
            out.push_str("\\\n");
            line_start = out.len();
        }
    }
    out.push_str("\";\n");
    out
}
