//! `csi-conformance explore` tested against memdriver, served in process: the clean driver
//! gives no finding over several walks; every `MEMDRIVER_FAULT` whose bug needs a history of
//! calls is found and shrunk to at most ten calls, the planted bugs with a known shortest
//! history shrunk to exactly it; four histories in flight at once give no finding on the clean
//! driver and find a history bug; one rule broken in two RPCs' answers gives two findings, each
//! shrunk to a history ending in its own RPC, and in the answers to two request shapes of one
//! listing RPC two findings, each shrunk keeping its shape; the same seed gives the same walk and the same
//! verdict; and a finding's capture, replayed by `csi-view replay`'s library, answers the same against the
//! faulty build and differs against a fixed one.

mod support;

use std::sync::Arc;
use std::time::Duration;

use csikit_conformance::Config;
use csikit_conformance::explore::{Options, Report, explore_in_process};
use memdriver::fault::Fault;
use memdriver::{Driver, builder};

/// Explores memdriver (with `fault`) in process: `steps` calls of seed `seed`, stopping at the
/// first finding; captures under `captures`.
fn explore(fault: Option<Fault>, seed: u64, steps: u64, captures: &std::path::Path) -> Report {
    explore_with(fault, seed, steps, 1, captures)
}

/// As [`explore`], with `concurrency` histories in flight at once.
fn explore_with(
    fault: Option<Fault>,
    seed: u64,
    steps: u64,
    concurrency: usize,
    captures: &std::path::Path,
) -> Report {
    let config = memdriver::Config { fault, ..memdriver::Config::default() };
    explore_driver(config, seed, steps, concurrency, captures)
}

/// As [`explore_with`], memdriver configured by `config` (its group snapshots, when it serves
/// them); ControllerModifyVolume sends `iops`, a mutable parameter memdriver takes by default.
fn explore_driver(
    config: memdriver::Config,
    seed: u64,
    steps: u64,
    concurrency: usize,
    captures: &std::path::Path,
) -> Report {
    let options = Options { concurrency, ..options(seed, steps, Some(1), captures) };
    explore_options(config, &options)
}

/// The walk of seed `seed`, `steps` calls, stopping after `stop_after` findings; captures under
/// `captures`; ControllerModifyVolume sends `iops`, a mutable parameter memdriver takes by
/// default.
fn options(
    seed: u64,
    steps: u64,
    stop_after: Option<usize>,
    captures: &std::path::Path,
) -> Options {
    Options {
        seed,
        steps: Some(steps),
        time: None,
        concurrency: 1,
        stop_after,
        capture_out: Some(captures.to_path_buf()),
        config: Config {
            timeout: Duration::from_secs(20),
            mutable_parameters: [("iops".to_owned(), "3000".to_owned())].into(),
            ..Config::default()
        },
    }
}

/// Explores memdriver configured by `config`, in process, as `options` say.
fn explore_options(config: memdriver::Config, options: &Options) -> Report {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    rt.block_on(async {
        let server =
            builder(Arc::new(Driver::new(config))).build().await.expect("memdriver builds");
        explore_in_process(server.into_routes(), options).await.expect("the explorer runs")
    })
}

/// The report of the first of seeds 1 to [`SEEDS`] whose walk (`walk(seed)`) `holds`; a
/// failure when none does.
fn first_seed(walk: impl Fn(u64) -> Report, holds: impl Fn(&Report) -> bool) -> Report {
    let mut last = None;
    for seed in 1..=SEEDS {
        let report = walk(seed);
        if holds(&report) {
            eprintln!("the first seed that holds: {seed}");
            return report;
        }
        last = Some(report);
    }
    panic!("none of seeds 1 to {SEEDS}: the last: {}", last.map(|r| r.text()).unwrap_or_default());
}

/// The RPCs of a finding's shrunk history.
fn methods(report: &Report) -> Vec<&'static str> {
    report.findings[0].calls.iter().map(|c| c.method).collect()
}

