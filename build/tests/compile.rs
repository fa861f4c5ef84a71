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
    let out = tempfile::tempdir().unwrap();
    let file = builder(out.path()).compile(spec()).unwrap();
    assert_eq!(file, out.path().join("myaddon.rs"));
    let text = std::fs::read_to_string(&file).unwrap();
    // csi.v1 types come from csikit, not generated again.
    assert!(text.contains("::csikit::v1::VolumeCapability"), "extern path to csikit::v1");
    assert!(!text.contains("pub struct VolumeCapability"), "csi.v1 generated again");
    // prost, tonic and the runtime only through ::csikit.
    for line in text.lines().map(str::trim) {
        for bare in ["::prost::", "::prost_types::", "tonic_prost::", "crate::"] {
            let ok = !line.contains(bare) || line.contains(&format!("::csikit::{}", bare.trim_start_matches(':')));
            assert!(ok, "'{bare}' outside ::csikit in: {line}");
        }
    }
    assert!(!text.contains("#[cfg(feature"), "the user's crate has no csikit features to test");
    assert!(text.contains("pub mod fence_controller_client"));
    assert!(text.contains("pub mod fence_controller_server"));
    assert!(text.contains("pub mod errors"));
    // Nothing else is left in the directory (the temporary file was renamed).
    let names: Vec<_> = std::fs::read_dir(out.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, ["myaddon.rs"]);
}

#[test]
fn options_choose_the_parts() {
    let out = tempfile::tempdir().unwrap();
    let file = builder(out.path()).client(false).server(false).errors(false).compile(spec()).unwrap();
    let text = std::fs::read_to_string(file).unwrap();
    assert!(!text.contains("_client"), "clients left out");
    assert!(!text.contains("_server") && !text.contains("pub mod server"), "servers left out");
    assert!(!text.contains("pub mod errors"), "errors left out");
    assert!(text.contains("pub mod facts") && text.contains("csi_validate"));

    let err = builder(out.path()).validation(false).compile(spec()).unwrap_err();
    assert!(err.to_string().contains("server needs validation"), "{err}");
}

/// Copies the acceptance spec into `dir` with `from` replaced by `to` in the README, and the
/// proto rebuilt from it.
fn broken_copy(dir: &Path, from: &str, to: &str) -> (PathBuf, String) {
    let readme = std::fs::read_to_string(spec().join("README.md")).unwrap();
    assert!(readme.contains(from));
    let readme = readme.replacen(from, to, 1);
    let spec = dir.join("myaddon");
    std::fs::create_dir_all(&spec).unwrap();
    std::fs::write(spec.join("README.md"), &readme).unwrap();
    (spec, readme)
}

#[test]
fn a_broken_spec_is_an_error_with_its_location_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let (spec, readme) = broken_copy(tmp.path(), "string volume_id = 1;", "strng volume_id = 1;");
    let line = readme.lines().position(|l| l.contains("strng volume_id")).unwrap() + 1;
    let col = readme.lines().nth(line - 1).unwrap().find("strng").unwrap() + 1;
    let out = tmp.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("myaddon.rs"), "// the previous output\n").unwrap();
    let err = builder(&out).compile(&spec).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, csikit_build::Error::Spec { .. }), "{text}");
    assert!(text.contains(&format!("README.md:{line}:{col}")), "location README.md:{line}:{col} in: {text}");
    assert_eq!(std::fs::read_to_string(out.join("myaddon.rs")).unwrap(), "// the previous output\n");
}

#[test]
fn a_markdown_file_alone_is_a_spec() {
    let tmp = tempfile::tempdir().unwrap();
    let md = tmp.path().join("myaddon.md");
    std::fs::copy(spec().join("README.md"), &md).unwrap();
    let file = builder(tmp.path()).compile(&md).unwrap();
    assert!(std::fs::read_to_string(file).unwrap().contains("pub struct FenceVolumeRequest"));
}

#[test]
fn missing_inputs_are_errors_not_panics() {
    let tmp = tempfile::tempdir().unwrap();
    let err = builder(tmp.path()).compile(tmp.path().join("nowhere")).unwrap_err();
    assert!(err.to_string().contains("nowhere"), "{err}");
    let err = builder(tmp.path()).compile(tmp.path()).unwrap_err();
    assert!(err.to_string().contains("no spec.md or README.md"), "{err}");
    let err = csikit_build::configure()
        .emit_cargo_lines(false)
        .import(csikit_spec_import(), tmp.path().join("absent.proto"))
        .out_dir(tmp.path())
        .compile(spec())
        .unwrap_err();
    assert!(err.to_string().contains("absent.proto"), "{err}");
}

fn csikit_spec_import() -> &'static str {
    "github.com/container-storage-interface/spec/lib/go/csi/csi.proto"
}
