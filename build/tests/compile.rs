//! `compile` outside cargo: what it writes for the acceptance spec, and what it refuses.

use std::path::{Path, PathBuf};

fn spec() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/myaddon/tests/data/myaddon")
}

fn builder(out: &Path) -> csikit_build::Builder {
    csikit_build::configure().out_dir(out).emit_cargo_lines(false)
}

#[test]
fn writes_one_file_per_package_naming_only_csikit() {
    let out = tempfile::tempdir().expect("test setup");
    let file = builder(out.path()).compile(spec()).expect("test setup");
    assert_eq!(file, out.path().join("myaddon.rs"));
    let text = std::fs::read_to_string(&file).expect("test setup");
    // csi.v1 types come from csikit, not generated again.
    assert!(text.contains("::csikit::v1::VolumeCapability"), "extern path to csikit::v1");
    assert!(!text.contains("pub struct VolumeCapability"), "csi.v1 generated again");
    // prost, tonic and the runtime only through ::csikit.
    for line in text.lines().map(str::trim) {
        for bare in ["::prost::", "::prost_types::", "tonic_prost::", "crate::"] {
            let ok = !line.contains(bare)
                || line.contains(&format!("::csikit::{}", bare.trim_start_matches(':')));
            assert!(ok, "'{bare}' outside ::csikit in: {line}");
        }
    }
    assert!(!text.contains("#[cfg(feature"), "the user's crate has no csikit features to test");
    assert!(text.contains("pub mod fence_controller_client"));
    assert!(text.contains("pub mod fence_controller_server"));
    assert!(text.contains("pub mod errors"));
    // Nothing else is left in the directory (the temporary file was renamed).
    let names: Vec<_> = std::fs::read_dir(out.path())
        .expect("test setup")
        .map(|e| e.expect("test setup").file_name())
        .collect();
    assert_eq!(names, ["myaddon.rs"]);
}

#[test]
fn options_choose_the_parts() {
    let out = tempfile::tempdir().expect("test setup");
    let file = builder(out.path())
        .client(false)
        .server(false)
        .errors(false)
        .compile(spec())
        .expect("test setup");
    let text = std::fs::read_to_string(file).expect("test setup");
    assert!(!text.contains("_client"), "clients left out");
    assert!(!text.contains("_server") && !text.contains("pub mod server"), "servers left out");
    assert!(!text.contains("pub mod errors"), "errors left out");
    assert!(text.contains("pub mod facts") && text.contains("csi_validate"));

    let err = builder(out.path()).validation(false).compile(spec()).expect_err("must be refused");
    assert!(err.to_string().contains("server needs validation"), "{err}");
}

/// Copies the acceptance spec into `dir` with `from` replaced by `to` in the README, and the
/// proto rebuilt from it.
fn broken_copy(dir: &Path, from: &str, to: &str) -> (PathBuf, String) {
    let readme = std::fs::read_to_string(spec().join("README.md")).expect("test setup");
    assert!(readme.contains(from));
    let readme = readme.replacen(from, to, 1);
    let spec = dir.join("myaddon");
    std::fs::create_dir_all(&spec).expect("test setup");
    std::fs::write(spec.join("README.md"), &readme).expect("test setup");
    (spec, readme)
}

#[test]
fn a_broken_spec_is_an_error_with_its_location_and_writes_nothing() {
    let tmp = tempfile::tempdir().expect("test setup");
    let (spec, readme) = broken_copy(tmp.path(), "string volume_id = 1;", "strng volume_id = 1;");
    let line = readme.lines().position(|l| l.contains("strng volume_id")).expect("test setup") + 1;
    let col =
        readme.lines().nth(line - 1).expect("test setup").find("strng").expect("test setup") + 1;
    let out = tmp.path().join("out");
    std::fs::create_dir_all(&out).expect("test setup");
    std::fs::write(out.join("myaddon.rs"), "// the previous output\n").expect("test setup");
    let err = builder(&out).compile(&spec).expect_err("must be refused");
    let text = err.to_string();
    assert!(matches!(err, csikit_build::Error::Spec { .. }), "{text}");
    assert!(
        text.contains(&format!("README.md:{line}:{col}")),
        "location README.md:{line}:{col} in: {text}"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("myaddon.rs")).expect("test setup"),
        "// the previous output\n"
    );
}

#[test]
fn a_markdown_file_alone_is_a_spec() {
    let tmp = tempfile::tempdir().expect("test setup");
    let md = tmp.path().join("myaddon.md");
    std::fs::copy(spec().join("README.md"), &md).expect("test setup");
    let file = builder(tmp.path()).compile(&md).expect("test setup");
    assert!(
        std::fs::read_to_string(file)
            .expect("test setup")
            .contains("pub struct FenceVolumeRequest")
    );
}

#[test]
fn missing_inputs_are_errors_not_panics() {
    let tmp = tempfile::tempdir().expect("test setup");
    let err = builder(tmp.path()).compile(tmp.path().join("nowhere")).expect_err("must be refused");
    assert!(err.to_string().contains("nowhere"), "{err}");
    let err = builder(tmp.path()).compile(tmp.path()).expect_err("must be refused");
    assert!(err.to_string().contains("no spec.md, README.md or .proto"), "{err}");
    let err = csikit_build::configure()
        .emit_cargo_lines(false)
        .import(csikit_spec_import(), tmp.path().join("absent.proto"))
        .out_dir(tmp.path())
        .compile(spec())
        .expect_err("must be refused");
    assert!(err.to_string().contains("absent.proto"), "{err}");
}

fn csikit_spec_import() -> &'static str {
    "github.com/container-storage-interface/spec/lib/go/csi/csi.proto"
}
