//! The model's properties across longer histories: a CO's late retries answered as the first
//! time, undos in any order keeping what they do not undo, and a ListVolumes token held across
//! later calls (and a ListSnapshots one).

use tonic::Code;

use super::*;

#[test]
fn late_retries_are_answered_as_the_first_time_and_undos_in_any_order_keep_the_rest() {
    let mut m = Model::new(caps());
    let (a, b) = (v(0, 0), v(1, 0));
    assert!(rules_of(&mut m, create(0, 2), ok_volume("a", 2 * MIB)).is_empty());
    // A clone, its content source answered.
    let clone = Call::CreateVolume { name: 1, mib: 2, limit: 0, source: Some(Source::Volume(a)) };
    let cloned = |source: Option<(bool, String)>, capacity| {
        Reply::Ok(Body::Volume { id: "b".into(), capacity, source })
    };
    let from_a = Some((false, "a".to_owned()));
    assert!(rules_of(&mut m, clone, cloned(from_a.clone(), 2 * MIB)).is_empty());
    // Retried later: the same content source and capacity, or the retry breaks.
    assert!(rules_of(&mut m, clone, cloned(from_a.clone(), 2 * MIB)).is_empty());
    assert_eq!(rules_of(&mut m, clone, cloned(None, 2 * MIB)), [Rule::CreateRetrySame]);
    assert_eq!(rules_of(&mut m, clone, cloned(from_a.clone(), 3 * MIB)), [Rule::CreateRetrySame]);
    // Made with a limit, grown past it: the first request again is the plugin's to judge
    // (OK, the volume grown, or ALREADY_EXISTS); never another volume.
    let ranged = Call::CreateVolume { name: 2, mib: 1, limit: 2, source: None };
    assert!(rules_of(&mut m, ranged, ok_volume("c", 2 * MIB)).is_empty());
    let c = v(2, 0);
    let grown = Reply::Ok(Body::Expanded { capacity: 4 * MIB, node: false });
    assert!(rules_of(&mut m, Call::Expand { vol: c, mib: 4, limit: 0 }, grown).is_empty());
    assert!(rules_of(&mut m, ranged, ok_volume("c", 4 * MIB)).is_empty());
    assert!(rules_of(&mut m, ranged, error(Code::AlreadyExists)).is_empty());
    assert_eq!(rules_of(&mut m, ranged, ok_volume("x", 4 * MIB)), [Rule::CreateRetrySame]);
    // A snapshot retried after its source grew: its own size and time, not the source's now.
    let snap = Call::CreateSnapshot { name: 0, source: b };
    let cut = |size, created| {
        Reply::Ok(Body::Snapshot {
            id: "s".into(),
            source: "b".into(),
            size,
            ready: true,
            created: Some(created),
        })
    };
    assert!(rules_of(&mut m, snap, cut(2 * MIB, (7, 0))).is_empty());
    let grow = Reply::Ok(Body::Expanded { capacity: 5 * MIB, node: false });
    assert!(rules_of(&mut m, Call::Expand { vol: b, mib: 5, limit: 0 }, grow).is_empty());
    assert!(rules_of(&mut m, snap, cut(2 * MIB, (7, 0))).is_empty());
    assert_eq!(rules_of(&mut m, snap, cut(5 * MIB, (7, 0))), [Rule::SnapshotRetrySame]);
    assert_eq!(rules_of(&mut m, snap, cut(2 * MIB, (9, 0))), [Rule::SnapshotRetrySame]);
    // ValidateVolumeCapabilities: confirmed the same way each time, until modified.
    let validate = Call::Validate(a);
    let confirmed = |c| Reply::Ok(Body::Validated { confirmed: c });
    assert!(rules_of(&mut m, validate, confirmed(true)).is_empty());
    assert_eq!(rules_of(&mut m, validate, confirmed(false)), [Rule::ValidateIdempotent]);
    assert!(rules_of(&mut m, Call::Modify(a), Reply::Ok(Body::Empty)).is_empty());
    assert!(rules_of(&mut m, validate, confirmed(false)).is_empty());
    // Published at three targets, undone in any order: the others stay where they are.
    for call in [
        Call::ControllerPublish { vol: a, readonly: false, own: true },
        Call::Stage { vol: a, path: 0 },
    ] {
        assert!(rules_of(&mut m, call, Reply::Ok(Body::Empty)).is_empty());
    }
    let at = |target| Call::Publish { vol: a, target, readonly: false };
    let placed = || Reply::Ok(Body::Target { exists: Some(true), gone: Vec::new() });
    assert!(rules_of(&mut m, at(0), placed()).is_empty());
    assert_eq!(rules_of(&mut m, at(2), placed()), [Rule::SecondTarget]);
    assert_eq!(rules_of(&mut m, at(1), placed()), [Rule::SecondTarget]);
    let off = |target| Call::Unpublish { vol: a, target };
    let removed = |gone: Vec<u8>| Reply::Ok(Body::Target { exists: Some(false), gone });
    assert!(rules_of(&mut m, off(0), removed(Vec::new())).is_empty());
    assert_eq!(rules_of(&mut m, off(2), removed(vec![1])), [Rule::OtherTargetsKept]);
    assert!(rules_of(&mut m, off(1), removed(Vec::new())).is_empty());
    // A stale target path: its statistics are the row's NOT_FOUND, unpublished again OK.
    let stats = Call::Stats { vol: a, at: At::Target(2) };
    assert!(m.enabled(&stats));
    assert_eq!(
        rules_of(&mut m, stats, Reply::Ok(Body::Empty)),
        [Rule::Row("NodeGetVolumeStats", rules::NOT_EXIST)]
    );
    assert!(rules_of(&mut m, off(2), removed(Vec::new())).is_empty());
    // Every target undone: the final NodeUnstageVolume is not refused as in use.
    assert_eq!(
        rules_of(&mut m, Call::Unstage(a), error(Code::FailedPrecondition)),
        [Rule::NodeUnpublishUndoes]
    );
}

