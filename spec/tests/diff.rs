//! The diff engine: every kind of change made by hand to a real Model is reported exactly once,
//! with the element, path, severity and values the JSON contract promises; a Model against
//! itself has no finding; and facts known from the releases' own history hold (v1.11.0 →
//! v1.12.0 adds GetSnapshot and takes ControllerModifyVolume out of alpha; v0.3.0 → v1.0.0 is
//! the `csi.v0` → `csi.v1` package rename, reported once).

mod common;

use csikit_spec::diff::{Change, Finding, Severity, diff};
use csikit_spec::model::{FieldType, Presence};
use csikit_spec::{LoadOptions, Model};
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

#[test]
fn a_model_against_itself_has_no_finding() {
    let Some(corpus) = common::corpus() else { return };
    for (tag, dir) in common::releases(&corpus) {
        let m = load(&dir);
        let r = diff(&m, &m, &tag, &tag);
        assert!(r.findings.is_empty(), "{tag}: {:#?}", r.findings);
    }
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
    assert_eq!((rpc.change, rpc.severity), (Change::Removed, Severity::WireBreaking));
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

    let r = diff(&load(&spec.join("v0.3.0")), &load(&spec.join("v1.0.0")), "v0.3.0", "v1.0.0");
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
