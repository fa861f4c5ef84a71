//! The generated error catalog against the Model: every RPC's rows, codes as the names imply,
//! the general table, and `classify` for callers.

use csikit::v1::errors::{
    self, Code, CreateSnapshotError, CreateVolumeError, CreateVolumeGroupSnapshotError, Origin,
    Recovery,
};
use csikit_spec::LoadOptions;

#[test]
fn catalog_matches_the_model() {
    let Some(corpus) = csikit_spec::corpus_or_skip() else { return };
    // `csikit::v1` is v1.13.0, a proto-only release: its tables are the ones carried from v1.12.0
    // (the default load carries), and an RPC whose schema changed has none of its own.
    let dir = corpus.join("csi-spec/v1.13.0");
    let model = csikit_spec::load_source(&dir, &LoadOptions::default()).model.expect("model");
    let carried = model.source.carried.as_ref().map(|c| c.from.as_str());
    assert_eq!(carried, Some("v1.12.0"));
    assert_eq!(errors::GENERAL.len(), model.general_errors.len());
    assert!(errors::GENERAL.iter().all(|r| r.carried_from == carried));
    for s in &model.services {
        for m in &s.methods {
            let rows =
                errors::rpc_rows(&m.name).unwrap_or_else(|| panic!("no catalog for {}", m.name));
            assert_eq!(rows.len(), m.errors.len(), "{}", m.name);
            for (row, spec) in rows.iter().zip(&m.errors) {
                assert_eq!(row.carried_from, m.carried_from.as_deref(), "{}", m.name);
                assert_eq!(row.condition, spec.condition, "{}", m.name);
                assert_eq!(row.code_as_written, format!("{} {}", spec.code_number, spec.code));
                let implied = csikit_spec::check::grpc_code_number(
                    &csikit_spec::check::canonical_code(&spec.code),
                );
                assert_eq!(Some(row.code.number()), implied, "{}: {}", m.name, row.condition);
                assert_eq!(row.rpc, Some(m.name.as_str()));
            }
        }
    }
}

#[test]
fn constructors_and_classify() {
    // The spec's 5 rows, the general 6, and csikit's for the codes neither has: INTERNAL,
    // UNAVAILABLE, DEADLINE_EXCEEDED (the spec's own row has RESOURCE_EXHAUSTED, the general
    // table ABORTED).
    assert_eq!(CreateVolumeError::ALL.len(), 5 + errors::GENERAL.len() + 3);
    let e = CreateVolumeError::VolumeAlreadyExistsIncompatible;
    assert_eq!(e.code(), Code::AlreadyExists);
    let status = e.status("volume 'pvc-1' exists with another size");
    assert_eq!(status.code(), tonic::Code::AlreadyExists);
    assert_eq!(status.message(), "volume 'pvc-1' exists with another size");

    // The spec writes `13 RESOURCE_EXHAUSTED`; the catalog uses 8, as the name implies.
    // (CreateSnapshot had such a row too, but its schema changed in v1.13.0: its table is not
    // carried, so the group snapshot's, carried from v1.12.0, shows it.)
    let space = CreateVolumeGroupSnapshotError::NotEnoughSpaceToCreateGroupSnapshot;
    assert_eq!(space.code(), Code::ResourceExhausted);
    assert_eq!(space.info().code_as_written, "13 RESOURCE_EXHAUSTED");
    assert_eq!(space.info().carried_from, Some("v1.12.0"));

    let row = errors::classify("CreateVolume", Code::AlreadyExists).expect("row");
    assert_eq!(row.condition, "Volume already exists but is incompatible");
    assert_eq!(row.recovery_kind, Recovery::FixRequest);
    let row = errors::classify("NodeStageVolume", Code::Aborted).expect("general row");
    assert_eq!(row.rpc, None);
    assert_eq!(row.recovery_kind, Recovery::RetryWithBackoff);
    let row = errors::classify("Probe", Code::Unimplemented).expect("general row");
    assert_eq!(row.recovery_kind, Recovery::CallCapabilities);
    assert!(errors::classify("Probe", Code::DataLoss).is_none());

    // Past the spec's rows, csikit's own, marked as such in the data and in `Display`.
    let internal = CreateVolumeError::InternalError;
    assert_eq!(internal.code(), Code::Internal);
    assert_eq!(internal.info().origin, Origin::Csikit);
    assert_eq!(internal.info().rpc, None);
    assert_eq!(internal.to_string(), "Internal error (Internal; csikit's row, not the spec's)");
    assert_eq!(internal.status("x").code(), tonic::Code::Internal);
    let row = errors::classify("CreateVolume", Code::Unavailable).expect("csikit's row");
    assert_eq!((row.origin, row.recovery_kind), (Origin::Csikit, Recovery::RetryWithBackoff));
    // Where the spec has a row with the code, it is the one classified, and csikit adds none.
    let row = errors::classify("CreateVolume", Code::ResourceExhausted).expect("spec row");
    assert_eq!(row.origin, Origin::Rpc);
    assert!(CreateVolumeError::ALL.iter().all(|e| e.info().condition != "Out of capacity"));
    assert_eq!(CreateSnapshotError::InternalError.info().origin, Origin::Csikit);
}

