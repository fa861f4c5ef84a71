//! What is seen at the node held to the history: a readonly publish seen mounted read-write,
//! at once or after a later call; a block volume's target a folder, or a mount point that is
//! no block device; targets that are no mount point not judged; block volumes walked only
//! where the plugin took the first one, and never used as a source.

use tonic::Code;

use super::*;
use crate::explore::model::seen::{BlockWalk, FileKind, Placed, Seen};

/// The rules `call` answered `reply` broke, with what was `seen` after it, and what its target
/// was counted as.
fn seen_rules(
    m: &mut Model,
    call: Call,
    reply: Reply,
    seen: &Seen,
) -> (Vec<Rule>, Option<&'static str>) {
    let mut v = m.judge(&call, &reply);
    let counted = m.judge_seen(&mut v, &call, &reply, seen);
    (v.broken.into_iter().map(|b| b.rule).collect(), counted.into_iter().next())
}

fn placed(kind: FileKind, mount: Option<bool>) -> Seen {
    Seen { target: Some(Placed { kind: Some(kind), mount }), ..Seen::default() }
}

fn target_ok() -> Reply {
    Reply::Ok(Body::Target { exists: Some(true), gone: Vec::new() })
}

fn removed() -> Reply {
    Reply::Ok(Body::Target { exists: Some(false), gone: Vec::new() })
}

/// Volume name #`name` made, published to the node and staged.
fn ready(m: &mut Model, name: u16) -> Vol {
    let vol = v(name, 0);
    let (rules, _) =
        seen_rules(m, create(name, 1), ok_volume(&format!("v{name}"), MIB), &Seen::default());
    assert!(rules.is_empty());
    for call in
        [Call::ControllerPublish { vol, readonly: false, own: true }, Call::Stage { vol, path: 0 }]
    {
        assert!(rules_of(m, call, Reply::Ok(Body::Empty)).is_empty());
    }
    vol
}

#[test]
fn a_readonly_publish_stays_read_only_across_later_calls() {
    let mut m = Model::new(caps());
    // Name #2: SINGLE_NODE_MULTI_WRITER, so a second target is the mode's own.
    let vol = ready(&mut m, 2);
    let ro = Call::Publish { vol, target: 0, readonly: true };
    let mounted = |read_only| placed(FileKind::Folder, Some(read_only));
    assert_eq!(
        seen_rules(&mut m, ro, target_ok(), &mounted(true)),
        (vec![], Some("readonly target, mounted read-only"))
    );
    assert!(m.seen.readonly_mounts.contains(&(vol, 0)));
    // The retry sees it again; a read-write target beside it leaves it read-only.
    assert!(seen_rules(&mut m, ro, target_ok(), &mounted(true)).0.is_empty());
    let rw = Call::Publish { vol, target: 1, readonly: false };
    let kept = Seen { watched: vec![(vol, 0, Some(true))], ..Seen::default() };
    assert!(seen_rules(&mut m, rw, target_ok(), &kept).0.is_empty());
    // Asked read-write at that very target (its row's ALREADY_EXISTS is owed): not this rule's,
    // and no longer watched.
    let flip = Call::Publish { vol, target: 0, readonly: false };
    let rw_now = Seen { watched: vec![(vol, 0, Some(false))], ..Seen::default() };
    let broken = seen_rules(&mut m.clone(), flip, target_ok(), &rw_now).0;
    assert_eq!(broken, [Rule::Row("NodePublishVolume", rules::PUBLISHED_INCOMPATIBLE)]);
    // Unpublished at the other target: target #0 seen read-write now breaks the rule.
    let un = Call::Unpublish { vol, target: 1 };
    let flipped = Seen { watched: vec![(vol, 0, Some(false))], ..Seen::default() };
    assert_eq!(seen_rules(&mut m, un, removed(), &flipped).0, [Rule::ReadonlyPublished]);
    // No longer a mount point: no longer watched, nothing judged.
    let gone = Seen { watched: vec![(vol, 0, None)], ..Seen::default() };
    let stats = Call::Stats { vol, at: At::Target(0) };
    assert!(seen_rules(&mut m, stats, Reply::Ok(Body::Empty), &gone).0.is_empty());
    assert!(m.seen.readonly_mounts.is_empty());
    // Unpublished: a watched target of a publication undone is let go, whatever is seen.
    assert!(seen_rules(&mut m, ro, target_ok(), &mounted(true)).0.is_empty());
    let undone = Seen { watched: vec![(vol, 0, Some(false))], ..Seen::default() };
    let un = Call::Unpublish { vol, target: 0 };
    assert!(seen_rules(&mut m, un, removed(), &undone).0.is_empty());
    assert!(m.seen.readonly_mounts.is_empty());
    // Republished readonly where it was: mounted read-write at once.
    assert_eq!(seen_rules(&mut m, ro, target_ok(), &mounted(false)).0, [Rule::ReadonlyPublished]);
}

