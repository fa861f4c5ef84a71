//! Valid creates refused, refusals retried, and group deletes with mismatched `snapshot_ids`:
//! each refusal judged by its code and the size asked, the same request or another after a
//! refusal that lasts, and a snapshot not of the group held to stand.

use super::*;
use crate::explore::call::Mismatch;

fn cut(id: &str, source: &str, size: i64) -> Reply {
    Reply::Ok(Body::Snapshot {
        id: id.into(),
        source: source.into(),
        size,
        ready: true,
        created: None,
    })
}

fn clone_of(name: u16, of: Vol, mib: u32) -> Call {
    Call::CreateVolume { name, mib, limit: mib, source: Some(Source::Volume(of)) }
}

#[test]
fn a_valid_clone_or_restore_refused_without_a_reason_breaks_the_support_must() {
    let mut m = Model::new(caps());
    assert!(rules_of(&mut m, create(0, 2), ok_volume("a", 2 * MIB)).is_empty());
    // No range, or the source's own size: no row gives these codes for it.
    for (name, code) in
        [(1, Code::FailedPrecondition), (2, Code::InvalidArgument), (3, Code::Unimplemented)]
    {
        assert_eq!(
            rules_of(&mut m, clone_of(name, v(0, 0), 0), error(code)),
            [Rule::CloneSupported]
        );
    }
    assert_eq!(
        rules_of(&mut m, clone_of(4, v(0, 0), 2), error(Code::FailedPrecondition)),
        [Rule::CloneSupported]
    );
    // The plugin's own: the range's row, codes that may pass by themselves, and a server's
    // failure (UNKNOWN, INTERNAL: no condition named).
    for (name, code) in [
        (13, Code::Internal),
        (14, Code::Unknown),
        (5, Code::OutOfRange),
        (6, Code::ResourceExhausted),
        (7, Code::Unavailable),
        (8, Code::Aborted),
        (9, Code::DeadlineExceeded),
    ] {
        assert!(rules_of(&mut m, clone_of(name, v(0, 0), 0), error(code)).is_empty(), "{code:?}");
    }
    // Smaller than its source: any refusal.
    assert!(rules_of(&mut m, clone_of(10, v(0, 0), 1), error(Code::Internal)).is_empty());
    // A restore: its own sentence, the snapshot's volume deleted or not.
    let snap = Call::CreateSnapshot { name: 0, source: v(0, 0) };
    assert!(rules_of(&mut m, snap, cut("s", "a", 2 * MIB)).is_empty());
    let restore = |name| Call::CreateVolume {
        name,
        mib: 0,
        limit: 0,
        source: Some(Source::Snapshot(Snap { name: 0, nth: 0 })),
    };
    assert!(rules_of(&mut m, restore(15), error(Code::Unknown)).is_empty());
    assert_eq!(
        rules_of(&mut m, restore(11), error(Code::InvalidArgument)),
        [Rule::RestoreSupported]
    );
    assert!(rules_of(&mut m, Call::DeleteVolume(v(0, 0)), Reply::Ok(Body::Empty)).is_empty());
    assert_eq!(
        rules_of(&mut m, restore(12), error(Code::FailedPrecondition)),
        [Rule::RestoreSupported]
    );
}

#[test]
fn a_refusal_that_lasts_is_held_on_the_same_request_and_leaves_its_name_free() {
    let mut m = Model::new(caps());
    assert!(rules_of(&mut m, create(0, 2), ok_volume("a", 2 * MIB)).is_empty());
    let small = clone_of(1, v(0, 0), 1);
    assert!(rules_of(&mut m, small, error(Code::OutOfRange)).is_empty());
    // The name is free: asked again, the same way or another.
    assert!(m.enabled(&small));
    let made = |id: &str, capacity: i64| {
        Reply::Ok(Body::Volume { id: id.into(), capacity, source: Some((false, "a".into())) })
    };
    assert_eq!(rules_of(&mut m, small, made("b", MIB)), [Rule::RefusalLasts]);
    // A plugin that changed its mind to a volume the reason does not rule out: taken.
    let small = clone_of(2, v(0, 0), 1);
    assert!(rules_of(&mut m, small, error(Code::OutOfRange)).is_empty());
    assert!(rules_of(&mut m, small, error(Code::OutOfRange)).is_empty());
    assert!(rules_of(&mut m, small, made("c", 2 * MIB)).is_empty());
    // Another request of a refused name: no ALREADY_EXISTS, no volume of the refused source.
    let small = clone_of(3, v(0, 0), 1);
    assert!(rules_of(&mut m, small, error(Code::OutOfRange)).is_empty());
    assert_eq!(rules_of(&mut m, create(3, 0), error(Code::AlreadyExists)), [Rule::RefusedNoTrace]);
    let small = clone_of(4, v(0, 0), 1);
    assert!(rules_of(&mut m, small, error(Code::OutOfRange)).is_empty());
    assert_eq!(rules_of(&mut m, create(4, 0), made("d", 2 * MIB)), [Rule::RefusedNoTrace]);
    let small = clone_of(5, v(0, 0), 1);
    assert!(rules_of(&mut m, small, error(Code::OutOfRange)).is_empty());
    assert!(rules_of(&mut m, create(5, 0), ok_volume("e", MIB)).is_empty());
    // A refusal whose reason may pass: the name is not used again.
    let small = clone_of(6, v(0, 0), 1);
    assert!(rules_of(&mut m, small, error(Code::Unavailable)).is_empty());
    assert!(!m.enabled(&small));
}

#[test]
fn a_snapshot_named_in_a_mismatched_group_delete_is_held_to_stand() {
    let mut m = Model::new(caps());
    assert!(rules_of(&mut m, create(0, 1), ok_volume("a", MIB)).is_empty());
    assert!(rules_of(&mut m, create(1, 1), ok_volume("b", MIB)).is_empty());
    let snap = Call::CreateSnapshot { name: 0, source: v(0, 0) };
    assert!(rules_of(&mut m, snap, cut("lone", "a", MIB)).is_empty());
    let members = vec![("g-a".to_owned(), "a".to_owned()), ("g-b".to_owned(), "b".to_owned())];
    let described = vec![];
    let group = Reply::Ok(Body::Group { id: "g".into(), members, bound: vec![true; 2], described });
    let g = Grp { name: 0, nth: 0 };
    assert!(
        rules_of(&mut m, Call::CreateGroup { name: 0, vols: [v(0, 0), v(1, 0)] }, group).is_empty()
    );
    let lone = Snap { name: 0, nth: 0 };
    let mismatched = Call::DeleteGroupMismatch { group: g, ids: Mismatch::Lone(lone) };
    assert!(m.enabled(&mismatched));
    // Refused as the row says: the group stands.
    assert!(rules_of(&mut m, mismatched, error(Code::InvalidArgument)).is_empty());
    assert!(m.groups[&g].life == Life::Alive);
    // Taken: the group is gone, the lone snapshot stands; found gone, the list's sentence.
    assert!(rules_of(&mut m, mismatched, Reply::Ok(Body::Empty)).is_empty());
    assert!(m.groups[&g].life == Life::Dead);
    assert_eq!(
        rules_of(&mut m, Call::GetSnapshot(lone), error(Code::NotFound)),
        [Rule::GroupDeleteNamedKept]
    );
}
