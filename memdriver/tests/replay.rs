//! `csi-view replay` of recorded traffic against memdriver: the capture of csi-sanity v5.4.0's run
//! and the capture of csi-conformance's run (`tests/data/replay/`, recorded with another node id)
//! sent again to a fresh memdriver answer the same once the generated values (volume and snapshot
//! ids, the node id, page tokens, contexts) are followed, with the recorded overlap and one call
//! at a time; and against memdriver with each `MEMDRIVER_FAULT`, every fault whose effect reaches
//! an answer to the calls a capture holds, or memdriver's log (`--driver-log`), shows as a
//! difference (exit 1). The faults that cannot
//! show in a replay, and those one capture lacks the calls for, are listed with the reason.
//!
//! memdriver runs as a process in a folder of its own (the captures' target paths are relative,
//! so each replay has its own), where the test makes the parents of the target paths as a CO
//! would; `csi_view::replay` is the library under `csi-view replay`, so its report and exit code
//! are the command's.

mod support;

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use csi_view::replay::{Options, run};
use csi_view_core::replay::report::{LogCheck, LogFinding, Outcome, Report};
use csi_view_core::schema::Schema;
use support::Server;

/// A file of `tests/data/replay/`.
fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/replay").join(name)
}

/// Makes, under `dir`, the parent folder of every `target_path` the capture publishes at: the
/// CO's part, which the recording's CO did before each NodePublishVolume.
fn make_target_parents(capture: &Path, dir: &Path) {
    let capture = csi_view_core::capture::read(capture).expect("the capture reads");
    for call in capture.calls.iter().filter(|c| c.method == "/csi.v1.Node/NodePublishVolume") {
        for bytes in call.request_bytes().expect("base64") {
            let request: csikit::v1::NodePublishVolumeRequest =
                csikit::prost::Message::decode(bytes.as_slice())
                    .expect("a NodePublishVolumeRequest");
            let target = Path::new(&request.target_path);
            assert!(target.is_relative(), "{}: the captures' paths are relative", target.display());
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(dir.join(parent)).expect("make a target's parent");
            }
        }
    }
}

/// What one replay gave.
struct Replayed {
    report: Report,
    /// The report as text and JSON, and the warnings: everything the command prints.
    printed: String,
    warnings: String,
}

/// Replays `capture` against a fresh memdriver (node id `node-replayed`, `fault` if any).
/// The memdriver release the captures were recorded from (`data/replay/README.md`).
const RECORDED_VERSION: &str = "0.1.0";

/// The capture as this build of memdriver would have been recorded: GetPluginInfo answers its
/// crate version as `vendor_version`, so the recorded `RECORDED_VERSION` becomes this build's
/// (the one answer a version bump changes; every other byte is kept). Written into `dir`.
fn at_this_version(capture: &Path, dir: &Path) -> PathBuf {
    use csikit::prost::Message as _;
    let text = std::fs::read_to_string(capture).expect("the capture reads");
    let mut out = String::with_capacity(text.len());
    let mut rewritten = 0;
    for line in text.lines() {
        let mut value: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
        if value["method"] == "/csi.v1.Identity/GetPluginInfo"
            && let Some(responses) = value["responses"].as_array_mut()
        {
            for response in responses {
                let bytes = data_encoding::BASE64
                    .decode(response.as_str().expect("base64").as_bytes())
                    .expect("base64");
                let mut info = csikit::v1::GetPluginInfoResponse::decode(bytes.as_slice())
                    .expect("a GetPluginInfoResponse");
                assert_eq!(info.vendor_version, RECORDED_VERSION, "the recorded version");
                info.vendor_version = env!("CARGO_PKG_VERSION").to_owned();
                *response = csi_view_core::capture::encode(&info.encode_to_vec()).into();
                rewritten += 1;
            }
        }
        out.push_str(&value.to_string());
        out.push('\n');
    }
    assert!(rewritten > 0, "no GetPluginInfo answer in {}", capture.display());
    let path = dir.join(capture.file_name().expect("a file name"));
    std::fs::write(&path, out).expect("write the capture");
    path
}

