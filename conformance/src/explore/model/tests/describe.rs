//! Group snapshots and every read of an object held to what earlier answers said of it: a
//! group's name taken again, its snapshots listed while it stands and gone once deleted, each
//! described (alone, in a listing, by its group) with the group's id, its source and its
//! creation time as cut; a volume's content source as it was made.

use super::*;

#[test]
fn a_volume_read_names_the_source_it_was_made_from_or_none() {
    let mut m = Model::new(caps());
    let (a, b) = (v(0, 0), v(1, 0));
    assert!(rules_of(&mut m, create(0, 1), ok_volume("a", MIB)).is_empty());
    let clone = Call::CreateVolume { name: 1, mib: 0, limit: 0, source: Some(Source::Volume(a)) };
    let made = Reply::Ok(Body::Volume { id: "b".into(), capacity: MIB, source: None });
    assert!(rules_of(&mut m, clone, made).is_empty());
    let got = |id: &str, source: Option<(bool, &str)>| {
        let source = source.map(|(k, s)| (k, s.to_owned()));
        Reply::Ok(Body::Got(Listed { id: id.into(), capacity: MIB, source, on_node: None }))
    };
    // No content_source (OPTIONAL), or the one it was made from: as it is.
    assert!(rules_of(&mut m, Call::GetVolume(b), got("b", None)).is_empty());
    assert!(rules_of(&mut m, Call::GetVolume(b), got("b", Some((false, "a")))).is_empty());
    // Another source, or one for a volume made empty: another volume under that id.
    let wrong = [
        (b, got("b", Some((true, "a")))),
        (b, got("b", Some((false, "x")))),
        (a, got("a", Some((false, "b")))),
    ];
    for (vol, reply) in wrong {
        assert_eq!(rules_of(&mut m, Call::GetVolume(vol), reply), [Rule::VolumeDescribedSame]);
    }
}

#[test]
fn group_snapshots_are_held_to_their_sentences() {
    let mut m = Model::new(caps());
    let (a, b) = (v(0, 0), v(1, 0));
    assert!(rules_of(&mut m, create(0, 1), ok_volume("a", MIB)).is_empty());
    assert!(rules_of(&mut m, create(1, 1), ok_volume("b", MIB)).is_empty());
    let group = |id: &str| {
        let members =
            vec![(format!("{id}-a"), "a".to_owned()), (format!("{id}-b"), "b".to_owned())];
        let described = members.iter().map(|(s, v)| member(s, v, id)).collect();
        Reply::Ok(Body::Group { id: id.into(), members, bound: vec![true; 2], described })
    };
    let cut = Call::CreateGroup { name: 0, vols: [a, b] };
    assert!(rules_of(&mut m, cut, group("g")).is_empty());
    // The same name and volumes again: the same group; another group breaks the retry.
    assert!(rules_of(&mut m, cut, group("g")).is_empty());
    assert_eq!(rules_of(&mut m, cut, group("h")), [Rule::GroupRetrySame]);
    // The same name over the volumes the other way round: the row's ALREADY_EXISTS.
    let swapped = Call::CreateGroup { name: 0, vols: [b, a] };
    assert_eq!(
        rules_of(&mut m, swapped, group("g")),
        [Rule::Row("CreateVolumeGroupSnapshot", rules::GROUP_INCOMPATIBLE)]
    );
    // Its snapshots listed while it stands; gone once it is deleted.
    let all = Call::ListSnapshots { filter: Filter::All, max_entries: 0 };
    let listed = |ids: &[&str]| {
        let entries = ids
            .iter()
            .map(|id| member(id, if id.ends_with("-a") { "a" } else { "b" }, "g"))
            .collect();
        Reply::Ok(Body::Snapshots(Listing {
            entries,
            end: End::Complete,
            last_page: ids.len(),
            unpaged: None,
        }))
    };
    assert!(rules_of(&mut m, all, listed(&["g-a", "g-b"])).is_empty());
    assert_eq!(rules_of(&mut m, all, listed(&["g-a"])), [Rule::SnapshotsListed]);
    // Each described as its group's answer did: a listing without its group_snapshot_id, or
    // with another source, breaks the rules of every description.
    let mut stray = listed(&["g-a", "g-b"]);
    if let Reply::Ok(Body::Snapshots(l)) = &mut stray {
        l.entries[0].group.clear();
        l.entries[1].source = "a".into();
    }
    assert_eq!(rules_of(&mut m, all, stray), [Rule::SnapshotGroupCarried, Rule::SnapshotsCurrent]);
    let g = crate::explore::call::Grp { name: 0, nth: 0 };
    // GetSnapshot of one alone: the same rules, another creation time too, and ready_to_use
    // back to false a note.
    let get = Call::Member { group: g, nth: 0, delete: false };
    let got = |f: &dyn Fn(&mut ListedSnapshot)| {
        let mut e = member("g-a", "a", "g");
        f(&mut e);
        Reply::Ok(Body::GotSnapshot(e))
    };
    assert!(rules_of(&mut m, get, got(&|_| ())).is_empty());
    assert_eq!(
        rules_of(&mut m, get, got(&|e| e.created = Some((9, 9)))),
        [Rule::SnapshotDescribedSame]
    );
    assert_eq!(rules_of(&mut m, get, got(&|e| e.group.clear())), [Rule::SnapshotGroupCarried]);
    assert_eq!(rules_of(&mut m, get, got(&|e| e.ready = false)), [Rule::SnapshotReadyKept]);
    assert!(rules_of(&mut m, get, got(&|_| ())).is_empty());
    // Again, later, answered with other snapshots: not the corresponding response.
    let other = Reply::Ok(Body::Group {
        id: "g".into(),
        members: vec![("g-a".into(), "a".into()), ("g-x".into(), "b".into())],
        bound: vec![true; 2],
        described: Vec::new(),
    });
    assert_eq!(rules_of(&mut m, cut, other), [Rule::GroupRetrySame]);
    // One of its snapshots alone, while it stands: found; deleted alone, the row's
    // INVALID_ARGUMENT ("CAN NOT be deleted stand alone").
    let alone = |delete| Call::Member { group: g, nth: 1, delete };
    assert!(rules_of(&mut m, alone(false), Reply::Ok(Body::Empty)).is_empty());
    assert_eq!(rules_of(&mut m, alone(false), error(Code::NotFound)), [Rule::SnapshotIdFound]);
    assert!(rules_of(&mut m, alone(true), error(Code::InvalidArgument)).is_empty());
    assert_eq!(
        rules_of(&mut m, alone(true), Reply::Ok(Body::Empty)),
        [Rule::Row("DeleteSnapshot", rules::IN_GROUP)]
    );
    assert_eq!(rules_of(&mut m, Call::GetGroup(g), error(Code::NotFound)), [Rule::GroupIdFound]);
    assert!(rules_of(&mut m, Call::DeleteGroup(g), Reply::Ok(Body::Empty)).is_empty());
    assert_eq!(rules_of(&mut m, all, listed(&["g-b"])), [Rule::SnapshotDeletedGone]);
    assert_eq!(
        rules_of(&mut m, Call::GetGroup(g), group("g")),
        [Rule::Row("GetVolumeGroupSnapshot", rules::GROUP_NOT_EXIST)]
    );
    assert_eq!(
        rules_of(&mut m, Call::DeleteGroup(g), error(Code::NotFound)),
        [Rule::DeleteGroupIdempotent]
    );
    // Its snapshots' ids, stale once it is deleted: GetSnapshot's NOT_FOUND row, a delete OK.
    assert_eq!(
        rules_of(&mut m, alone(false), Reply::Ok(Body::Empty)),
        [Rule::Row("GetSnapshot", rules::SNAP_NOT_EXIST)]
    );
    assert_eq!(
        rules_of(&mut m, alone(true), error(Code::NotFound)),
        [Rule::DeleteSnapshotIdempotent]
    );
}

