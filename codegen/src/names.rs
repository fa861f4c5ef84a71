//! Rust names of proto elements, computed the way prost-build computes them.

use heck::{ToSnakeCase, ToUpperCamelCase};

/// Rust keywords prost-build escapes as raw identifiers (or suffixes, for the four that cannot be raw).
const KEYWORDS: &[&str] = &[
    "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "crate",
    "do", "dyn", "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if", "impl",
    "in", "let", "loop", "macro", "match", "mod", "move", "mut", "override", "priv", "pub", "ref",
    "return", "self", "Self", "static", "struct", "super", "trait", "true", "try", "type",
    "typeof", "unsafe", "unsized", "use", "virtual", "where", "while", "yield",
];

fn sanitize(ident: String) -> String {
    match ident.as_str() {
        "crate" | "self" | "super" | "Self" => format!("{ident}_"),
        s if KEYWORDS.contains(&s) => format!("r#{ident}"),
        _ => ident,
    }
}

/// The Rust name of a field or module segment (`snake_case`, keywords escaped).
pub fn snake(name: &str) -> String {
    sanitize(name.to_snake_case())
}

/// The Rust name of a message, enum or oneof type (`UpperCamelCase`, keywords escaped).
pub fn camel(name: &str) -> String {
    sanitize(name.to_upper_camel_case())
}

/// The Rust path of a message or enum of `package`, relative to the package's module.
/// Returns `None` when `full_name` lies outside `package`.
pub fn relative_type_path(package: &str, full_name: &str) -> Option<String> {
    let rest = full_name.strip_prefix(package)?.strip_prefix('.')?;
    let mut segs: Vec<&str> = rest.split('.').collect();
    let last = segs.pop()?;
    let mut out: Vec<String> = segs.iter().map(|s| snake(s)).collect();
    out.push(camel(last));
    Some(out.join("::"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_follow_prost() {
        assert_eq!(
            relative_type_path("csi.v1", "csi.v1.VolumeCapability.AccessMode.Mode").as_deref(),
            Some("volume_capability::access_mode::Mode")
        );
        assert_eq!(relative_type_path("csi.v1", "google.protobuf.Timestamp"), None);
        assert_eq!(snake("type"), "r#type");
        assert_eq!(camel("RPC"), "Rpc");
    }
}