fn replay(capture: &str, fault: Option<&str>, serial: bool, secrets: bool) -> Replayed {
    let dir = tempfile::tempdir().expect("temp dir");
    let capture = at_this_version(&data(capture), dir.path());
    make_target_parents(&capture, dir.path());
    // The captures were recorded from memdriver on CSI v1.12.0, whose capabilities had no
    // health: the replayed memdriver serves none, so its capabilities answer as recorded.
    let mut env = vec![("MEMDRIVER_NODE_ID", "node-replayed"), ("MEMDRIVER_HEALTH", "0")];
    if let Some(f) = fault {
        env.push(("MEMDRIVER_FAULT", f));
    }
    let mut server = Server::start(dir.path(), &env);
    let options = Options {
        capture,
        endpoint: format!("unix://{}", server.socket.display()),
        serial,
        timeout: Duration::from_secs(20),
        secrets: secrets.then(|| data("secrets.yaml")),
        driver_log: Some(server.log.clone()),
    };
    let schema = Schema::builtin().expect("the built-in schema");
    let mut warnings = Vec::new();
    let report = run(&schema, &options, &mut warnings).expect("the replay runs");
    let _ = server.terminate(Duration::from_secs(10));
    let mut printed = Vec::new();
    report.write_text(&mut printed).expect("text");
    let mut printed = String::from_utf8(printed).expect("utf-8");
    printed.push_str(&report.to_json().to_string());
    Replayed { report, printed, warnings: String::from_utf8(warnings).expect("utf-8") }
}

/// The lines of the report that are not "same", for a failure message.
fn not_same(r: &Replayed) -> String {
    r.printed.lines().filter(|l| !l.contains(": same")).take(40).collect::<Vec<_>>().join("\n")
}

fn assert_all_same(r: &Replayed, calls: usize) {
    assert_eq!(r.report.exit_code(), 0, "{}", not_same(r));
    // memdriver's log was read and holds none of the secrets sent.
    let log = r.report.driver_log.as_ref().map(|l| &l.finding);
    assert!(matches!(log, Some(LogFinding::Clean { values }) if *values > 0), "{log:?}");
    assert_eq!(r.report.calls.len(), calls);
    assert!(r.report.calls.iter().all(|c| c.outcome == Outcome::Same), "{}", not_same(r));
    // The node id was recorded as `node-recorded`: NodeGetInfo's answer is followed (its
    // `node_id`, and the topology segment memdriver names after the node), and the
    // ControllerPublishVolume calls that name the node carry the new id.
    assert!(r.report.values_mapped >= 1);
    let info = r.report.calls.iter().find(|c| c.method == "/csi.v1.Node/NodeGetInfo");
    assert_eq!(info.map(|c| c.mapped), Some(2));
    let rewritten: usize = r
        .report
        .calls
        .iter()
        .filter(|c| c.method == "/csi.v1.Controller/ControllerPublishVolume")
        .map(|c| c.rewritten)
        .sum();
    assert!(rewritten > 0, "no ControllerPublishVolume was sent the replayed node id");
}

/// No secret of the secrets file in anything the replay printed.
fn assert_no_secret(r: &Replayed) {
    let secrets = csikit::runtime::secrets::Secrets::read(&data("secrets.yaml")).expect("reads");
    for value in secrets.values() {
        assert!(!r.printed.contains(&value) && !r.warnings.contains(&value), "{value} printed");
    }
}

#[test]
fn the_sanity_capture_replays_the_same_with_its_overlap_and_one_call_at_a_time() {
    for serial in [false, true] {
        let r = replay("sanity.jsonl", None, serial, true);
        assert_all_same(&r, 679);
        assert_eq!(r.warnings, "", "--secrets refills every blanked value");
        assert_no_secret(&r);
        assert!(r.printed.contains("replay: 679 calls: 679 same;"), "{}", r.printed);
    }
}

#[test]
fn the_conformance_capture_replays_the_same() {
    let r = replay("conformance.jsonl", None, false, true);
    assert_all_same(&r, 499);
    assert_no_secret(&r);
}