#[test]
fn a_group_retried_after_one_of_its_volumes_was_deleted_is_the_same_group() {
    let mut m = Model::new(caps());
    let (a, b) = (v(0, 0), v(1, 0));
    assert!(rules_of(&mut m, create(0, 1), ok_volume("a", MIB)).is_empty());
    assert!(rules_of(&mut m, create(1, 1), ok_volume("b", MIB)).is_empty());
    let members = vec![("g-a".to_owned(), "a".to_owned()), ("g-b".to_owned(), "b".to_owned())];
    let described = members.iter().map(|(s, v)| member(s, v, "g")).collect();
    let group = Reply::Ok(Body::Group { id: "g".into(), members, bound: vec![true; 2], described });
    let cut = Call::CreateGroup { name: 0, vols: [a, b] };
    assert!(rules_of(&mut m, cut, group.clone()).is_empty());
    assert!(rules_of(&mut m, Call::DeleteVolume(b), Reply::Ok(Body::Empty)).is_empty());
    // A CO's retry after a timeout: still a move, still "MUST reply 0 OK" with the same group.
    assert!(m.enabled(&cut));
    assert!(rules_of(&mut m, cut, group).is_empty());
    assert_eq!(rules_of(&mut m, cut, error(Code::NotFound)), [Rule::GroupRetrySame]);
    // A new group of a deleted volume is a move of its own (a stale handle): see below.
    assert!(m.enabled(&Call::CreateGroup { name: 1, vols: [a, b] }));
}

/// A group's snapshot as the group's answers describe it, cut at one time.
fn member(id: &str, source: &str, group: &str) -> ListedSnapshot {
    ListedSnapshot {
        id: id.into(),
        source: source.into(),
        ready: true,
        size: 0,
        created: Some((1, 0)),
        group: group.into(),
    }
}

#[test]
fn a_group_of_a_deleted_volume_is_never_cut_first_time_or_again() {
    let mut m = Model::new(caps());
    let (a, b) = (v(0, 0), v(1, 0));
    assert!(rules_of(&mut m, create(0, 1), ok_volume("a", MIB)).is_empty());
    assert!(rules_of(&mut m, create(1, 1), ok_volume("b", MIB)).is_empty());
    assert!(rules_of(&mut m, Call::DeleteVolume(b), Reply::Ok(Body::Empty)).is_empty());
    let stale = Call::CreateGroup { name: 0, vols: [a, b] };
    assert!(m.enabled(&stale));
    // Refused: not a live volume's NOT_FOUND; the same request may come again.
    assert!(rules_of(&mut m, stale, error(Code::NotFound)).is_empty());
    assert!(m.enabled(&stale));
    let members = vec![("s-a".to_owned(), "a".to_owned())];
    let described = members.iter().map(|(s, v)| member(s, v, "g")).collect();
    let cut = Reply::Ok(Body::Group { id: "g".into(), members, bound: vec![true], described });
    assert_eq!(rules_of(&mut m.clone(), stale, cut.clone()), [Rule::GroupOfDeleted]);
    // Both deleted since: refused again, or cut.
    assert!(rules_of(&mut m, Call::DeleteVolume(a), Reply::Ok(Body::Empty)).is_empty());
    assert!(m.enabled(&stale));
    assert!(rules_of(&mut m.clone(), stale, error(Code::NotFound)).is_empty());
    assert_eq!(rules_of(&mut m, stale, cut), [Rule::GroupOfDeleted]);
    assert!(!m.enabled(&stale));
}