#[test]
fn a_token_held_across_calls_is_followed_as_the_spec_allows() {
    let mut m = Model::new(caps());
    for (name, id) in [(0, "a"), (1, "b"), (2, "c")] {
        assert!(rules_of(&mut m, create(name, 1), ok_volume(id, MIB)).is_empty());
    }
    let page = |ids: &[&str], token| {
        let entries = ids
            .iter()
            .map(|id| Listed { id: (*id).into(), capacity: MIB, source: None, on_node: None })
            .collect();
        Reply::Ok(Body::Page { entries, token })
    };
    let rest = |ids: &[&str]| {
        let entries: Vec<Listed> = ids
            .iter()
            .map(|id| Listed { id: (*id).into(), capacity: MIB, source: None, on_node: None })
            .collect();
        Reply::Ok(Body::Volumes(Listing {
            entries,
            end: End::Complete,
            last_page: 0,
            unpaged: None,
        }))
    };
    let hold = Call::ListHold { snapshots: false, max_entries: 1 };
    // Nothing created or deleted since: the pages from the token list the rest.
    assert!(rules_of(&mut m, hold, page(&["a"], true)).is_empty());
    assert!(m.enabled(&Call::ListResume { snapshots: false }));
    let grow = Reply::Ok(Body::Expanded { capacity: 2 * MIB, node: false });
    assert!(rules_of(&mut m, Call::Expand { vol: v(1, 0), mib: 2, limit: 0 }, grow).is_empty());
    assert_eq!(
        rules_of(&mut m, Call::ListResume { snapshots: false }, rest(&["c"])),
        [Rule::VolumesListed]
    );
    assert!(!m.enabled(&Call::ListResume { snapshots: false }));
    // A page of the token answered from before the expansion: a capacity it outgrew.
    assert!(rules_of(&mut m, hold, page(&["a"], true)).is_empty());
    assert_eq!(
        rules_of(&mut m, Call::ListResume { snapshots: false }, rest(&["b", "c"])),
        [Rule::CapacityAtLeast]
    );
    // Created or deleted since: the pages may shift (missing or repeated), never list what
    // was deleted; ABORTED (Invalid starting_token) is the plugin's to answer.
    assert!(rules_of(&mut m, hold, page(&["a"], true)).is_empty());
    assert!(rules_of(&mut m, Call::DeleteVolume(v(2, 0)), Reply::Ok(Body::Empty)).is_empty());
    assert!(rules_of(&mut m, create(3, 1), ok_volume("d", MIB)).is_empty());
    assert!(rules_of(&mut m, Call::ListResume { snapshots: false }, rest(&["a"])).is_empty());
    assert!(rules_of(&mut m, hold, page(&["a"], true)).is_empty());
    assert!(
        rules_of(&mut m, Call::ListResume { snapshots: false }, error(Code::Aborted)).is_empty()
    );
    assert!(rules_of(&mut m, hold, page(&["a"], true)).is_empty());
    assert!(rules_of(&mut m, Call::DeleteVolume(v(3, 0)), Reply::Ok(Body::Empty)).is_empty());
    assert_eq!(
        rules_of(&mut m, Call::ListResume { snapshots: false }, rest(&["d"])),
        [Rule::VolumeDeletedGone]
    );
    // A first page without next_token holds nothing.
    assert!(
        rules_of(&mut m, Call::ListHold { snapshots: false, max_entries: 3 }, page(&["a"], false))
            .is_empty()
    );
    assert!(!m.enabled(&Call::ListResume { snapshots: false }));
}