#[test]
fn without_the_secrets_file_the_blanked_values_are_sent_with_one_warning() {
    // memdriver requires no secret, so the answers are the same; the warning is said once.
    let r = replay("sanity.jsonl", None, false, false);
    assert_eq!(r.report.exit_code(), 0, "{}", not_same(&r));
    assert_eq!(r.warnings.lines().count(), 1, "{}", r.warnings);
    // Only the capture's blanks were sent: no secret value to look for in the log.
    let log = r.report.driver_log.as_ref().map(|l| &l.finding);
    assert_eq!(log, Some(&LogFinding::NoSecretSent));
    assert!(
        r.warnings.starts_with("warning: the capture's secret values were blanked"),
        "{}",
        r.warnings
    );
}

/// Which capture shows each fault, and why a capture cannot.
struct FaultCase {
    fault: &'static str,
    /// The csi-sanity capture shows it.
    sanity: bool,
    /// The csi-conformance capture shows it.
    conformance: bool,
    /// Why a capture that does not show it cannot.
    why_not: &'static str,
}

const fn both(fault: &'static str) -> FaultCase {
    FaultCase { fault, sanity: true, conformance: true, why_not: "" }
}

const fn conformance_only(fault: &'static str, why_not: &'static str) -> FaultCase {
    FaultCase { fault, sanity: false, conformance: true, why_not }
}

const fn sanity_only(fault: &'static str, why_not: &'static str) -> FaultCase {
    FaultCase { fault, sanity: true, conformance: false, why_not }
}

const fn neither(fault: &'static str, why_not: &'static str) -> FaultCase {
    FaultCase { fault, sanity: false, conformance: false, why_not }
}