#[test]
fn memdriver_gives_no_finding() {
    let tmp = tempfile::tempdir().expect("temp dir");
    // With its group snapshots served: every RPC the walk knows (ControllerModifyVolume,
    // GetCapacity and the three group snapshot RPCs besides the 18 of volumes and snapshots).
    let config = || memdriver::Config { group_controller: true, ..memdriver::Config::default() };
    // Seeds 1, 2, 3 ... in turn, 3,000 steps each, each with no finding, until together they
    // reach every RPC the walk knows and every (call, kind) pair below, or `SEEDS` ran: which
    // seed reaches a rare pair moves with every change to the walk, so none is picked by hand.
    const SEEDS: u64 = 12;
    let mut kinds = std::collections::BTreeMap::new();
    let mut rpcs = std::collections::BTreeSet::new();
    let mut missing = Vec::new();
    for seed in 1..=SEEDS {
        let report = explore_driver(config(), seed, 3000, 1, tmp.path());
        for (pair, n) in &report.coverage.kinds {
            *kinds.entry(*pair).or_insert(0) += n;
        }
        assert!(report.findings.is_empty(), "seed {seed}: {}", report.text());
        assert_eq!(report.steps, 3000);
        assert!(report.left_over.is_empty(), "{:?}", report.left_over);
        rpcs.extend(report.coverage.calls.keys().map(|(rpc, _)| *rpc));
        missing = not_reached(&kinds);
        if missing.is_empty() && rpcs.len() == 23 {
            break;
        }
    }
    assert_eq!(rpcs.len(), 23, "{rpcs:?}");
    assert!(missing.is_empty(), "not reached by seeds 1 to {SEEDS}: {missing:?}");
}

/// The (call, kind) pairs of `kinds` not reached: every call that reads, validates, grows or
/// measures one volume, on volumes of every kind and use the walk makes, NodeGetVolumeStats at
/// each path the spec allows; block volumes walked beside mount ones, published (memdriver makes
/// a file at a block target and a folder at a readonly one, mounting nothing: each counted,
/// none judged); and the pairs of readonly flags on one volume a readonly mount must outlive.
fn not_reached(kinds: &std::collections::BTreeMap<(&str, &str), u64>) -> Vec<String> {
    let mut missing = Vec::new();
    for rpc in [
        "ControllerExpandVolume",
        "NodeExpandVolume",
        "NodeGetVolumeStats",
        "ControllerGetVolume",
        "ValidateVolumeCapabilities",
    ] {
        let at: &[&str] = if rpc == "NodeGetVolumeStats" {
            &["at the staging path", "at the target kept after another's unpublish"]
        } else {
            &[]
        };
        for kind in VOLUME_KINDS.iter().chain(at) {
            if !kinds.contains_key(&(rpc, *kind)) {
                missing.push(format!("{rpc} on {kind}"));
            }
        }
    }
    for kind in [
        "block target, a file, not a mount point (not judged)",
        "readonly target, not a mount point (not judged)",
        "readonly beside a read-write target",
        "read-write beside a readonly target",
        "readonly where a read-write one stood",
        "read-write where a readonly one stood",
    ] {
        if !kinds.contains_key(&("NodePublishVolume", kind)) {
            missing.push(format!("NodePublishVolume: {kind}"));
        }
    }
    missing
}

/// The kinds and uses of a volume the coverage table counts each call on one volume by.
const VOLUME_KINDS: [&str; 12] = [
    "plain",
    "clone",
    "restore",
    "made from a clone or restore",
    "expanded",
    "with snapshots",
    "source deleted",
    "staged",
    "staged at the second staging path",
    "published at two targets",
    "one of two targets unpublished",
    "readonly target",
];

#[test]
fn histories_in_flight_at_once_give_no_finding_on_memdriver_and_find_a_history_bug() {
    let tmp = tempfile::tempdir().expect("temp dir");
    for seed in [2, 4, 6] {
        let report = explore_with(None, seed, 1500, 4, tmp.path());
        assert!(report.findings.is_empty(), "seed {seed}: {}", report.text());
        assert_eq!(report.steps, 1500);
        assert!(report.left_over.is_empty(), "{:?}", report.left_over);
    }
    let report = explore_with(Some(Fault::ListSnapshotsFirstOfSource), 5, 4000, 4, tmp.path());
    let Some(f) = report.findings.first() else { panic!("no finding: {}", report.text()) };
    assert_eq!(f.rule, "snapshots-listed", "{}", f.text());
    assert!(f.reproduced, "{}", f.text());
    assert_eq!(
        methods(&report),
        ["CreateVolume", "CreateSnapshot", "CreateSnapshot", "ListSnapshots"],
        "{}",
        f.text()
    );
}

