//! The workload's marks held to the history: a restore or a clone holds what its source held
//! when the call was made, not what it holds later; a volume published again holds the last
//! mark written; a volume made empty is held to nothing; a target that is no mount point, or
//! a walk without marks, judges nothing.

use super::*;
use crate::explore::model::marks::Found;
use crate::explore::model::seen::{FileKind, Placed, Seen};

/// The rules `call` answered `reply` broke, with `seen` after it.
fn with(m: &mut Model, call: Call, reply: Reply, seen: &Seen) -> Vec<Rule> {
    let mut v = m.judge(&call, &reply);
    m.judge_seen(&mut v, &call, &reply, seen);
    v.broken.into_iter().map(|b| b.rule).collect()
}

/// A NodePublishVolume's target, a read-write mount point, found holding `found`, then
/// written `wrote`.
fn at_target(found: Found, wrote: Option<u32>) -> Seen {
    Seen {
        target: Some(Placed { kind: Some(FileKind::Folder), mount: Some(wrote.is_none()) }),
        found: Some(found),
        wrote: wrote.map(Some),
        ..Seen::default()
    }
}

fn target_ok() -> Reply {
    Reply::Ok(Body::Target { exists: Some(true), gone: Vec::new() })
}

/// A model with marks on.
fn marked() -> Model {
    let mut m = Model::new(caps());
    m.seen.marks.on = true;
    m
}

/// `vol`, made, published to the node and staged.
fn ready(m: &mut Model, vol: Vol, create: Call, id: &str) {
    assert!(with(m, create, ok_volume(id, 2 * MIB), &Seen::default()).is_empty());
    for call in
        [Call::ControllerPublish { vol, readonly: false, own: true }, Call::Stage { vol, path: 0 }]
    {
        assert!(rules_of(m, call, Reply::Ok(Body::Empty)).is_empty());
    }
}

fn cut(id: &str) -> Reply {
    Reply::Ok(Body::Snapshot {
        id: id.into(),
        source: "a".into(),
        size: 2 * MIB,
        ready: true,
        created: None,
    })
}

#[test]
fn a_restore_holds_what_its_snapshot_saw_not_what_its_source_holds_later() {
    let mut m = marked();
    let (a, r) = (v(0, 0), v(1, 0));
    ready(&mut m, a, create(0, 2), "a");
    let publish = Call::Publish { vol: a, target: 0, readonly: false };
    // Made empty: nothing there; mark 0 written.
    assert!(with(&mut m, publish, target_ok(), &at_target(Found::Nothing, Some(0))).is_empty());
    // The snapshot sees mark 0; mark 1 is written into the source after it.
    let snap = Call::CreateSnapshot { name: 0, source: a };
    let after = Seen { rewrote: vec![(a, Some(1))], ..Seen::default() };
    assert!(with(&mut m, snap, cut("s"), &after).is_empty());
    let restore = Call::CreateVolume {
        name: 1,
        mib: 2,
        limit: 0,
        source: Some(Source::Snapshot(Snap { name: 0, nth: 0 })),
    };
    ready(&mut m, r, restore, "r");
    let mut live = m.clone();
    let publish_r = Call::Publish { vol: r, target: 0, readonly: true };
    let ro = |found| Seen {
        target: Some(Placed { kind: Some(FileKind::Folder), mount: Some(true) }),
        found: Some(found),
        ..Seen::default()
    };
    assert!(with(&mut m, publish_r, target_ok(), &ro(Found::Mark(0))).is_empty());
    // A restore of the source as it is now, or of nothing.
    assert_eq!(with(&mut live, publish_r, target_ok(), &ro(Found::Mark(1))), [Rule::SourceData]);
    // A target that is no mount point is not read: nothing judged.
    let mut folder = m.clone();
    let not_mounted = Seen {
        target: Some(Placed { kind: Some(FileKind::Folder), mount: None }),
        ..Seen::default()
    };
    assert!(with(&mut folder, publish_r, target_ok(), &not_mounted).is_empty());
}