/// Every `MEMDRIVER_FAULT` (the test checks the list is whole).
const FAULTS: [FaultCase; 72] = [
    both("no-validation"),
    both("create-not-idempotent"),
    both("internal-for-unknown"),
    both("delete-not-found"),
    // No answer changes: it shows in memdriver's log, which the replay reads (`--driver-log`).
    both("log-secrets"),
    both("ignore-token"),
    both("accept-bad-token"),
    neither(
        "no-target-path",
        "NodePublishVolume answers OK either way; only the filesystem differs (no target_path made), and NodeUnpublishVolume of a path not there is OK too",
    ),
    both("ignore-capacity"),
    both("unpublish-not-idempotent"),
    both("no-already-exists"),
    both("stats-any-path"),
    both("snapshot-not-idempotent"),
    both("leak-on-delete"),
    both("accept-any-mutable"),
    conformance_only("get-snapshot-other", "csi-sanity v5.4.0 never calls GetSnapshot"),
    conformance_only(
        "single-writer-twice",
        "csi-sanity never publishes a SINGLE_NODE_SINGLE_WRITER volume at a second target path",
    ),
    conformance_only(
        "list-shifts-under-creation",
        "csi-sanity never pages ListVolumes (its case that creates volumes between pages is pending), so the order of pages never shows",
    ),
    both("publish-any-node"),
    both("missing-source-empty"),
    both("validate-unknown-volume"),
    both("stats-unknown-volume"),
    conformance_only(
        "list-snapshots-unknown-id-all",
        "csi-sanity's one ListSnapshots of an unknown id comes when memdriver holds no snapshot, so 'every snapshot' is the empty list it recorded",
    ),
    both("unpublish-unknown-ok"),
    both("republish-incompatible-ok"),
    sanity_only(
        "reuse-name-after-delete",
        "no call of csi-conformance's capture creates a name again after deleting its volume",
    ),
    conformance_only(
        "list-snapshots-first-of-source",
        "csi-sanity's capture lists by source_volume_id a volume with one snapshot",
    ),
    neither(
        "expand-not-listed",
        "no call of either capture reads a volume's size after ControllerExpandVolume grew it",
    ),
    conformance_only(
        "snapshot-dies-with-source",
        "csi-sanity's capture never uses a snapshot after deleting its source volume",
    ),
    both("unpublish-keeps-node"),
    both("unstage-keeps-path"),
    both("node-unpublish-keeps-record"),
    conformance_only(
        "third-unpublish-keeps-node",
        "no volume of csi-sanity's capture is controller-published a third time",
    ),
    neither(
        "restore-size-of-origin",
        "neither capture restores, without a size, a snapshot cut after its source volume grew",
    ),
    neither(
        "create-retry-no-source",
        "neither capture sends a clone's or a restore's CreateVolume again",
    ),
    neither(
        "snapshot-retry-size-now",
        "neither capture sends a CreateSnapshot again after its source volume grew",
    ),
    neither(
        "validate-unconfirmed-when-published",
        "neither capture validates a volume while it is controller-published",
    ),
    neither(
        "member-deleted-alone",
        "neither capture holds a group snapshot (the replayed memdriver serves no GroupController)",
    ),
    neither(
        "list-token-stale-sizes",
        "neither capture expands a volume between the pages of one ListVolumes",
    ),
    neither(
        "delete-in-use-forgets",
        "neither capture deletes a volume while it is published or staged",
    ),
    neither(
        "unstage-any-path",
        "neither capture unstages a volume at a path where it is not staged",
    ),
    neither(
        "unpublish-any-target",
        "neither capture unpublishes a published volume at a path where it is not published",
    ),
    neither(
        "clone-limit-of-created-size",
        "neither capture clones a volume expanded since it was made",
    ),
    neither(
        "member-get-no-group-id",
        "neither capture holds a group snapshot (the replayed memdriver serves no GroupController)",
    ),
    neither(
        "list-snapshots-time-now",
        "a replay ignores google.protobuf.Timestamp values (read from the plugin's clock, two runs never agree)",
    ),
    neither(
        "read-source-of-origin",
        "neither capture clones a clone or a restore and then reads it",
    ),
    neither(
        "list-snapshots-token-stale",
        "neither capture deletes a snapshot between the pages of one ListSnapshots",
    ),
    conformance_only(
        "unstage-first-path",
        "csi-sanity's capture stages each volume at one staging path only",
    ),
    neither(
        "target-keeps-readonly",
        "neither capture publishes a volume again at a target it was unpublished from, with the other readonly flag",
    ),
    neither(
        "snapshot-retry-unready-after-restore",
        "neither capture sends a CreateSnapshot again after a restore from its snapshot",
    ),
    both("list-snapshots-two-paths"),
    neither(
        "clone-chain-refused",
        "neither capture clones a volume that is itself a clone or a restore",
    ),
    neither(
        "group-delete-trusts-list",
        "neither capture holds a group snapshot (the replayed memdriver serves no GroupController)",
    ),
    neither(
        "retry-sized-by-range",
        "neither capture sends a create from a source refused for its range again",
    ),
    neither(
        "stats-lost-by-other-unpublish",
        "neither capture asks NodeGetVolumeStats at a target after another target's unpublish",
    ),
    neither(
        "member-restore-refused",
        "neither capture holds a group snapshot (the replayed memdriver serves no GroupController)",
    ),
    neither(
        "clone-of-expanded-internal",
        "neither capture clones a volume three times after it was expanded",
    ),
    neither("block-target-folder", "neither capture publishes a block volume at a target"),
    neither(
        "node-expand-shrinks",
        "neither capture asks NodeExpandVolume for less than the volume's size",
    ),
    neither(
        "expand-past-saves",
        "neither capture expands a volume past the largest size the plugin gives",
    ),
    neither(
        "expand-rounds-past-limit",
        "neither capture expands a volume a second time with a limit, then reads it",
    ),
    neither(
        "modify-refused-applies",
        "neither capture sends ControllerModifyVolume with a key the plugin does not take",
    ),
    neither("group-keeps-partial", "neither capture asks a group snapshot of a deleted volume"),
    neither("health-no-volume-health", NO_HEALTH_CALLS),
    neither("health-other-volume-id", NO_HEALTH_CALLS),
    neither("health-no-reason", NO_HEALTH_CALLS),
    neither("health-unknown-status", NO_HEALTH_CALLS),
    neither("health-duplicate-entry", NO_HEALTH_CALLS),
    neither("storage-duplicate-backend", NO_HEALTH_CALLS),
    neither("health-ignore-max-entries", NO_HEALTH_CALLS),
    neither("health-token-never-ends", NO_HEALTH_CALLS),
    neither("health-secret-in-message", NO_HEALTH_CALLS),
];

