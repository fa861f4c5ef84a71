//! The diff engine: every kind of change made by hand to a real Model is reported exactly once,
//! with the element, path, severity and values the JSON contract promises; over every
//! consecutive pair of releases the structural findings are exactly those an oracle computes
//! from `protoc`'s descriptor sets (`descriptor_diff`); a release against itself has no finding;
//! B → A reports the inverse of A → B; and facts known from the releases' own history hold
//! (v1.11.0 → v1.12.0 adds GetSnapshot and takes ControllerModifyVolume out of alpha; v1.10.0 →
//! v1.11.0 takes the group snapshot elements out of alpha; v0.3.0 → v1.0.0 is the `csi.v0` →
//! `csi.v1` package rename, reported once, and breaks the wire).

mod common;
mod descriptor_diff;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use csikit_spec::diff::{Change, Finding, Report, Severity, diff};
use csikit_spec::model::{FieldType, Presence};
use csikit_spec::{LoadOptions, Model};
use descriptor_diff::{Expected, STRUCTURAL, Schema};
use serde_json::json;

fn load(dir: &std::path::Path) -> Model {
    csikit_spec::load_dir(dir, &LoadOptions::default())
        .model
        .unwrap_or_else(|| panic!("{} loads", dir.display()))
}

fn find<'a>(fs: &'a [Finding], element: &str, path: &str) -> Vec<&'a Finding> {
    fs.iter().filter(|f| f.element == element && f.path == path).collect()
}

fn one<'a>(fs: &'a [Finding], element: &str, path: &str) -> &'a Finding {
    let found = find(fs, element, path);
    assert_eq!(found.len(), 1, "{element} {path}: {found:#?}\nall: {fs:#?}");
    found[0]
}

/// Every release of the corpus, oldest first by version number (v1.9.0 before v1.10.0), loaded.
fn releases(corpus: &std::path::Path) -> Vec<(String, PathBuf, Model)> {
    let releases: Vec<(String, PathBuf, Model)> = common::releases(corpus)
        .into_iter()
        .map(|(tag, dir)| {
            let model = load(&dir);
            (tag, dir, model)
        })
        .collect();
    let version = |tag: &str| -> Vec<u32> {
        tag.trim_start_matches('v').split('.').map(|p| p.parse().expect("a numeric tag")).collect()
    };
    for w in releases.windows(2) {
        assert!(
            version(&w[0].0) < version(&w[1].0),
            "releases out of order: {} then {}",
            w[0].0,
            w[1].0
        );
    }
    // The corpus holds 16 releases, v0.1.0 ... v1.12.0: 15 consecutive pairs.
    assert_eq!(releases.len(), 16, "{:?}", releases.iter().map(|r| &r.0).collect::<Vec<_>>());
    releases
}

/// How the engine's structural findings differ from the oracle's, if they do.
fn disagreement(report: &Report, want: &BTreeSet<Expected>) -> Option<String> {
    let mut got: Vec<Expected> = report
        .findings
        .iter()
        .filter(|f| STRUCTURAL.contains(&f.element))
        .map(|f| Expected {
            change: f.change.as_str(),
            element: f.element,
            path: f.path.clone(),
            old_path: f.old_path.clone(),
        })
        .collect();
    got.sort();
    let got_set: BTreeSet<Expected> = got.iter().cloned().collect();
    let only_engine: Vec<_> = got_set.difference(want).collect();
    let only_oracle: Vec<_> = want.difference(&got_set).collect();
    let (old, new) = (&report.old, &report.new);
    if got_set.len() != got.len() {
        Some(format!("{old} → {new}: the engine reports a finding twice: {got:#?}"))
    } else if !only_engine.is_empty() || !only_oracle.is_empty() {
        Some(format!(
            "{old} → {new}:\nonly in the engine: {only_engine:#?}\nonly in the oracle: {only_oracle:#?}"
        ))
    } else {
        None
    }
}