#[test]
fn one_rule_broken_in_two_rpcs_gives_two_findings_each_shrunk_to_its_own_rpc() {
    // A clone of a clone described with its source's source by both ListVolumes and
    // ControllerGetVolume: one rule, two answers that break it (two code paths in a real driver).
    // A walk reaches both breaches at some seeds only (the others the ListVolumes breach
    // only): the seeds in turn, as [`SEEDS`] says, until one breaks it in both RPCs.
    let tmp = tempfile::tempdir().expect("temp dir");
    let config = || memdriver::Config {
        fault: Some(Fault::ReadSourceOfOrigin),
        ..memdriver::Config::default()
    };
    let rpcs_of = |r: &Report| -> Vec<&'static str> {
        let mut rpcs: Vec<&str> = r.findings.iter().map(|f| f.rpc).collect();
        rpcs.sort_unstable();
        rpcs.dedup();
        rpcs
    };
    let report = first_seed(
        |seed| explore_options(config(), &options(seed, 4000, None, tmp.path())),
        |r| rpcs_of(r) == ["ControllerGetVolume", "ListVolumes"],
    );
    let rule = report.findings.first().map(|f| f.rule.clone()).unwrap_or_default();
    let mut rpcs: Vec<&str> = Vec::new();
    for f in &report.findings {
        assert_eq!(f.rule, rule, "one rule only: {}", report.text());
        assert!(f.fails && f.reproduced, "{}", f.text());
        assert_eq!(f.calls.last().map(|c| c.method), Some(f.rpc), "{}", f.text());
        assert!(f.calls.len() <= 10, "{}", f.text());
        let shaped = f.shape.map(|s| format!(" ({s})")).unwrap_or_default();
        assert!(f.text().contains(&format!(" in {}{shaped}: ", f.rpc)), "{}", f.text());
        let capture = f.capture.as_ref().expect("a capture");
        let text = std::fs::read_to_string(capture).expect("the capture reads");
        assert!(text.contains(f.rpc), "{}: {}", capture.display(), f.text());
        rpcs.push(f.rpc);
    }
    // ListVolumes once per request shape it broke the rule in (paged or not).
    rpcs.sort_unstable();
    rpcs.dedup();
    assert_eq!(rpcs, ["ControllerGetVolume", "ListVolumes"], "{}", report.text());
    assert!(report.failed() && report.unshown.is_empty(), "{}", report.text());
    let json = report.to_json();
    let listed: Vec<&str> = json["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| f["rpc"].as_str().expect("rpc"))
        .collect();
    assert_eq!(listed.len(), report.findings.len(), "{json}");
    assert!(json["findings"].as_array().expect("findings").iter().all(|f| f["rule"] == rule));
}

#[test]
fn one_rule_broken_in_two_request_shapes_of_a_listing_gives_two_findings() {
    // ListSnapshots by source lists one snapshot of two, and its unfiltered pages each leave
    // one out: one rule, one RPC, two code paths; each finding is shrunk keeping its shape.
    // The seeds in turn, as [`SEEDS`] says, until one breaks it by source and unfiltered.
    let tmp = tempfile::tempdir().expect("temp dir");
    let config = || memdriver::Config {
        fault: Some(Fault::ListSnapshotsTwoPaths),
        ..memdriver::Config::default()
    };
    let both = |r: &Report| {
        let shapes: Vec<&str> = r
            .findings
            .iter()
            .filter(|f| f.rule == "snapshots-listed")
            .filter_map(|f| f.shape)
            .collect();
        shapes.iter().any(|s| s.starts_with("source_volume_id"))
            && shapes.iter().any(|s| ["max_entries", "starting_token"].contains(s))
    };
    let report =
        first_seed(|seed| explore_options(config(), &options(seed, 4000, None, tmp.path())), both);
    let mut shapes: Vec<&str> = Vec::new();
    for f in report.findings.iter().filter(|f| f.rule == "snapshots-listed") {
        assert_eq!(f.rpc, "ListSnapshots", "{}", f.text());
        assert!(f.fails && f.reproduced, "{}", f.text());
        let shape = f.shape.expect("a listing's shape");
        assert!(f.text().contains(&format!(" in ListSnapshots ({shape}): ")), "{}", f.text());
        let last = f.calls.last().expect("a history");
        let (by_source, paged) =
            (shape.contains("source_volume_id"), shape.contains("max_entries"));
        assert_eq!(last.step.contains("source_volume_id"), by_source, "{}", f.text());
        assert_eq!(last.step.contains("max_entries"), paged, "{}", f.text());
        shapes.push(shape);
    }
    assert!(
        shapes.iter().any(|s| s.starts_with("source_volume_id")),
        "by source: {}",
        report.text()
    );
    // Unfiltered and paged: the pages of a listing, or the pages from a held first page's token.
    let unfiltered = ["max_entries", "starting_token"];
    assert!(shapes.iter().any(|s| unfiltered.contains(s)), "unfiltered, paged: {}", report.text());
    let json = report.to_json();
    let findings = json["findings"].as_array().expect("findings");
    let shaped =
        findings.iter().filter(|f| f["shape"].as_str().is_some_and(|s| shapes.contains(&s)));
    assert_eq!(shaped.count(), shapes.len(), "{json}");
}

