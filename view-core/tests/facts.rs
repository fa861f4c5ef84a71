//! One reading: the same CSI proto through every path a tool reads facts from gives the same
//! facts, field by field over every message and RPC. The paths: the spec model from the release
//! folder (the reference), the model from the proto alone, the viewer's `--proto`,
//! `--descriptor-set` (protoc's, with source info; without it presence is unknown and the
//! comment-stated facts are absent), and csikit's built-in tables.

use std::path::{Path, PathBuf};
use std::process::Command;

use csi_view_core::schema::{self, Schema};
use csikit::facts::{FieldFacts, PackageFacts, Presence, SizeLimit};
use csikit_spec::LoadOptions;

/// The release the built-in tables were generated from, in the corpus.
fn release_dir() -> Option<PathBuf> {
    let corpus = csikit_spec::corpus_or_skip()?;
    Some(corpus.join("csi-spec").join(csikit::SPEC_RELEASE))
}

fn protoc_available() -> bool {
    let ok = Command::new("protoc").arg("--version").output().is_ok_and(|o| o.status.success());
    if !ok {
        csikit_spec::skip_missing(
            "protoc is not installed (apt-get install protobuf-compiler libprotobuf-dev)",
        );
    }
    ok
}

/// `protoc --include_imports [--include_source_info] --descriptor_set_out=OUT` on `csi.proto`.
fn protoc_set(dir: &Path, out: &Path, source_info: bool) {
    let mut cmd = Command::new("protoc");
    cmd.arg(format!("--descriptor_set_out={}", out.display())).arg("--include_imports");
    if source_info {
        cmd.arg("--include_source_info");
    }
    let output = cmd
        .arg(format!("-I{}", dir.display()))
        .arg("-I/usr/include")
        .arg("csi.proto")
        .output()
        .expect("run protoc");
    assert!(output.status.success(), "protoc: {}", String::from_utf8_lossy(&output.stderr));
}

fn model_facts(path: &Path) -> PackageFacts {
    let loaded = csikit_spec::load_source(path, &LoadOptions::default());
    let errors: Vec<_> = loaded.diagnostics.0.iter().filter(|d| d.is_error()).collect();
    assert!(errors.is_empty(), "'{}': {errors:?}", path.display());
    loaded.model.expect("a model").facts("test")
}

/// Every message of `reference` has the same facts in `schema`, and `schema` states no other
/// message of the package.
fn assert_schema_states(what: &str, schema: &Schema, reference: &PackageFacts) {
    for m in reference.messages.iter() {
        let desc = schema.find_message(&m.full_name).expect("the message is in the pool");
        let got =
            schema.message_facts(&desc).unwrap_or_else(|| panic!("{what}: '{}'", m.full_name));
        assert_eq!(got, m, "{what}: '{}'", m.full_name);
        for f in m.fields.iter() {
            let field = desc.get_field(f.number).expect("the field is in the pool");
            assert_eq!(schema.field_facts(&field), f, "{what}: field lookup");
        }
    }
    let stated = schema.facts_tables().flat_map(|p| p.messages.iter()).count();
    assert_eq!(stated, reference.messages.len(), "{what}: messages with facts");
}

/// What a descriptor set without source info still states: the facts that come from the
/// descriptors themselves, not from comments.
fn without_comments(f: &FieldFacts) -> FieldFacts {
    FieldFacts {
        presence: Presence::Unknown,
        size_limit: SizeLimit::None,
        non_negative: false,
        no_control_chars: false,
        plugin_generated: false,
        ..f.clone()
    }
}