#[test]
fn structural_findings_agree_with_protoc() {
    let Some(corpus) = common::corpus() else { return };
    let Some(protoc) = common::protoc() else { return };
    let releases = releases(&corpus);
    let schemas: Vec<Schema> = releases
        .iter()
        .map(|(_, dir, _)| {
            Schema::read(&common::protoc_descriptor_set(&protoc, &[dir], "csi.proto"), "csi.proto")
        })
        .collect();
    let mut failures = Vec::new();
    let mut tally: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for (i, schema) in schemas.iter().enumerate() {
        let same = descriptor_diff::expected(schema, schema);
        assert!(
            same.is_empty(),
            "the oracle finds {} changed against itself: {same:#?}",
            releases[i].0
        );
    }
    for i in 1..releases.len() {
        let ((old_tag, _, old), (new_tag, _, new)) = (&releases[i - 1], &releases[i]);
        let want = descriptor_diff::expected(&schemas[i - 1], &schemas[i]);
        failures.extend(disagreement(&diff(old, new, old_tag, new_tag), &want));
        for e in &want {
            *tally.entry((e.change, e.element)).or_default() += 1;
        }
    }
    assert!(failures.is_empty(), "engine and protoc oracle disagree:\n{}", failures.join("\n"));
    eprintln!("structural findings over the history, by (change, element): {tally:?}");
    // The kinds of change the history holds (two package renames among them: v0.1.0 is
    // `package csi;`, v0.2.0 `csi.v0`, v1.0.0 `csi.v1`, all proto3): were one of these to
    // vanish, this test would no longer be checking it. The kinds the history lacks are made
    // by `edits_the_history_lacks_agree_with_protoc`.
    for kind in [
        ("changed", "package"),
        ("added", "service"),
        ("added", "rpc"),
        ("removed", "rpc"),
        ("added", "message"),
        ("removed", "message"),
        ("added", "field"),
        ("removed", "field"),
        ("renamed", "field"),
        ("changed", "field_type"),
        ("changed", "field_number"),
        ("added", "enum"),
        ("removed", "enum"),
        ("added", "enum_value"),
        ("renamed", "enum_value"),
    ] {
        assert!(tally.contains_key(&kind), "no {kind:?} in the whole history: {tally:?}");
    }
}

/// Edits of v1.12.0's csi.proto making the structural changes no release made: a service
/// removed (renamed, so one is also added), an RPC's request made a stream, an RPC's response
/// type changed, an enum value removed, one renumbered.
const EDITS: [(&str, &str); 5] = [
    ("service GroupController {", "service GroupControllerV2 {"),
    ("  rpc Probe (ProbeRequest)", "  rpc Probe (stream ProbeRequest)"),
    ("    returns (GetPluginInfoResponse) {}", "    returns (ProbeResponse) {}"),
    ("      MODIFY_VOLUME = 14;\n", ""),
    ("      GET_SNAPSHOT = 15 [", "      GET_SNAPSHOT = 150 ["),
];

#[test]
fn edits_the_history_lacks_agree_with_protoc() {
    let Some(corpus) = common::corpus() else { return };
    let Some(protoc) = common::protoc() else { return };
    let original = corpus.join("csi-spec/v1.12.0");
    let mut proto = std::fs::read_to_string(original.join("csi.proto")).expect("read csi.proto");
    for (from, to) in EDITS {
        assert_eq!(proto.matches(from).count(), 1, "'{from}' is not in v1.12.0's csi.proto once");
        proto = proto.replacen(from, to, 1);
    }
    let edited = tempfile::tempdir().expect("a temporary folder");
    std::fs::copy(original.join("spec.md"), edited.path().join("spec.md")).expect("copy spec.md");
    std::fs::write(edited.path().join("csi.proto"), proto).expect("write the edited csi.proto");
    let sides = [original.as_path(), edited.path()].map(|dir| {
        let schema =
            Schema::read(&common::protoc_descriptor_set(&protoc, &[dir], "csi.proto"), "csi.proto");
        (load(dir), schema)
    });
    let [(a, a_schema), (b, b_schema)] = &sides;
    let want = descriptor_diff::expected(a_schema, b_schema);
    for kind in [
        ("removed", "service"),
        ("changed", "rpc"),
        ("removed", "enum_value"),
        ("changed", "field_number"),
    ] {
        assert!(
            want.iter().any(|e| (e.change, e.element) == kind),
            "the edits make no {kind:?}: {want:#?}"
        );
    }
    let failures: Vec<String> = [
        disagreement(&diff(a, b, "v1.12.0", "edited"), &want),
        disagreement(
            &diff(b, a, "edited", "v1.12.0"),
            &descriptor_diff::expected(b_schema, a_schema),
        ),
    ]
    .into_iter()
    .flatten()
    .collect();
    assert!(failures.is_empty(), "engine and protoc oracle disagree:\n{}", failures.join("\n"));
}