/// The faults whose bug only a history shows, each with the RPCs of its shortest history
/// when one is known (the planted bugs of the explorer's own tests).
const HISTORY_FAULTS: &[(Fault, Option<&[&str]>)] = &[
    (Fault::CreateNotIdempotent, Some(&["CreateVolume", "CreateVolume"])),
    (Fault::DeleteNotFound, Some(&["CreateVolume", "DeleteVolume", "DeleteVolume"])),
    (Fault::InternalForUnknown, None),
    (Fault::IgnoreToken, None),
    (Fault::NoTargetPath, None),
    (Fault::UnpublishNotIdempotent, None),
    (Fault::NoAlreadyExists, Some(&["CreateVolume", "CreateVolume"])),
    (Fault::StatsAnyPath, None),
    (Fault::SnapshotNotIdempotent, None),
    (Fault::LeakOnDelete, None),
    (Fault::GetSnapshotOther, None),
    (Fault::PublishAnyNode, Some(&["CreateVolume", "ControllerPublishVolume"])),
    (Fault::MissingSourceEmpty, None),
    (
        Fault::ValidateUnknownVolume,
        Some(&["CreateVolume", "DeleteVolume", "ValidateVolumeCapabilities"]),
    ),
    (Fault::StatsUnknownVolume, Some(&["CreateVolume", "DeleteVolume", "NodeGetVolumeStats"])),
    (Fault::ListSnapshotsUnknownIdAll, None),
    (Fault::UnpublishUnknownOk, Some(&["CreateVolume", "DeleteVolume", "NodeUnpublishVolume"])),
    (
        Fault::RepublishIncompatibleOk,
        Some(&["CreateVolume", "ControllerPublishVolume", "ControllerPublishVolume"]),
    ),
    (Fault::ReuseNameAfterDelete, None),
    (
        Fault::ListSnapshotsFirstOfSource,
        Some(&["CreateVolume", "CreateSnapshot", "CreateSnapshot", "ListSnapshots"]),
    ),
    (Fault::ExpandNotListed, None),
    (Fault::SnapshotDiesWithSource, None),
    // Shortest in four calls, two ways: the delete it blocks, or a listing that still names
    // the node.
    (Fault::UnpublishKeepsNode, None),
    (Fault::UnstageKeepsPath, None),
    // Shortest in six calls, two ways: unstaged after the unpublish, or published at the
    // other target (one writer) after it; the test below takes either.
    (Fault::NodeUnpublishKeepsRecord, None),
    // A longer history: three publish cycles, then the delete the third unpublish blocks, a
    // publication with the other readonly flag it refuses, or a read that still names the node;
    // shortest in eight calls each way.
    (Fault::ThirdUnpublishKeepsNode, None),
    (
        Fault::RestoreSizeOfOrigin,
        Some(&["CreateVolume", "ControllerExpandVolume", "CreateSnapshot", "CreateVolume"]),
    ),
    // Late retries: a request answered OK sent again after other calls changed its object.
    // Shortest in three calls (a clone again), four by a restore (a snapshot first).
    (Fault::CreateRetryNoSource, None),
    (
        Fault::SnapshotRetrySizeNow,
        Some(&["CreateVolume", "CreateSnapshot", "ControllerExpandVolume", "CreateSnapshot"]),
    ),
    // Shortest in four calls (validated, published, validated) or five (published first,
    // then validated while published and after the unpublish).
    (Fault::ValidateUnconfirmedWhenPublished, None),
    // A ListVolumes token held across an expansion.
    (
        Fault::ListTokenStaleSizes,
        Some(&[
            "CreateVolume",
            "CreateVolume",
            "ListVolumes",
            "ControllerExpandVolume",
            "ListVolumes",
        ]),
    ),
    // Out of the lifecycle's order: a DeleteVolume while published, refused, and the volume
    // gone all the same. Shortest in four calls (the use after the refusal: a read, a
    // publication again, an unpublish).
    (Fault::DeleteInUseForgets, None),
    // At a path that is not the volume's: an unstage or unpublish there that undoes the
    // volume's staging or publications elsewhere.
    (Fault::UnstageAnyPath, None),
    (Fault::UnpublishAnyTarget, None),
    // Sizes relative to the source: a clone of a volume grown since it was made, with a limit
    // below its size now.
    (
        Fault::CloneLimitOfCreatedSize,
        Some(&["CreateVolume", "ControllerExpandVolume", "CreateVolume"]),
    ),
    // A group's snapshot deleted alone (memdriver serving its GroupController).
    (
        Fault::MemberDeletedAlone,
        Some(&["CreateVolume", "CreateVolume", "CreateVolumeGroupSnapshot", "DeleteSnapshot"]),
    ),
    // Every read of an object held to what earlier answers said of it: a group's snapshot read
    // alone without its group's id; a snapshot listed at another creation time; a clone of a
    // clone described as made from its source's source.
    (
        Fault::MemberGetNoGroupId,
        Some(&["CreateVolume", "CreateVolume", "CreateVolumeGroupSnapshot", "GetSnapshot"]),
    ),
    (Fault::ListSnapshotsTimeNow, Some(&["CreateVolume", "CreateSnapshot", "ListSnapshots"])),
    (Fault::ReadSourceOfOrigin, None),
    // A ListSnapshots token held across a DeleteSnapshot.
    (Fault::ListSnapshotsTokenStale, None),
    // A snapshot used as a source: its retry after a restore answered not ready.
    (
        Fault::SnapshotRetryUnreadyAfterRestore,
        Some(&["CreateVolume", "CreateSnapshot", "CreateVolume", "CreateSnapshot"]),
    ),
    // Histories a kubelet makes: a volume staged again at another staging path after an
    // unstage; a target published again after its unpublish, with the other readonly flag.
    (
        Fault::UnstageFirstPath,
        Some(&[
            "CreateVolume",
            "ControllerPublishVolume",
            "NodeStageVolume",
            "NodeUnstageVolume",
            "NodeStageVolume",
            "NodeUnstageVolume",
            "NodeStageVolume",
        ]),
    ),
    (
        Fault::TargetKeepsReadonly,
        Some(&[
            "CreateVolume",
            "ControllerPublishVolume",
            "NodeStageVolume",
            "NodePublishVolume",
            "NodeUnpublishVolume",
            "NodePublishVolume",
        ]),
    ),
    // A valid call refused: a clone of a clone (or of a restore) refused with a code no row
    // gives it, though CLONE_VOLUME is advertised. Shortest in three calls (a clone of a
    // clone), four by a restore (a snapshot first).
    (Fault::CloneChainRefused, None),
    // A group deleted with a snapshot_ids list that names a snapshot not of the group, then a
    // read that finds that snapshot gone; shortest in six calls, two ways (a snapshot cut
    // alone, or a second group's).
    (Fault::GroupDeleteTrustsList, None),
    // A clone refused for asking less than its source, then the same request answered OK,
    // smaller than its source.
    (Fault::RetrySizedByRange, Some(&["CreateVolume", "CreateVolume", "CreateVolume"])),
    // NodeGetVolumeStats at the target kept after another target's unpublish.
    (
        Fault::StatsLostByOtherUnpublish,
        Some(&[
            "CreateVolume",
            "ControllerPublishVolume",
            "NodeStageVolume",
            "NodePublishVolume",
            "NodePublishVolume",
            "NodeUnpublishVolume",
            "NodeGetVolumeStats",
        ]),
    ),
    // A group's snapshot restored (memdriver serving its GroupController): refused with a
    // code no row gives it, though CREATE_DELETE_SNAPSHOT is advertised.
    (
        Fault::MemberRestoreRefused,
        Some(&["CreateVolume", "CreateVolume", "CreateVolumeGroupSnapshot", "CreateVolume"]),
    ),
    // A valid clone refused INTERNAL three times in a row while another volume's clone is
    // served: two volumes, a clone of one, the other grown (these four in several orders),
    // then its three clones.
    (Fault::CloneOfExpandedInternal, None),
    // A block volume (every fifth name made empty, the first block create served) published.
    (
        Fault::BlockTargetFolder,
        Some(&["CreateVolume", "ControllerPublishVolume", "NodeStageVolume", "NodePublishVolume"]),
    ),
    // Sizes at the edges: a NodeExpandVolume one MiB below the volume's size that shrinks it,
    // then a read (ControllerGetVolume, ListVolumes or the CreateVolume again: five calls each
    // way); an expansion past the maximum refused OUT_OF_RANGE yet recorded, then a read (three
    // calls each way).
    (Fault::NodeExpandShrinks, None),
    (Fault::ExpandPastSaves, None),
    // A second expansion to an exact size grown past it (4 MiB extents), answered as asked,
    // then a read (ControllerGetVolume or ListVolumes: four calls each way).
    (Fault::ExpandRoundsPastLimit, None),
    // The volume's CreateVolume again met, a modification refused for a key no plugin takes
    // (the keys it takes applied), then the CreateVolume again refused.
    (
        Fault::ModifyRefusedApplies,
        Some(&["CreateVolume", "CreateVolume", "ControllerModifyVolume", "CreateVolume"]),
    ),
    // Two volumes, one deleted, a group of both refused (a half-cut group kept), then the
    // same group again answered OK.
    (
        Fault::GroupKeepsPartial,
        Some(&[
            "CreateVolume",
            "CreateVolume",
            "DeleteVolume",
            "CreateVolumeGroupSnapshot",
            "CreateVolumeGroupSnapshot",
        ]),
    ),
];

