//! Shared by the spec crate's integration tests: locating the corpus and external tools.

#![allow(dead_code, reason = "each test binary uses a different subset")]

use std::path::PathBuf;

/// The corpus, or `None` after a loud skip (a failure when CI requires it).
pub fn corpus() -> Option<PathBuf> {
    csikit_spec::corpus_or_skip()
}

/// Every release folder of the corpus, oldest first.
pub fn releases(corpus: &std::path::Path) -> Vec<(String, PathBuf)> {
    let mut out: Vec<(String, PathBuf)> = std::fs::read_dir(corpus.join("csi-spec"))
        .expect("corpus csi-spec folder")
        .filter_map(|e| e.ok())
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
        .collect();
    out.sort_by_key(|(tag, _)| version_key(tag));
    out
}

fn version_key(tag: &str) -> Vec<u32> {
    tag.trim_start_matches('v').split('.').filter_map(|p| p.parse().ok()).collect()
}

/// The csi-addons spec folders.
pub const ADDONS: [&str; 4] = ["identity", "reclaimspace", "replication", "volumegroup"];

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
/// `/usr/include` (Debian's well-known types), decoded. Each call writes its own temporary file,
/// so tests running side by side do not share one.
pub fn protoc_descriptor_set(
    protoc: &std::path::Path,
    include: &[&std::path::Path],
    file: &str,
) -> prost_types::FileDescriptorSet {
    use prost::Message as _;
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
    let bytes = std::fs::read(out.path()).expect("read protoc's descriptor set");
    prost_types::FileDescriptorSet::decode(bytes.as_slice())
        .expect("decode protoc's descriptor set")
}