#[test]
fn a_release_against_itself_has_no_finding() {
    let Some(corpus) = common::corpus() else { return };
    for (tag, _, m) in releases(&corpus) {
        let r = diff(&m, &m, &tag, &tag);
        assert!(r.findings.is_empty(), "{tag}: {:#?}", r.findings);
    }
}

/// A finding reduced to what its inverse must mirror: change, element, path, old path, and
/// the old and new values as JSON text.
type Key = (&'static str, &'static str, String, Option<String>, String, String);

fn key(f: &Finding) -> Key {
    (
        f.change.as_str(),
        f.element,
        f.path.clone(),
        f.old_path.clone(),
        f.old.to_string(),
        f.new.to_string(),
    )
}

/// What B → A must report for each finding of A → B (`forward`). In every case the old and new
/// values swap. Then, by kind:
///
/// - `added` / `removed` of an element only one release has (service, rpc, message, field,
///   enum, enum_value): the opposite change at the same path, since the path names the element
///   in the one release that has it.
/// - `renamed`: still `renamed`, with `path` and `old_path` swapped.
/// - every other finding is about an element both releases have, named by its path in the new
///   release: `changed` stays `changed`, a property `added` (alpha, secret, an error row of an
///   RPC) becomes `removed` and the reverse, and the path becomes the element's name in A: the
///   rename's old path when A → B renamed it, else the path with B's package replaced by A's.
///
/// Severity and section are left out: severity is asymmetric by design (adding an RPC is
/// info, removing one breaks the wire) and the section is the new spec's anchor first.
fn inverse(forward: &Report, old_package: &str, new_package: &str) -> Vec<Key> {
    const ELEMENTS: [&str; 6] = ["service", "rpc", "message", "field", "enum", "enum_value"];
    let renames: BTreeMap<&str, &str> = forward
        .findings
        .iter()
        .filter(|f| f.change == Change::Renamed)
        .filter_map(|f| Some((f.path.as_str(), f.old_path.as_deref()?)))
        .collect();
    let in_old = |path: &str| -> String {
        if let Some(old) = renames.get(path) {
            return (*old).to_owned();
        }
        match path.strip_prefix(new_package) {
            Some(rest) if rest.is_empty() || rest.starts_with('.') => {
                format!("{old_package}{rest}")
            }
            _ => path.to_owned(),
        }
    };
    let mut out: Vec<Key> = forward
        .findings
        .iter()
        .map(|f| {
            let (old, new) = (f.new.to_string(), f.old.to_string());
            let flipped = match f.change {
                Change::Added => "removed",
                Change::Removed => "added",
                Change::Renamed => "renamed",
                Change::Changed => "changed",
            };
            match f.change {
                Change::Renamed => {
                    let old_path = f.old_path.clone().expect("a rename names its old path");
                    (flipped, f.element, old_path, Some(f.path.clone()), old, new)
                }
                Change::Added | Change::Removed if ELEMENTS.contains(&f.element) => {
                    (flipped, f.element, f.path.clone(), None, old, new)
                }
                _ => (flipped, f.element, in_old(&f.path), f.old_path.clone(), old, new),
            }
        })
        .collect();
    out.sort();
    out
}

#[test]
fn b_to_a_reports_the_inverse_of_a_to_b() {
    let Some(corpus) = common::corpus() else { return };
    let releases = releases(&corpus);
    let mut checked = 0;
    for w in releases.windows(2) {
        let ((a_tag, _, a), (b_tag, _, b)) = (&w[0], &w[1]);
        let forward = diff(a, b, a_tag, b_tag);
        let backward = diff(b, a, b_tag, a_tag);
        let want = inverse(&forward, &a.package, &b.package);
        let mut got: Vec<Key> = backward.findings.iter().map(key).collect();
        got.sort();
        let missing: Vec<_> = want.iter().filter(|k| !got.contains(k)).collect();
        let extra: Vec<_> = got.iter().filter(|k| !want.contains(k)).collect();
        assert!(
            want == got,
            "{b_tag} → {a_tag} is not the inverse of {a_tag} → {b_tag}\nexpected but not reported: {missing:#?}\nreported but not expected: {extra:#?}"
        );
        checked += forward.findings.len();
    }
    assert!(checked > 100, "only {checked} findings over the whole history");
}