/// The faults whose shortest history is known in length only (more than one is shortest).
const SHORTEST_LENGTH: &[(Fault, usize)] = &[
    (Fault::UnpublishKeepsNode, 4),
    (Fault::NodeUnpublishKeepsRecord, 6),
    (Fault::ThirdUnpublishKeepsNode, 8),
    (Fault::DeleteInUseForgets, 4),
    (Fault::GroupDeleteTrustsList, 6),
    (Fault::CloneOfExpandedInternal, 7),
    (Fault::NodeExpandShrinks, 5),
    (Fault::ExpandPastSaves, 3),
    (Fault::ExpandRoundsPastLimit, 4),
];

/// How every fault of [`HISTORY_FAULTS`] is looked for, stated once so that no seed is picked
/// by hand (picks that moved each time the walk changed): seeds 1, 2, 3 ... in turn, each a walk
/// of [`STEPS`] calls that stops at its first finding, until one's finding is reproduced, within
/// ten calls and, where the fault's shortest history is known, shrunk to it; the test fails if
/// none of the first [`SEEDS`] does, naming what each seed found. (Delta debugging keeps a
/// history from which no call can be cut; a seed may reach the fault another way, one call
/// longer, and the next seed is then looked at.)
const SEEDS: u64 = 8;
/// The calls of each seed's walk.
const STEPS: u64 = 4000;