#[test]
fn what_cannot_be_seen_is_not_judged() {
    let mut m = Model::new(caps());
    let vol = ready(&mut m, 0);
    // A plugin that makes a folder and mounts nothing: counted apart, not judged.
    let ro = Call::Publish { vol, target: 0, readonly: true };
    assert_eq!(
        seen_rules(&mut m, ro, target_ok(), &placed(FileKind::Folder, None)),
        (vec![], Some("readonly target, not a mount point (not judged)"))
    );
    assert!(m.seen.readonly_mounts.is_empty());
    // A read-write publish mounted read-write, a refused publish: nothing to hold.
    let mut m = Model::new(caps());
    let vol = ready(&mut m, 0);
    let rw = Call::Publish { vol, target: 0, readonly: false };
    let seen = placed(FileKind::Folder, Some(false));
    assert_eq!(seen_rules(&mut m, rw, target_ok(), &seen), (vec![], None));
    let ro = Call::Publish { vol, target: 1, readonly: true };
    let refused = error(Code::FailedPrecondition);
    assert_eq!(seen_rules(&mut m, ro, refused, &seen), (vec![], None));
}

#[test]
fn block_volumes_are_walked_where_served_and_placed_as_devices() {
    let mut m = Model::new(caps());
    m.seen.block = BlockWalk::Unknown;
    assert!(!m.block_for(3, true) && m.block_for(4, true) && !m.block_for(4, false));
    let vol = ready(&mut m, 4);
    assert_eq!(m.seen.block, BlockWalk::Served);
    assert!(m.is_block(vol));
    // Never a source: no clone, snapshot or group of it.
    let clone = Call::CreateVolume { name: 5, mib: 0, limit: 0, source: Some(Source::Volume(vol)) };
    assert!(!m.enabled(&clone));
    assert!(!m.enabled(&Call::CreateSnapshot { name: 0, source: vol }));
    let publish = |target| Call::Publish { vol, target, readonly: false };
    let cases = [
        (FileKind::Folder, None, vec![Rule::BlockPlaced]),
        (FileKind::BlockDevice, Some(false), vec![]),
        (FileKind::Other, Some(false), vec![Rule::BlockPlaced]),
        (FileKind::Other, None, vec![]),
    ];
    for (kind, mount, rules) in cases {
        let mut m = m.clone();
        assert_eq!(seen_rules(&mut m, publish(0), target_ok(), &placed(kind, mount)).0, rules);
    }
    // Nothing there: the block sentence too.
    let nothing = Reply::Ok(Body::Target { exists: Some(false), gone: Vec::new() });
    let seen = Seen { target: Some(Placed::default()), ..Seen::default() };
    assert_eq!(seen_rules(&mut m, publish(0), nothing, &seen).0, [Rule::BlockPlaced]);
    // A plugin that refuses the first block volume is walked with mount volumes only.
    let mut m = Model::new(caps());
    m.seen.block = BlockWalk::Unknown;
    let (rules, _) =
        seen_rules(&mut m, create(4, 1), error(Code::InvalidArgument), &Seen::default());
    assert!(rules.is_empty());
    assert_eq!(m.seen.block, BlockWalk::Off);
    assert!(!m.block_for(9, true));
}

#[test]
fn a_read_write_mount_stays_one_until_its_own_unpublish() {
    let mut m = Model::new(caps());
    // Name #2: SINGLE_NODE_MULTI_WRITER, so a second target is the mode's own.
    let vol = ready(&mut m, 2);
    let rw = |target| Call::Publish { vol, target, readonly: false };
    let mounted = placed(FileKind::Folder, Some(false));
    assert!(seen_rules(&mut m, rw(0), target_ok(), &mounted).0.is_empty());
    assert!(seen_rules(&mut m, rw(1), target_ok(), &mounted).0.is_empty());
    assert!(m.seen.rw_mounts.contains(&(vol, 0)) && m.seen.rw_mounts.contains(&(vol, 1)));
    // Target #0 unpublished: #1 still a mount point, or no longer one.
    let un = Call::Unpublish { vol, target: 0 };
    let kept = Seen { watched: vec![(vol, 1, Some(false))], ..Seen::default() };
    assert!(seen_rules(&mut m.clone(), un, removed(), &kept).0.is_empty());
    let gone = Seen { watched: vec![(vol, 1, None)], ..Seen::default() };
    assert_eq!(seen_rules(&mut m.clone(), un, removed(), &gone).0, [Rule::OtherTargetsKept]);
    // Another call that takes it away: the mounted directory is no longer at the target.
    let stats = Call::Stats { vol, at: At::Target(0) };
    assert_eq!(
        seen_rules(&mut m.clone(), stats, Reply::Ok(Body::Empty), &gone).0,
        [Rule::TargetPlaced]
    );
    // The volume's own NodeUnstageVolume out of order: what it leaves is the plugin's.
    let unstage = Call::Unstage(vol);
    assert!(
        !seen_rules(&mut m, unstage, Reply::Ok(Body::Empty), &gone)
            .0
            .iter()
            .any(|r| matches!(r, Rule::TargetPlaced | Rule::OtherTargetsKept))
    );
    assert!(!m.seen.rw_mounts.contains(&(vol, 1)));
}