#[test]
fn a_listsnapshots_token_held_across_calls_is_followed_as_the_spec_allows() {
    let mut m = Model::new(caps());
    assert!(rules_of(&mut m, create(0, 1), ok_volume("a", MIB)).is_empty());
    for (name, id) in [(0, "s0"), (1, "s1"), (2, "s2")] {
        let cut = Reply::Ok(Body::Snapshot {
            id: id.into(),
            source: "a".into(),
            size: MIB,
            ready: true,
            created: Some((1, 0)),
        });
        assert!(rules_of(&mut m, Call::CreateSnapshot { name, source: v(0, 0) }, cut).is_empty());
    }
    let snap = |id: &str| ListedSnapshot {
        id: id.into(),
        source: "a".into(),
        ready: true,
        size: MIB,
        created: Some((1, 0)),
        group: String::new(),
    };
    let page = |ids: &[&str]| {
        Reply::Ok(Body::SnapPage { entries: ids.iter().map(|id| snap(id)).collect(), token: true })
    };
    let rest = |ids: &[&str]| {
        Reply::Ok(Body::Snapshots(Listing {
            entries: ids.iter().map(|id| snap(id)).collect(),
            end: End::Complete,
            last_page: 0,
            unpaged: None,
        }))
    };
    let hold = Call::ListHold { max_entries: 1, snapshots: true };
    let resume = Call::ListResume { snapshots: true };
    assert!(!m.enabled(&resume));
    // Nothing cut or deleted since: the first page and the rest list every snapshot.
    assert!(rules_of(&mut m, hold, page(&["s0"])).is_empty());
    assert!(m.enabled(&resume) && !m.enabled(&Call::ListResume { snapshots: false }));
    assert!(rules_of(&mut m, resume, rest(&["s1", "s2"])).is_empty());
    assert!(!m.enabled(&resume));
    assert!(rules_of(&mut m, hold, page(&["s0"])).is_empty());
    assert_eq!(rules_of(&mut m, resume, rest(&["s2"])), [Rule::SnapshotsListed]);
    // Each entry as it was cut.
    assert!(rules_of(&mut m, hold, page(&["s0"])).is_empty());
    let mut later = rest(&["s1", "s2"]);
    if let Reply::Ok(Body::Snapshots(l)) = &mut later {
        l.entries[0].created = Some((2, 0));
    }
    assert_eq!(rules_of(&mut m, resume, later), [Rule::SnapshotsCurrent]);
    // Cut or deleted since: the pages may shift, never list what was deleted; ABORTED is the
    // plugin's to answer.
    assert!(rules_of(&mut m, hold, page(&["s0"])).is_empty());
    let s2 = Snap { name: 2, nth: 0 };
    assert!(rules_of(&mut m, Call::DeleteSnapshot(s2), Reply::Ok(Body::Empty)).is_empty());
    assert!(rules_of(&mut m, resume, rest(&["s1"])).is_empty());
    assert!(rules_of(&mut m, hold, page(&["s0"])).is_empty());
    assert!(rules_of(&mut m, resume, error(Code::Aborted)).is_empty());
    assert!(rules_of(&mut m, hold, page(&["s0"])).is_empty());
    assert_eq!(rules_of(&mut m, resume, rest(&["s1", "s2"])), [Rule::SnapshotDeletedGone]);
}