/// The history faults looked for by a test of their own, not by the one that walks every fault.
const OWN_TEST: &[(Fault, &str)] = &[(
    Fault::ListSnapshotsTwoPaths,
    "one_rule_broken_in_two_request_shapes_of_a_listing_gives_two_findings",
)];

/// The faults the explorer does not look for, each with why.
const NOT_HISTORY: &[(Fault, &str)] = &[
    (Fault::NoValidation, "malformed requests: the fixed cases send them"),
    (Fault::LogSecrets, "the driver's log: the fixed suite's --driver-log reads it"),
    (Fault::AcceptBadToken, "a token never issued: no history brings it about"),
    (Fault::IgnoreCapacity, "found by the first CreateVolume with a size: no history needed"),
    (
        Fault::AcceptAnyMutable,
        "a key it does not take, accepted: the walk sends one, but no sentence makes a plugin \
         refuse it (the fixed case asks the row's INVALID_ARGUMENT)",
    ),
    (
        Fault::SingleWriterTwice,
        "a second target of a SINGLE_NODE_SINGLE_WRITER volume answered OK: the walk finds it, \
         as the note second-target (the spec's table of second publications is a SHOULD)",
    ),
    (
        Fault::ListShiftsUnderCreation,
        "pages shifted by creations between them: the spec allows a CO to see that",
    ),
    // The health faults break what one answer says (csi-conformance's health cases catch each,
    // memdriver/tests/conformance.rs), and the walk makes no health calls.
    (Fault::HealthNoVolumeHealth, "one health answer: the fixed health cases"),
    (Fault::HealthOtherVolumeId, "one health answer: the fixed health cases"),
    (Fault::HealthNoReason, "one health answer: the fixed health cases"),
    (Fault::HealthUnknownStatus, "one health answer: the fixed health cases"),
    (Fault::HealthDuplicateEntry, "one health answer: the fixed health cases"),
    (Fault::StorageDuplicateBackend, "one health answer: the fixed health cases"),
    (Fault::HealthIgnoreMaxEntries, "one paged listing: the fixed health cases"),
    (Fault::HealthTokenNeverEnds, "one paged listing: the fixed health cases"),
    (Fault::HealthSecretInMessage, "one health answer: the fixed health cases"),
];

