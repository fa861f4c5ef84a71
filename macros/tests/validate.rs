//! Behaviour of the expansion, run against the runtime that `csikit` ships (`csikit-runtime`).

use std::collections::HashMap;

use csikit_runtime as rt;

use csikit_macros::csi_validate;
use rt::{RuleId, Validate, Violations};

// The expansion names `Validate`, `FieldPath`, `Violations` and `check` under `crate = ...`.
mod runtime {
    pub use super::rt::{FieldPath, Validate, Violations, check};
}

#[csi_validate(crate = crate::runtime)]
#[derive(Default, Clone)]
struct Mode {
    #[csi(required)]
    mode: i32,
}

#[csi_validate(crate = crate::runtime)]
#[derive(Clone)]
enum AccessType {
    #[csi(nested)]
    Mount(Mount),
    Block(()),
}

#[csi_validate(crate = crate::runtime)]
#[derive(Default, Clone)]
struct Mount {
    #[csi(max_bytes = 8)]
    fs_type: String,
    #[csi(max_total_bytes = 10, no_control_chars)]
    mount_flags: Vec<String>,
}

#[csi_validate(crate = crate::runtime)]
#[derive(Default, Clone)]
struct Capability {
    #[csi(required, nested)]
    access_mode: Option<Mode>,
    #[csi(required, oneof)]
    access_type: Option<AccessType>,
}

fn over_budget(_: &Request, path: &rt::FieldPath<'_>, out: &mut Violations) {
    out.push(path, RuleId::Message, "message-level rule ran");
}

#[csi_validate(crate = crate::runtime, check = over_budget)]
#[derive(Default, Clone)]
struct Request {
    #[csi(required, max_bytes = 16, no_control_chars)]
    name: String,
    #[csi(non_negative)]
    required_bytes: i64,
    #[csi(required, nested)]
    volume_capabilities: Vec<Capability>,
    #[csi(secret_keys, max_total_bytes = 32)]
    secrets: HashMap<String, String>,
    #[csi(nested)]
    by_key: HashMap<String, Mode>,
    #[csi(name = "type", required)]
    r#type: String,
}

fn capability() -> Capability {
    Capability {
        access_mode: Some(Mode { mode: 1 }),
        access_type: Some(AccessType::Mount(Mount {
            fs_type: "ext4".into(),
            mount_flags: vec!["ro".into()],
        })),
    }
}

fn valid() -> Request {
    Request {
        name: "vol-1".into(),
        required_bytes: 10,
        volume_capabilities: vec![capability(), capability()],
        secrets: HashMap::from([("user.name".to_owned(), "hunter2".to_owned())]),
        by_key: HashMap::from([("a".to_owned(), Mode { mode: 2 })]),
        r#type: "x".into(),
    }
}

fn paths(v: Violations) -> Vec<(String, RuleId)> {
    v.into_iter().filter(|v| v.rule != RuleId::Message).map(|v| (v.path, v.rule)).collect()
}

fn violations(r: &Request) -> Vec<(String, RuleId)> {
    paths(r.validate().expect_err("violations"))
}

#[test]
fn valid_message_only_runs_the_message_rule() {
    let err = valid().validate().expect_err("the message-level rule always reports");
    assert_eq!(err.len(), 1);
    assert_eq!(err.iter().next().map(|v| v.rule), Some(RuleId::Message));
}

#[test]
fn each_rule_reports_its_path() {
    let mut r = valid();
    r.name = String::new();
    assert_eq!(violations(&r), [("name".to_owned(), RuleId::Required)]);

    let mut r = valid();
    r.name = "x".repeat(17);
    assert_eq!(violations(&r), [("name".to_owned(), RuleId::MaxBytes)]);
    r.name = "x".repeat(16);
    assert_eq!(violations(&r), []);

    let mut r = valid();
    r.name = "a\u{7}b".into();
    assert_eq!(violations(&r), [("name".to_owned(), RuleId::ControlChars)]);
    r.name = "a\tb\nc".into();
    assert_eq!(violations(&r), [], "tab and newline are allowed");

    let mut r = valid();
    r.required_bytes = -1;
    assert_eq!(violations(&r), [("required_bytes".to_owned(), RuleId::NonNegative)]);

    let mut r = valid();
    r.volume_capabilities[1].access_mode = Some(Mode { mode: 0 });
    assert_eq!(
        violations(&r),
        [("volume_capabilities[1].access_mode.mode".to_owned(), RuleId::Required)]
    );

    let mut r = valid();
    r.volume_capabilities[0].access_type = None;
    assert_eq!(
        violations(&r),
        [("volume_capabilities[0].access_type".to_owned(), RuleId::Required)]
    );

    let mut r = valid();
    r.volume_capabilities[0].access_type =
        Some(AccessType::Mount(Mount { fs_type: "x".repeat(9), ..Mount::default() }));
    assert_eq!(
        violations(&r),
        [("volume_capabilities[0].mount.fs_type".to_owned(), RuleId::MaxBytes)]
    );

    let mut r = valid();
    r.volume_capabilities[0].access_type = Some(AccessType::Mount(Mount {
        mount_flags: vec!["abcdef".into(), "ghijk".into()],
        ..Mount::default()
    }));
    assert_eq!(
        violations(&r),
        [("volume_capabilities[0].mount.mount_flags".to_owned(), RuleId::MaxTotalBytes)]
    );

    let mut r = valid();
    r.volume_capabilities[0].access_type = Some(AccessType::Block(()));
    assert_eq!(violations(&r), []);

    let mut r = valid();
    r.volume_capabilities.clear();
    assert_eq!(violations(&r), [("volume_capabilities".to_owned(), RuleId::Required)]);

    let mut r = valid();
    r.by_key.insert("k".into(), Mode { mode: 0 });
    assert_eq!(violations(&r), [("by_key[\"k\"].mode".to_owned(), RuleId::Required)]);

    let mut r = valid();
    r.r#type.clear();
    assert_eq!(violations(&r), [("type".to_owned(), RuleId::Required)]);
}

#[test]
fn secret_values_never_appear() {
    let mut r = valid();
    r.secrets = HashMap::from([("bad key!".to_owned(), "s3cr3t-value-xyz".to_owned())]);
    r.secrets.insert("big".into(), "y".repeat(40));
    let err = r.validate().expect_err("violations");
    let text = format!("{err} {err:?}");
    assert!(!text.contains("s3cr3t-value-xyz") && !text.contains(&"y".repeat(40)), "{text}");
    let got = paths(err);
    assert!(got.contains(&("secrets[\"bad key!\"]".to_owned(), RuleId::SecretKey)), "{got:?}");
    assert!(got.contains(&("secrets".to_owned(), RuleId::MaxTotalBytes)), "{got:?}");
}

#[test]
fn every_violation_is_collected() {
    let mut r = valid();
    r.name.clear();
    r.required_bytes = -5;
    r.volume_capabilities[0].access_mode = None;
    let got = violations(&r);
    assert_eq!(got.len(), 3, "{got:?}");
}

#[test]
fn display_reads_well() {
    let mut r = valid();
    r.name.clear();
    let err = r.validate().expect_err("violations");
    assert_eq!(err.to_string(), "name: is REQUIRED; message-level rule ran");
}