/// Every RPC's catalog, of every package the crate carries, ends with csikit's rows for exactly
/// the codes its spec rows lack, each from the runtime's table (not a copy).
#[test]
fn csikit_rows_fill_the_codes_the_spec_rows_lack() {
    use csikit::errors::CSIKIT_ROWS;
    let catalogs: Vec<(&str, Vec<&'static csikit::errors::ErrorInfo>)> = vec![
        ("CreateVolume", CreateVolumeError::ALL.iter().map(|e| e.info()).collect()),
        ("CreateSnapshot", CreateSnapshotError::ALL.iter().map(|e| e.info()).collect()),
        ("ListVolumes", errors::ListVolumesError::ALL.iter().map(|e| e.info()).collect()),
        (
            "ControllerPublishVolume",
            errors::ControllerPublishVolumeError::ALL.iter().map(|e| e.info()).collect(),
        ),
        (
            "GetIdentity",
            csikit::addons::identity::errors::GetIdentityError::ALL
                .iter()
                .map(|e| e.info())
                .collect(),
        ),
        (
            "GetReplicationDestinationInfo",
            csikit::addons::replication::errors::GetReplicationDestinationInfoError::ALL
                .iter()
                .map(|e| e.info())
                .collect(),
        ),
    ];
    for (rpc, rows) in catalogs {
        let spec: Vec<_> = rows.iter().filter(|r| r.origin != Origin::Csikit).collect();
        let own: Vec<_> = rows.iter().filter(|r| r.origin == Origin::Csikit).collect();
        assert!(rows.iter().take(spec.len()).all(|r| r.origin != Origin::Csikit), "{rpc}: order");
        let expected: Vec<_> =
            CSIKIT_ROWS.iter().filter(|c| spec.iter().all(|r| r.code != c.code)).collect();
        assert_eq!(own.len(), expected.len(), "{rpc}");
        for (got, want) in own.iter().zip(expected) {
            assert_eq!(**got, want, "{rpc}");
        }
    }
}

#[test]
fn japanese_where_the_translation_has_the_table() {
    let japanese = |s: &str| {
        s.chars().any(|c| {
            ('\u{3040}'..='\u{30ff}').contains(&c) || ('\u{4e00}'..='\u{9fff}').contains(&c)
        })
    };
    // CreateVolume's table is translated (the translation is of v1.7.0; the rows match by code).
    // csikit's own rows are not the spec's, so no translation has them.
    for e in CreateVolumeError::ALL.iter().filter(|e| e.info().origin != Origin::Csikit) {
        let (condition, _, _) = e.info().ja.unwrap_or_else(|| panic!("{e:?} has no Japanese row"));
        assert!(japanese(condition), "{e:?}: {condition}");
    }
    // The general table is translated too.
    assert!(errors::GENERAL.iter().all(|r| r.ja.is_some_and(|(c, _, _)| japanese(c))));
    // The translation keeps NodeStageVolume's table in English: no Japanese is claimed.
    let stage = errors::rpc_rows("NodeStageVolume").expect("rows");
    assert!(!stage.is_empty() && stage.iter().all(|r| r.ja.is_none()));
    // RPCs added after v1.7.0 have no translated table.
    let group = errors::rpc_rows("CreateVolumeGroupSnapshot").expect("rows");
    assert!(!group.is_empty() && group.iter().all(|r| r.ja.is_none()));
}