#[test]
fn every_fault_is_listed_once() {
    let listed: Vec<Fault> = HISTORY_FAULTS
        .iter()
        .map(|(f, _)| *f)
        .chain(OWN_TEST.iter().map(|(f, _)| *f))
        .chain(NOT_HISTORY.iter().map(|(f, _)| *f))
        .collect();
    for f in Fault::ALL {
        assert_eq!(listed.iter().filter(|l| **l == f).count(), 1, "{} is listed once", f.name());
    }
}

// The history faults in two tests (those at even places of the list, and at odd), so that the
// test harness walks them on two threads.
#[test]
fn every_fault_a_history_shows_is_found_and_shrunk_of_even_place() {
    find_and_shrink(0);
}

#[test]
fn every_fault_a_history_shows_is_found_and_shrunk_of_odd_place() {
    find_and_shrink(1);
}

/// Each fault of [`HISTORY_FAULTS`] at a place of parity `part` is found and shrunk; every
/// fault is looked for before the test fails, so that one run names every fault missed.
fn find_and_shrink(part: usize) {
    let tmp = tempfile::tempdir().expect("temp dir");
    let (mut lines, mut failed) = (Vec::new(), Vec::new());
    for (_, (fault, shortest)) in HISTORY_FAULTS.iter().enumerate().filter(|(i, _)| i % 2 == part) {
        match look_for(*fault, *shortest, tmp.path()) {
            Ok(line) => lines.push(line),
            Err(why) => failed.push(why),
        }
    }
    eprintln!("{}", lines.join("\n"));
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}

/// `fault` looked for by the rule of [`SEEDS`]: a line for the test's output, or what each seed
/// found instead.
fn look_for(
    fault: Fault,
    shortest: Option<&[&str]>,
    captures: &std::path::Path,
) -> Result<String, String> {
    let config = || memdriver::Config {
        fault: Some(fault),
        group_controller: matches!(
            fault,
            Fault::MemberDeletedAlone
                | Fault::MemberGetNoGroupId
                | Fault::GroupDeleteTrustsList
                | Fault::MemberRestoreRefused
                | Fault::GroupKeepsPartial
        ),
        ..memdriver::Config::default()
    };
    let name = fault.name();
    let mut missed = Vec::new();
    for seed in 1..=SEEDS {
        let report = explore_driver(config(), seed, STEPS, 1, captures);
        let Some(f) = report.findings.first() else {
            missed.push(format!("seed {seed}: no finding"));
            continue;
        };
        let wrong = if !(f.fails && f.reproduced) {
            Some("not reproduced".to_owned())
        } else if f.calls.len() > 10 {
            Some("shrunk to more than ten calls".to_owned())
        } else if let Some(shortest) = shortest
            && methods(&report) != shortest
        {
            Some(format!("not shrunk to {shortest:?}"))
        } else if let Some((_, n)) = SHORTEST_LENGTH.iter().find(|(s, _)| *s == fault)
            && f.calls.len() != *n
        {
            Some(format!("not shrunk to {n} calls"))
        } else {
            None
        };
        match wrong {
            Some(why) => missed.push(format!("seed {seed}: {why}: {}", f.text())),
            None => {
                return Ok(format!(
                    "{name}: seed {seed}, {} in {} calls (of {})",
                    f.rule,
                    f.calls.len(),
                    f.shrunk_from
                ));
            }
        }
    }
    Err(format!("MEMDRIVER_FAULT={name}, seeds 1 to {SEEDS}:\n{}", missed.join("\n")))
}

