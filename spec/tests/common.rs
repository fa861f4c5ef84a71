//! Shared by the spec crate's integration tests: locating the corpus and external tools.

#![allow(dead_code, reason = "each test binary uses a different subset")]

use std::path::PathBuf;

/// The corpus, or `None` after a loud skip (a failure when CI requires it).
pub fn corpus() -> Option<PathBuf> {
    csikit_spec::corpus_or_skip()
}

/// Every full release folder of the corpus (spec.md beside csi.proto), oldest first, as
/// `csikit_spec::corpus` lists it.
pub fn releases(corpus: &std::path::Path) -> Vec<(String, PathBuf)> {
    csikit_spec::corpus::Corpus::read(corpus)
        .expect("corpus csi-spec folder")
        .releases
        .into_iter()
        .filter(|r| r.form == csikit_spec::corpus::Form::Full)
        .map(|r| (r.name, r.dir))
        .collect()
}

/// The csi-addons packages of the corpus (main versions), as `csikit_spec::corpus` lists them.
pub fn addons(corpus: &std::path::Path) -> Vec<csikit_spec::corpus::Addon> {
    let addons = csikit_spec::corpus::Corpus::read(corpus).expect("corpus csi-spec folder").addons;
    assert!(!addons.is_empty(), "no csi-addons package in '{}'", corpus.display());
    addons
}

/// `protoc`, or `None` after a loud skip (a failure when CI requires it).
pub fn protoc() -> Option<PathBuf> {
    let ok = std::process::Command::new("protoc")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        csikit_spec::skip_missing(
            "protoc is not installed (apt-get install protobuf-compiler libprotobuf-dev)",
        );
    }
    ok.then(|| PathBuf::from("protoc"))
}

/// `protoc --include_imports --descriptor_set_out` on `file`, found through `include` and
/// `/usr/include` (Debian's well-known types), decoded.
pub fn protoc_descriptor_set(
    protoc: &std::path::Path,
    include: &[&std::path::Path],
    file: &str,
) -> prost_types::FileDescriptorSet {
    use prost::Message as _;
    let bytes = protoc_descriptor_bytes(protoc, include, file);
    prost_types::FileDescriptorSet::decode(bytes.as_slice())
        .expect("decode protoc's descriptor set")
}

/// The encoded descriptor set of [`protoc_descriptor_set`], extensions in options kept (which
/// `prost_types` drops when decoding). Each call writes its own temporary file, so tests running
/// side by side do not share one.
pub fn protoc_descriptor_bytes(
    protoc: &std::path::Path,
    include: &[&std::path::Path],
    file: &str,
) -> Vec<u8> {
    let out = tempfile::NamedTempFile::new().expect("a temporary file for protoc's output");
    let mut cmd = std::process::Command::new(protoc);
    cmd.arg(format!("--descriptor_set_out={}", out.path().display())).arg("--include_imports");
    for dir in include {
        cmd.arg(format!("-I{}", dir.display()));
    }
    cmd.arg("-I/usr/include").arg(file);
    let output = cmd.output().expect("run protoc");
    assert!(
        output.status.success(),
        "protoc failed on '{file}': {}",
        String::from_utf8_lossy(&output.stderr)
    );
    std::fs::read(out.path()).expect("read protoc's descriptor set")
}