#[test]
fn every_path_reads_the_same_facts_from_one_release() {
    let Some(release) = release_dir() else { return };
    if !protoc_available() {
        return;
    }
    let reference = model_facts(&release);
    assert!(reference.messages.len() > 50, "every CSI message: {}", reference.messages.len());

    // The proto alone: same facts as the folder (error tables and prose are not facts).
    let tmp = tempfile::tempdir().expect("test setup");
    let proto_only = tmp.path().join("proto-only");
    std::fs::create_dir_all(&proto_only).expect("test setup");
    std::fs::copy(release.join("csi.proto"), proto_only.join("csi.proto")).expect("test setup");
    let alone = model_facts(&proto_only);
    assert_eq!(alone.messages, reference.messages, "the model from the proto alone");
    assert_eq!(alone.methods, reference.methods, "the RPCs (keys included) from the proto alone");

    // csikit's built-in tables, generated from the same release.
    let builtin = Schema::builtin().expect("the built-in schema");
    let v1 = builtin.facts_tables().find(|p| p.package == "csi.v1").expect("csi.v1 built in");
    assert_eq!(v1.messages, reference.messages, "csikit's built-in tables");
    assert_eq!(v1.methods, reference.methods, "csikit's built-in RPC facts");
    let desc = builtin.find_message("csi.v1.CreateVolumeRequest").expect("built in");
    let name = desc.get_field_by_name("name").expect("a name field");
    assert!(!builtin.field_comment(&name).is_empty(), "built-in comments come from the model");

    // csi-view --proto.
    let mut schema = Schema::default();
    schema::load_proto(&mut schema, &proto_only.join("csi.proto"), &[]).expect("--proto");
    assert_schema_states("--proto", &schema, &reference);
    let desc = schema.find_message("csi.v1.CreateVolumeRequest").expect("in the pool");
    let field = desc.get_field_by_name("name").expect("a name field");
    assert_eq!(
        schema.field_comment(&field),
        builtin.field_comment(&name),
        "the same comment from the proto and from the built-in descriptors"
    );

    // csi-view --descriptor-set, protoc's with source info.
    let with_info = tmp.path().join("with-info.pb");
    protoc_set(&release, &with_info, true);
    let mut schema = Schema::default();
    schema::load_descriptor_set(&mut schema, &with_info).expect("--descriptor-set");
    assert_schema_states("--descriptor-set with source info", &schema, &reference);

    // Without source info nothing comment-stated is known: presence is unknown.
    let bare = tmp.path().join("bare.pb");
    protoc_set(&release, &bare, false);
    let mut schema = Schema::default();
    schema::load_descriptor_set(&mut schema, &bare).expect("--descriptor-set without source info");
    for m in reference.messages.iter() {
        let desc = schema.find_message(&m.full_name).expect("the message is in the pool");
        let got = schema.message_facts(&desc).expect("facts without source info");
        assert_eq!((&got.full_name, got.alpha), (&m.full_name, m.alpha));
        let expected: Vec<FieldFacts> = m.fields.iter().map(without_comments).collect();
        assert_eq!(&*got.fields, expected.as_slice(), "no source info: '{}'", m.full_name);
        assert!(got.oneofs.iter().all(|o| !o.required), "a oneof's requirement is a comment");
    }
}

/// A comment that says both REQUIRED and OPTIONAL (OPTIONAL first) is read once, by the model
/// (REQUIRED, with a warning), and the viewer says what the model says.
#[test]
fn a_field_that_says_both_is_required_everywhere() {
    let tmp = tempfile::tempdir().expect("test setup");
    let proto = tmp.path().join("both.proto");
    std::fs::write(
        &proto,
        "syntax = \"proto3\";\npackage both.v1;\n\nmessage Request {\n  \
         // This field is OPTIONAL in old releases.\n  // This field is REQUIRED.\n  \
         string volume_id = 1;\n}\n",
    )
    .expect("test setup");
    let loaded = csikit_spec::load_source(&proto, &LoadOptions::default());
    assert!(
        loaded.diagnostics.0.iter().any(|d| d.message.contains("both REQUIRED and OPTIONAL")),
        "the model warns: {:?}",
        loaded.diagnostics.0
    );
    let model = loaded.model.expect("a model");
    let field = &model.message("both.v1.Request").expect("the message").fields[0];
    assert_eq!(field.presence, Presence::Required);

    let mut schema = Schema::default();
    schema::load_proto(&mut schema, &proto, &[]).expect("--proto");
    let desc = schema.find_message("both.v1.Request").expect("the message");
    let field = desc.get_field_by_name("volume_id").expect("the field");
    assert_eq!(schema.field_facts(&field).presence, Presence::Required, "the viewer agrees");
}

/// The reflection checks (what `--spec-dir`, `--proto` and `--descriptor-set` use) and the
/// generated validators (the built-in schema) report the same broken rules for every message
/// of the release left empty: one reading of REQUIRED, with singular bools and numbers left
/// unchecked by both (proto3 cannot tell `false` from unset: `readonly = false` is a value).
#[test]
fn reflection_and_the_generated_validators_agree_on_every_empty_message() {
    let schema = Schema::builtin().expect("built-in schema");
    let mut compared = 0;
    for desc in schema.candidates() {
        let msg = prost_reflect::DynamicMessage::new(desc.clone());
        let bytes = prost::Message::encode_to_vec(&msg);
        let generated = match csikit::validate_encoded(desc.full_name(), &bytes) {
            Ok(()) => Vec::new(),
            Err(csikit::ValidateEncodedError::Invalid(vs)) => vs.into_iter().collect(),
            Err(_) => continue,
        };
        let key = |v: &csi_view_core::validate::Violation| format!("{} {:?}", v.path, v.rule);
        let mut want: Vec<_> = generated.iter().map(key).collect();
        let mut got: Vec<_> =
            csi_view_core::validate::validate_reflect(&schema, &msg).iter().map(key).collect();
        want.sort();
        got.sort();
        assert_eq!(got, want, "'{}'", desc.full_name());
        compared += 1;
    }
    assert!(compared > 80, "{compared} messages compared");
}