#[test]
fn the_same_seed_gives_the_same_walk_and_verdict() {
    let tmp = tempfile::tempdir().expect("temp dir");
    // Seed 1: any seed serves. A clean walk of 500 steps, the same twice (its coverage), and
    // a walk that finds a fault, the same twice (its verdict).
    let clean = || explore(None, 1, 500, tmp.path());
    let (a, b) = (clean(), clean());
    assert_eq!((a.steps, a.findings.len()), (500, 0), "{}", a.text());
    assert_eq!(a.coverage.calls, b.coverage.calls);
    assert_eq!(a.coverage.kinds, b.coverage.kinds);
    let run = || explore(Some(Fault::CreateNotIdempotent), 1, 4000, tmp.path());
    let (a, b) = (run(), run());
    assert_eq!(a.steps, b.steps);
    let steps = |r: &Report| -> Vec<(String, &str, String)> {
        r.findings
            .iter()
            .flat_map(|f| f.calls.iter().map(|c| (f.rule.clone(), f.rpc, c.step.clone())))
            .collect()
    };
    assert!(!steps(&a).is_empty());
    assert_eq!(steps(&a), steps(&b));
    assert_eq!(a.coverage.calls, b.coverage.calls);
}

#[test]
fn a_findings_capture_replays_the_same_on_the_faulty_build_and_differs_on_a_fixed_one() {
    // A read after an expansion; and the two faults only sizes at the edges show (a node
    // expansion below the volume's size, an expansion past what the plugin gives), found by
    // seed 1.
    for (planted, seed) in
        [(Fault::ExpandNotListed, 3), (Fault::NodeExpandShrinks, 1), (Fault::ExpandPastSaves, 1)]
    {
        replays_as_found(planted, seed);
    }
}

/// The first finding of seed `seed` on memdriver with `planted`, replayed by `csi-view replay`'s
/// library: the same answers on the faulty build, a difference on a fixed one.
fn replays_as_found(planted: Fault, seed: u64) {
    let tmp = tempfile::tempdir().expect("temp dir");
    let report = explore(Some(planted), seed, 4000, tmp.path());
    let Some(found) = report.findings.first() else { panic!("{}: no finding", planted.name()) };
    let capture = found.capture.clone().expect("a capture");
    let schema = csi_view_core::schema::Schema::builtin().expect("schema");
    for (fault, differs) in [(Some(planted.name()), false), (None, true)] {
        let dir = tempfile::tempdir().expect("temp dir");
        let env: Vec<(&str, &str)> = fault.map(|f| ("MEMDRIVER_FAULT", f)).into_iter().collect();
        let mut server = support::Server::start(dir.path(), &env);
        let options = csi_view::replay::Options {
            capture: capture.clone(),
            endpoint: format!("unix://{}", server.socket.display()),
            serial: true,
            timeout: Duration::from_secs(20),
            secrets: None,
            driver_log: None,
        };
        let replayed = csi_view::replay::run(&schema, &options, &mut Vec::new()).expect("replays");
        let _ = server.terminate(Duration::from_secs(10));
        let mut text = Vec::new();
        replayed.write_text(&mut text).expect("text");
        assert_eq!(
            replayed.exit_code() == 1,
            differs,
            "{fault:?}: {}",
            String::from_utf8_lossy(&text)
        );
    }
}