#[test]
fn a_clone_holds_its_source_at_the_clone_and_a_volume_its_last_mark() {
    let mut m = marked();
    let (a, c) = (v(0, 0), v(1, 0));
    ready(&mut m, a, create(0, 2), "a");
    let publish = Call::Publish { vol: a, target: 0, readonly: false };
    assert!(with(&mut m, publish, target_ok(), &at_target(Found::Nothing, Some(3))).is_empty());
    let clone = Call::CreateVolume { name: 1, mib: 2, limit: 0, source: Some(Source::Volume(a)) };
    let after = Seen { rewrote: vec![(a, Some(4))], ..Seen::default() };
    assert!(with(&mut m, clone, ok_volume("c", 2 * MIB), &after).is_empty());
    for call in [
        Call::ControllerPublish { vol: c, readonly: false, own: true },
        Call::Stage { vol: c, path: 0 },
    ] {
        assert!(rules_of(&mut m, call, Reply::Ok(Body::Empty)).is_empty());
    }
    let publish_c = Call::Publish { vol: c, target: 0, readonly: false };
    let mut wrong = m.clone();
    assert_eq!(
        with(&mut wrong, publish_c, target_ok(), &at_target(Found::Mark(4), Some(5))),
        [Rule::SourceData]
    );
    assert!(with(&mut m, publish_c, target_ok(), &at_target(Found::Mark(3), Some(5))).is_empty());
    // The source, unpublished and published again: its last mark, 4.
    let unpublish = Call::Unpublish { vol: a, target: 0 };
    assert!(rules_of(&mut m, unpublish, target_ok_removed()).is_empty());
    let mut lost = m.clone();
    assert!(with(&mut m, publish, target_ok(), &at_target(Found::Mark(4), Some(6))).is_empty());
    assert_eq!(
        with(&mut lost, publish, target_ok(), &at_target(Found::Nothing, Some(6))),
        [Rule::TargetData]
    );
    // A write that failed: what the volume holds is no longer known, and not judged.
    assert!(rules_of(&mut m, unpublish, target_ok_removed()).is_empty());
    assert!(
        with(
            &mut m,
            publish,
            target_ok(),
            &Seen { wrote: Some(None), ..at_target(Found::Mark(6), None) }
        )
        .is_empty()
    );
    assert!(rules_of(&mut m, unpublish, target_ok_removed()).is_empty());
    assert!(with(&mut m, publish, target_ok(), &at_target(Found::Other, Some(7))).is_empty());
}

#[test]
fn a_volume_made_empty_is_held_to_nothing_and_no_walk_without_marks_judges() {
    let mut m = marked();
    let a = v(0, 0);
    ready(&mut m, a, create(0, 2), "a");
    let publish = Call::Publish { vol: a, target: 0, readonly: false };
    // Another volume's data in a volume made empty: no sentence says it is empty.
    assert!(with(&mut m, publish, target_ok(), &at_target(Found::Mark(9), Some(10))).is_empty());
    let mut off = Model::new(caps());
    ready(&mut off, a, create(0, 2), "a");
    assert!(with(&mut off, publish, target_ok(), &at_target(Found::Nothing, Some(0))).is_empty());
    assert!(off.seen.marks.vols.is_empty());
}

fn target_ok_removed() -> Reply {
    Reply::Ok(Body::Target { exists: Some(false), gone: Vec::new() })
}

#[test]
fn a_mounted_volume_keeps_its_last_mark_across_other_calls() {
    let mut m = marked();
    let (a, b) = (v(0, 0), v(1, 0));
    ready(&mut m, a, create(0, 2), "a");
    assert!(with(&mut m, create(1, 2), ok_volume("b", 2 * MIB), &Seen::default()).is_empty());
    let publish = Call::Publish { vol: a, target: 0, readonly: false };
    let rw = Seen {
        target: Some(Placed { kind: Some(FileKind::Folder), mount: Some(false) }),
        found: Some(Found::Nothing),
        wrote: Some(Some(5)),
        ..Seen::default()
    };
    assert!(with(&mut m, publish, target_ok(), &rw).is_empty());
    assert!(m.seen.rw_mounts.contains(&(a, 0)));
    // Another volume deleted: target #0 of `a` still holds mark 5, or no longer does.
    let delete = Call::DeleteVolume(b);
    let kept = |found| Seen {
        watched: vec![(a, 0, Some(false))],
        marked: vec![(a, 0, found)],
        ..Seen::default()
    };
    assert!(with(&mut m.clone(), delete, Reply::Ok(Body::Empty), &kept(Found::Mark(5))).is_empty());
    assert_eq!(
        with(&mut m.clone(), delete, Reply::Ok(Body::Empty), &kept(Found::Nothing)),
        [Rule::TargetData]
    );
    // Its own NodeUnstageVolume out of order: what it leaves is the plugin's.
    let unstage = Call::Unstage(a);
    assert!(
        !with(&mut m, unstage, Reply::Ok(Body::Empty), &kept(Found::Nothing))
            .contains(&Rule::TargetData)
    );
}