/// Why the health faults show in neither capture.
const NO_HEALTH_CALLS: &str = "the captures (csi-sanity v5.4.0's run, csi-conformance's before CSI v1.13.0) hold no health call, and the replayed memdriver serves none (MEMDRIVER_HEALTH=0)";

/// Each fault's replay of each capture, in `FAULTS` order, capture by capture. One call at a time
/// within a replay: a fault shows in an answer, not in timing, and calls sent at once on one
/// volume may be answered ABORTED by either run (the spec's concurrency row), a difference that
/// is not the fault's (the overlap is the first test's). The replays themselves are independent
/// (each its own memdriver, folder and socket) and mostly wait on a round trip or a process
/// starting, so a few run at once; the caller judges them in order.
fn replay_each_fault(captures: &[&'static str]) -> Vec<Replayed> {
    const AT_ONCE: usize = 4;
    let jobs: Vec<(&str, &str)> =
        FAULTS.iter().flat_map(|case| captures.iter().map(|c| (case.fault, *c))).collect();
    let next = AtomicUsize::new(0);
    let done: Vec<Mutex<Option<Replayed>>> = jobs.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..AT_ONCE {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&(fault, capture)) = jobs.get(i) else { break };
                    let r = replay(capture, Some(fault), true, true);
                    *done[i].lock().expect("no replay panicked holding it") = Some(r);
                }
            });
        }
    });
    done.into_iter()
        .map(|slot| slot.into_inner().expect("not poisoned").expect("every replay ran"))
        .collect()
}

#[test]
fn each_fault_shows_as_a_difference_where_the_capture_holds_calls_it_changes() {
    let names: Vec<&str> = memdriver::fault::Fault::ALL.iter().map(|f| f.name()).collect();
    let listed: Vec<&str> = FAULTS.iter().map(|f| f.fault).collect();
    assert_eq!(listed, names, "FAULTS lists every fault, in memdriver's order");
    const CAPTURES: [&str; 2] = ["sanity.jsonl", "conformance.jsonl"];
    let mut replays = replay_each_fault(&CAPTURES).into_iter();
    let mut shown = (0, 0, 0);
    for case in &FAULTS {
        assert!(case.sanity && case.conformance || !case.why_not.is_empty(), "{}", case.fault);
        for (capture, expected) in CAPTURES.into_iter().zip([case.sanity, case.conformance]) {
            let r = replays.next().expect("a replay per fault and capture");
            let differs = r.report.exit_code() == 1;
            assert_eq!(
                differs,
                expected,
                "{} with {capture}: expected {}; {}",
                case.fault,
                if expected { "a difference" } else { "no difference" },
                if differs {
                    not_same(&r)
                } else {
                    r.printed.lines().last().unwrap_or_default().to_owned()
                }
            );
            if differs {
                let log = r.report.driver_log.as_ref().is_some_and(LogCheck::matters);
                assert!(r.report.calls.iter().any(|c| c.outcome.matters()) || log);
                // Only the fault that writes secrets shows in the log, and there only.
                assert_eq!(log, case.fault == "log-secrets", "{}: {}", case.fault, not_same(&r));
            }
            assert_no_secret(&r);
        }
        shown.0 += usize::from(case.sanity);
        shown.1 += usize::from(case.conformance);
        shown.2 += usize::from(case.sanity || case.conformance);
    }
    assert_eq!(shown, (25, 32, 33), "faults shown by the sanity capture, conformance's, either");
    println!(
        "faults shown: {} of 33 (csi-sanity capture {}, csi-conformance capture {})",
        shown.2, shown.0, shown.1
    );
}