#[test]
fn every_kind_of_change_is_reported_once() {
    let Some(corpus) = common::corpus() else { return };
    let old = load(&corpus.join("csi-spec/v1.12.0"));
    let mut new = old.clone();
    let msg = |m: &mut Model, name: &str| {
        m.messages.iter().position(|x| x.full_name == name).unwrap_or_else(|| panic!("{name}"))
    };
    // CreateVolumeRequest: rename `name` (number 1) to `volume_name`; renumber `parameters`;
    // make `capacity_range` REQUIRED; mark `parameters` secret; change `secrets`' type.
    let cv = msg(&mut new, "csi.v1.CreateVolumeRequest");
    for f in &mut new.messages[cv].fields {
        match f.name.as_str() {
            "name" => f.name = "volume_name".into(),
            "parameters" => {
                f.number = 99;
                f.secret = true;
            }
            "capacity_range" => f.presence = Presence::Required,
            "secrets" => f.ty = FieldType::Scalar("bytes".into()),
            _ => {}
        }
    }
    // A field removed, one added.
    let dv = msg(&mut new, "csi.v1.DeleteVolumeRequest");
    new.messages[dv].fields.retain(|f| f.name != "secrets");
    let mut added = new.messages[dv].fields[0].clone();
    added.name = "force".into();
    added.number = 7;
    added.presence = Presence::Optional;
    new.messages[dv].fields.push(added);
    // A message removed (its fields are not listed), and one added.
    let gone = msg(&mut new, "csi.v1.ProbeResponse");
    new.messages.remove(gone);
    let mut extra = new.messages[0].clone();
    extra.full_name = "csi.v1.BrandNewRequest".into();
    new.messages.push(extra);
    // An enum value renamed, one added, one renumbered.
    let e = new
        .enums
        .iter()
        .position(|e| e.full_name == "csi.v1.ControllerServiceCapability.RPC.Type")
        .expect("enum");
    for v in &mut new.enums[e].values {
        match v.name.as_str() {
            "GET_CAPACITY" => v.name = "GET_STORAGE_CAPACITY".into(),
            "CLONE_VOLUME" => v.number = 1000,
            _ => {}
        }
    }
    let mut value = new.enums[e].values[0].clone();
    value.name = "BRAND_NEW".into();
    value.number = 77;
    new.enums[e].values.push(value);
    // An RPC removed; an error row's code changed, one removed.
    let controller = new.services.iter().position(|s| s.name == "Controller").expect("Controller");
    new.services[controller].methods.retain(|m| m.name != "GetSnapshot");
    let create = new.services[controller]
        .methods
        .iter_mut()
        .find(|m| m.name == "CreateVolume")
        .expect("CreateVolume");
    let changed_condition = create.errors[0].condition.clone();
    let old_code = create.errors[0].code.clone();
    create.errors[0].code = "INTERNAL".into();
    let removed_condition = create.errors.remove(1).condition;
    // Alpha added to a field, an obligation dropped.
    let snap = msg(&mut new, "csi.v1.CreateSnapshotRequest");
    new.messages[snap].fields[0].alpha = true;
    let ds = new.services[controller]
        .methods
        .iter_mut()
        .find(|m| m.name == "DeleteSnapshot")
        .expect("DeleteSnapshot");
    ds.obligation = None;
    // A field deprecated (the standard option), a service marked alpha.
    let dv = msg(&mut new, "csi.v1.DeleteVolumeRequest");
    new.messages[dv].fields[0].deprecated = true;
    let deprecated_field = new.messages[dv].fields[0].name.clone();
    new.services[controller].alpha = true;

    let r = diff(&old, &new, "v1.12.0", "edited");
    let f = &r.findings;
    let renamed = one(f, "field", "csi.v1.CreateVolumeRequest.volume_name");
    assert_eq!(renamed.change, Change::Renamed);
    assert_eq!(renamed.old_path.as_deref(), Some("csi.v1.CreateVolumeRequest.name"));
    assert_eq!(renamed.severity, Severity::SourceBreaking);
    assert_eq!(renamed.section.as_deref(), Some("createvolume"));
    let renumbered = one(f, "field_number", "csi.v1.CreateVolumeRequest.parameters");
    assert_eq!((renumbered.old.clone(), renumbered.new.clone()), (json!(4), json!(99)));
    assert_eq!(renumbered.severity, Severity::WireBreaking);
    assert!(
        find(f, "field", "csi.v1.CreateVolumeRequest.parameters").is_empty(),
        "not removed + added"
    );
    assert_eq!(one(f, "secret", "csi.v1.CreateVolumeRequest.parameters").change, Change::Added);
    let presence = one(f, "presence", "csi.v1.CreateVolumeRequest.capacity_range");
    assert_eq!(
        (presence.old.clone(), presence.new.clone()),
        (json!("optional"), json!("required"))
    );
    assert_eq!(presence.severity, Severity::Behaviour);
    let ty = one(f, "field_type", "csi.v1.CreateVolumeRequest.secrets");
    assert_eq!((ty.old.clone(), ty.new.clone()), (json!("map<string, string>"), json!("bytes")));
    assert_eq!(one(f, "field", "csi.v1.DeleteVolumeRequest.secrets").change, Change::Removed);
    assert_eq!(one(f, "field", "csi.v1.DeleteVolumeRequest.force").change, Change::Added);
    assert_eq!(one(f, "message", "csi.v1.ProbeResponse").change, Change::Removed);
    assert!(
        find(f, "field", "csi.v1.ProbeResponse.ready").is_empty(),
        "fields of a removed message"
    );
    assert_eq!(one(f, "message", "csi.v1.BrandNewRequest").change, Change::Added);
    let value = "csi.v1.ControllerServiceCapability.RPC.Type";
    let ev = one(f, "enum_value", &format!("{value}.GET_STORAGE_CAPACITY"));
    assert_eq!(ev.change, Change::Renamed);
    assert_eq!(ev.old_path.as_deref(), Some(&*format!("{value}.GET_CAPACITY")));
    assert_eq!(one(f, "field_number", &format!("{value}.CLONE_VOLUME")).new, json!(1000));
    assert_eq!(one(f, "enum_value", &format!("{value}.BRAND_NEW")).change, Change::Added);
    let rpc = one(f, "rpc", "csi.v1.Controller.GetSnapshot");
    // GetSnapshot is alpha in v1.12.0: its removal has the alpha severity, not a GA one's.
    assert_eq!((rpc.change, rpc.severity), (Change::Removed, Severity::AlphaBreaking));
    let rows = find(f, "error_row", "csi.v1.Controller.CreateVolume");
    assert_eq!(rows.len(), 2, "{rows:#?}");
    let code = rows.iter().find(|r| r.change == Change::Changed).expect("a changed row");
    assert_eq!(code.old["code"], json!(old_code));
    assert_eq!(code.new["code"], json!("INTERNAL"));
    assert_eq!(code.new["condition"], json!(changed_condition));
    let removed = rows.iter().find(|r| r.change == Change::Removed).expect("a removed row");
    assert_eq!(removed.old["condition"], json!(removed_condition));
    let first_field =
        &old.messages[msg(&mut old.clone(), "csi.v1.CreateSnapshotRequest")].fields[0];
    let alpha = one(f, "alpha", &format!("csi.v1.CreateSnapshotRequest.{}", first_field.name));
    assert_eq!(alpha.change, Change::Added);
    assert_eq!(one(f, "obligation", "csi.v1.Controller.DeleteSnapshot").new, json!(null));
    let dep = one(f, "deprecated", &format!("csi.v1.DeleteVolumeRequest.{deprecated_field}"));
    assert_eq!((dep.change, dep.severity), (Change::Added, Severity::Info));
    assert_eq!(one(f, "alpha", "csi.v1.Controller").change, Change::Added);
    // Nothing else: every finding above, and only those.
    assert_eq!(f.len(), 19, "{f:#?}");
    // The JSON contract's shape.
    let j = serde_json::to_value(&r).expect("serialises");
    assert_eq!(j["old"], json!("v1.12.0"));
    let first = &j["findings"][0];
    for key in ["change", "element", "path", "severity", "old", "new", "section"] {
        assert!(first.get(key).is_some(), "{key} missing in {first}");
    }
}