#[test]
fn a_volume_is_staged_again_at_another_path_and_published_again_at_a_target_undone() {
    // (The walks of `a_plugin_answering_as_the_spec_asks_breaks_nothing_over_many_walks` make
    // each of these histories.)
    // Staged again at path #1: recorded there; a retry there, the other is its second.
    let a = v(0, 0);
    let mut m = Model::new(caps());
    let ok = || Reply::Ok(Body::Empty);
    assert!(rules_of(&mut m, create(0, 2), ok_volume("a", 2 * MIB)).is_empty());
    let publish = Call::ControllerPublish { vol: a, readonly: false, own: true };
    assert!(rules_of(&mut m, publish, ok()).is_empty());
    for call in [Call::Stage { vol: a, path: 0 }, Call::Unstage(a)] {
        assert!(rules_of(&mut m, call, ok()).is_empty());
    }
    let again = Call::Stage { vol: a, path: 1 };
    assert_eq!(m.state_of(&again), "staged again at its other staging path");
    assert_eq!(
        rules_of(&mut m, again, error(Code::FailedPrecondition)),
        [Rule::UnstageUndoes],
        "refused where nothing is staged after the unstage"
    );
    let mut m = Model::new(caps());
    assert!(rules_of(&mut m, create(0, 2), ok_volume("a", 2 * MIB)).is_empty());
    assert!(rules_of(&mut m, publish, ok()).is_empty());
    for call in [Call::Stage { vol: a, path: 0 }, Call::Unstage(a), again] {
        assert!(rules_of(&mut m, call, ok()).is_empty());
    }
    assert!(m.vol(a).is_some_and(|s| s.staged && s.staging == 1));
    assert!(!m.enabled(&Call::Stage { vol: a, path: 0 }), "staged: a retry goes where it is");
    assert!(rules_of(&mut m, again, ok()).is_empty());
    // Published read-only at target #0, unpublished: the other flag there is a new publication.
    let placed = || Reply::Ok(Body::Target { exists: Some(true), gone: Vec::new() });
    let gone = || Reply::Ok(Body::Target { exists: Some(false), gone: Vec::new() });
    let at = |readonly| Call::Publish { vol: a, target: 0, readonly };
    assert!(rules_of(&mut m, at(true), placed()).is_empty());
    let other = rules_of(&mut m, at(false), error(Code::AlreadyExists));
    assert!(other.is_empty(), "published there with the other flag: the row's ALREADY_EXISTS");
    assert!(rules_of(&mut m, Call::Unpublish { vol: a, target: 0 }, gone()).is_empty());
    assert_eq!(m.state_of(&at(false)), "again at a target unpublished, the other readonly flag");
    let mut refused = m.clone();
    assert_eq!(
        rules_of(&mut refused, at(false), error(Code::AlreadyExists)),
        [Rule::NodeUnpublishUndoes]
    );
    assert!(rules_of(&mut m, at(false), placed()).is_empty());
    assert!(m.vol(a).is_some_and(|s| s.targets[0] == Some(false)));
}

#[test]
fn a_ready_snapshot_stays_ready_in_its_retry_and_restores_again() {
    let mut m = Model::new(caps());
    let a = v(0, 0);
    let x = Snap { name: 0, nth: 0 };
    assert!(rules_of(&mut m, create(0, 2), ok_volume("a", 2 * MIB)).is_empty());
    let snap = Call::CreateSnapshot { name: 0, source: a };
    let cut = |ready| {
        Reply::Ok(Body::Snapshot {
            id: "s".into(),
            source: "a".into(),
            size: 2 * MIB,
            ready,
            created: Some((7, 0)),
        })
    };
    assert!(rules_of(&mut m, snap, cut(true)).is_empty());
    let restore =
        |name| Call::CreateVolume { name, mib: 0, limit: 0, source: Some(Source::Snapshot(x)) };
    let restored = |id: &str| {
        Reply::Ok(Body::Volume {
            id: id.into(),
            capacity: 2 * MIB,
            source: Some((true, "s".to_owned())),
        })
    };
    // The first restore may fail any way; once one was answered OK, a later one refused with
    // an error no table gives is a note.
    assert!(rules_of(&mut m, restore(1), error(Code::Internal)).is_empty());
    assert!(rules_of(&mut m, restore(2), restored("b")).is_empty());
    assert_eq!(rules_of(&mut m, restore(3), error(Code::Internal)), [Rule::RestoreReadyRefused]);
    // A code that says the request is not served breaks the support MUST instead.
    assert_eq!(
        rules_of(&mut m, restore(5), error(Code::FailedPrecondition)),
        [Rule::RestoreSupported]
    );
    assert!(rules_of(&mut m, restore(4), error(Code::OutOfRange)).is_empty());
    // The retry of a snapshot answered ready: ready again (a MUST), not ready is the retry's rule.
    assert_eq!(rules_of(&mut m, snap, cut(false)), [Rule::SnapshotRetrySame]);
    // Cut not ready at first: the retry may still say so.
    let mut m = Model::new(caps());
    assert!(rules_of(&mut m, create(0, 2), ok_volume("a", 2 * MIB)).is_empty());
    assert!(rules_of(&mut m, snap, cut(false)).is_empty());
    assert!(rules_of(&mut m, snap, cut(false)).is_empty());
    assert!(rules_of(&mut m, snap, cut(true)).is_empty());
}