#[test]
fn release_history_facts() {
    let Some(corpus) = common::corpus() else { return };
    let spec = corpus.join("csi-spec");
    let r = diff(&load(&spec.join("v1.11.0")), &load(&spec.join("v1.12.0")), "v1.11.0", "v1.12.0");
    let f = &r.findings;
    assert_eq!(one(f, "rpc", "csi.v1.Controller.GetSnapshot").change, Change::Added);
    let ga = one(f, "alpha", "csi.v1.Controller.ControllerModifyVolume");
    assert_eq!((ga.change, ga.severity), (Change::Removed, Severity::Info));
    assert!(f.iter().all(|x| x.severity != Severity::WireBreaking), "{f:#?}");
    // v1.11.0 takes the GroupController service itself out of alpha, not only its RPCs.
    let r = diff(&load(&spec.join("v1.10.0")), &load(&spec.join("v1.11.0")), "v1.10.0", "v1.11.0");
    assert_eq!(one(&r.findings, "alpha", "csi.v1.GroupController").change, Change::Removed);

    // v1.11.0 took the group snapshot API out of alpha, read from the two csi.proto files: each
    // of these had an `alpha_*` option in v1.10.0 and is there without it in v1.11.0, and no
    // other alpha option changed.
    let r = diff(&load(&spec.join("v1.10.0")), &load(&spec.join("v1.11.0")), "v1.10.0", "v1.11.0");
    let promoted: BTreeSet<(&str, &str)> = [
        "csi.v1.GroupController",
        "csi.v1.GroupController.CreateVolumeGroupSnapshot",
        "csi.v1.GroupController.DeleteVolumeGroupSnapshot",
        "csi.v1.GroupController.GetVolumeGroupSnapshot",
        "csi.v1.PluginCapability.Service.Type.GROUP_CONTROLLER_SERVICE",
        "csi.v1.Snapshot.group_snapshot_id",
        "csi.v1.GroupControllerGetCapabilitiesRequest",
        "csi.v1.GroupControllerGetCapabilitiesResponse",
        "csi.v1.GroupControllerServiceCapability",
        "csi.v1.GroupControllerServiceCapability.RPC.Type.CREATE_DELETE_GET_VOLUME_GROUP_SNAPSHOT",
        "csi.v1.CreateVolumeGroupSnapshotRequest",
        "csi.v1.CreateVolumeGroupSnapshotResponse",
        "csi.v1.VolumeGroupSnapshot",
        "csi.v1.DeleteVolumeGroupSnapshotRequest",
        "csi.v1.DeleteVolumeGroupSnapshotResponse",
        "csi.v1.GetVolumeGroupSnapshotRequest",
        "csi.v1.GetVolumeGroupSnapshotResponse",
    ]
    .into_iter()
    .map(|p| (p, "removed"))
    .collect();
    let alpha: BTreeSet<(&str, &str)> = r
        .findings
        .iter()
        .filter(|x| x.element == "alpha")
        .map(|x| (x.path.as_str(), x.change.as_str()))
        .collect();
    assert_eq!(alpha, promoted, "v1.10.0 → v1.11.0 alpha findings");
    assert_eq!(r.findings.iter().filter(|x| x.element == "alpha").count(), promoted.len());

    let r = diff(&load(&spec.join("v0.3.0")), &load(&spec.join("v1.0.0")), "v0.3.0", "v1.0.0");
    // v1.0.0 broke the wire, and not only by renaming the package.
    let breaking: Vec<&Finding> = r
        .findings
        .iter()
        .filter(|x| x.severity == Severity::WireBreaking && x.element != "package")
        .collect();
    assert!(!breaking.is_empty(), "v0.3.0 → v1.0.0 breaks nothing: {:#?}", r.findings);
    let renames: Vec<&Finding> = r.findings.iter().filter(|x| x.element == "package").collect();
    assert_eq!(renames.len(), 1);
    assert_eq!(
        (renames[0].old.clone(), renames[0].new.clone()),
        (json!("csi.v0"), json!("csi.v1"))
    );
    // Compared across the rename: CreateVolumeRequest exists on both sides, so it is neither
    // added nor removed.
    assert!(find(&r.findings, "message", "csi.v1.CreateVolumeRequest").is_empty());
    assert!(find(&r.findings, "message", "csi.v0.CreateVolumeRequest").is_empty());
    // ... and a field whose type only moved with the package is not a type change.
    assert!(
        find(&r.findings, "field_type", "csi.v1.CreateVolumeRequest.volume_capabilities")
            .is_empty()
    );
}
