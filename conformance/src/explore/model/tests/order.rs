//! The model's properties for calls out of the lifecycle's order, Node calls at paths that are
//! not the volume's, and GetCapacity's bounds: every answer the spec allows is accepted, the
//! plugin is then held to the one it chose, and each wrong answer breaks its rule.

use tonic::Code;

use super::*;
use crate::explore::call::{Elsewhere, NodeRpc};

/// A model with volume a (id "a", 2 MiB) controller-published, staged and published at
/// target #0.
fn in_use(caps: Caps) -> Model {
    let mut m = Model::new(caps);
    let a = v(0, 0);
    let ok = || Reply::Ok(Body::Empty);
    let placed = || Reply::Ok(Body::Target { exists: Some(true), gone: Vec::new() });
    assert!(rules_of(&mut m, create(0, 2), ok_volume("a", 2 * MIB)).is_empty());
    let publish = Call::ControllerPublish { vol: a, readonly: false, own: true };
    assert!(rules_of(&mut m, publish, ok()).is_empty());
    assert!(rules_of(&mut m, Call::Stage { vol: a, path: 0 }, ok()).is_empty());
    let node_publish = Call::Publish { vol: a, target: 0, readonly: false };
    assert!(rules_of(&mut m, node_publish, placed()).is_empty());
    m
}

#[test]
fn a_call_out_of_order_may_be_refused_or_done_and_the_choice_holds() {
    let a = v(0, 0);
    let got = |id: &str| {
        Reply::Ok(Body::Got(Listed {
            id: id.into(),
            capacity: 2 * MIB,
            source: None,
            on_node: Some(true),
        }))
    };
    // DeleteVolume while in use, refused: kept whole, its id still names it.
    let mut m = in_use(caps());
    assert!(m.enabled(&Call::DeleteVolume(a)));
    assert_eq!(m.state_of(&Call::DeleteVolume(a)), "PUBLISHED");
    assert!(rules_of(&mut m, Call::DeleteVolume(a), error(Code::FailedPrecondition)).is_empty());
    assert!(m.vol(a).is_some_and(|s| s.life == Life::Alive && s.chose.refused_in_use));
    assert!(rules_of(&mut m, Call::GetVolume(a), got("a")).is_empty());
    assert_eq!(rules_of(&mut m, Call::GetVolume(a), error(Code::NotFound)), [Rule::RefusedKept]);
    // Done: gone everywhere, on the node too.
    let mut m = in_use(caps());
    assert!(rules_of(&mut m, Call::DeleteVolume(a), Reply::Ok(Body::Empty)).is_empty());
    assert_eq!(m.vol(a).map(VolState::state), Some("DELETED while in use"));
    assert_eq!(
        rules_of(&mut m, Call::GetVolume(a), got("a")),
        [Rule::Row("ControllerGetVolume", rules::NOT_EXIST)]
    );
    let stats = Call::Stats { vol: a, at: At::Target(0) };
    assert!(m.enabled(&stats));
    assert_eq!(
        rules_of(&mut m, stats, Reply::Ok(Body::Empty)),
        [Rule::Row("NodeGetVolumeStats", rules::NOT_EXIST)]
    );
    // NodeUnstageVolume while published: OK unstages (a later unstage is OK, not staged);
    // refused, the staging stands and the normal undo follows.
    let mut m = in_use(caps());
    assert!(m.enabled(&Call::Unstage(a)));
    assert!(rules_of(&mut m, Call::Unstage(a), Reply::Ok(Body::Empty)).is_empty());
    assert!(m.vol(a).is_some_and(|s| !s.staged && s.targets[0].is_some()));
    assert_eq!(rules_of(&mut m, Call::Unstage(a), error(Code::Internal)), [Rule::UnstageNotStaged]);
    let mut m = in_use(caps());
    assert!(rules_of(&mut m, Call::Unstage(a), error(Code::FailedPrecondition)).is_empty());
    assert!(m.vol(a).is_some_and(|s| s.staged && s.life == Life::Alive));
    // ControllerUnpublishVolume while the node uses it: refused, the publication stands.
    let unpublish = Call::ControllerUnpublish { vol: a, all: false };
    assert!(m.enabled(&unpublish));
    assert!(rules_of(&mut m, unpublish, error(Code::FailedPrecondition)).is_empty());
    assert!(m.vol(a).is_some_and(|s| s.published.is_some() && s.life == Life::Alive));
    // ControllerExpandVolume while in use, no ONLINE expansion: refused ("Volume in use"),
    // the volume keeps its size, and a read showing the size asked breaks that.
    let mut m = in_use(Caps { online: false, ..caps() });
    let expand = Call::Expand { vol: a, mib: 4, limit: 0 };
    assert!(m.enabled(&expand));
    assert!(rules_of(&mut m, expand, error(Code::FailedPrecondition)).is_empty());
    assert_eq!(m.vol(a).map(|s| s.capacity), Some(2 * MIB));
    let grown = Reply::Ok(Body::Got(Listed {
        id: "a".into(),
        capacity: 4 * MIB,
        source: None,
        on_node: None,
    }));
    assert_eq!(rules_of(&mut m, Call::GetVolume(a), grown), [Rule::ExpandRefusedKept]);
}

#[test]
fn node_calls_at_paths_that_are_not_the_volumes_leave_what_is_there() {
    let (a, b) = (v(0, 0), v(1, 0));
    let mut m = in_use(caps());
    assert!(rules_of(&mut m, create(1, 1), ok_volume("b", MIB)).is_empty());
    let at = |rpc, at| Call::Elsewhere { vol: b, rpc, at };
    // Statistics of b at a's paths or at a folder of no volume: the row's NOT_FOUND.
    for place in [Elsewhere::Staging(a), Elsewhere::Target(a), Elsewhere::Nowhere] {
        let call = at(NodeRpc::Stats, place);
        assert!(m.enabled(&call), "{call}");
        assert!(rules_of(&mut m, call, error(Code::NotFound)).is_empty());
        assert_eq!(
            rules_of(&mut m, call, Reply::Ok(Body::Empty)),
            [Rule::Row("NodeGetVolumeStats", rules::NOT_EXIST)]
        );
    }
    // b unstaged at a's staging path: b is not staged there, so OK, and a stays staged.
    let unstage = at(NodeRpc::Unstage, Elsewhere::Staging(a));
    assert_eq!(rules_of(&mut m, unstage, error(Code::Internal)), [Rule::UnstageNotStaged]);
    assert!(rules_of(&mut m, unstage, Reply::Ok(Body::Empty)).is_empty());
    assert!(m.vol(a).is_some_and(|s| s.chose.foreign_touched && s.staged));
    assert_eq!(
        rules_of(&mut m, Call::Stats { vol: a, at: At::Staging }, error(Code::NotFound)),
        [Rule::ForeignPathKept]
    );
    // Not at another volume's target ("The CO SHALL ensure uniqueness of target_path per
    // volume"); at a folder of no volume any answer, but an OK leaves a's own targets.
    assert!(!m.enabled(&at(NodeRpc::Unpublish, Elsewhere::Target(a))));
    let unpublish = Call::Elsewhere { vol: a, rpc: NodeRpc::Unpublish, at: Elsewhere::Nowhere };
    assert!(rules_of(&mut m, unpublish, error(Code::NotFound)).is_empty());
    let left = Reply::Ok(Body::Target { exists: Some(true), gone: Vec::new() });
    assert!(rules_of(&mut m, unpublish, left).is_empty());
    let removed = Reply::Ok(Body::Target { exists: Some(false), gone: vec![0] });
    assert_eq!(rules_of(&mut m, unpublish, removed), [Rule::ForeignPathKept]);
    // A second staging path of a: taken (then unstaged there apart) or refused.
    let second = Call::Elsewhere { vol: a, rpc: NodeRpc::Stage, at: Elsewhere::SecondStaging };
    assert!(m.enabled(&second));
    assert!(rules_of(&mut m, second, error(Code::FailedPrecondition)).is_empty());
    assert!(m.vol(a).is_some_and(|s| s.staged && !s.second_staged));
    assert!(rules_of(&mut m, second, Reply::Ok(Body::Empty)).is_empty());
    assert!(m.vol(a).is_some_and(|s| s.second_staged && !s.unused()));
    let unstage_second =
        Call::Elsewhere { vol: a, rpc: NodeRpc::Unstage, at: Elsewhere::SecondStaging };
    assert!(rules_of(&mut m, unstage_second, Reply::Ok(Body::Empty)).is_empty());
    assert!(m.vol(a).is_some_and(|s| s.staged && !s.second_staged));
    assert_eq!(rules_of(&mut m, unstage_second, error(Code::Internal)), [Rule::UnstageNotStaged]);
}

#[test]
fn getcapacity_bounds_the_creations_that_follow_until_the_pool_moves() {
    let mut m = Model::new(caps());
    let bounds = |max| Reply::Ok(Body::Bounds(Bounds { available: 1 << 30, max, min: None }));
    let capacity = Call::GetCapacity { with: true };
    assert!(rules_of(&mut m, capacity, bounds(Some(8 * MIB))).is_empty());
    assert_eq!(m.state_of(&create(0, 8)), "a size at GetCapacity's bounds");
    assert!(rules_of(&mut m, create(0, 8), ok_volume("a", 8 * MIB)).is_empty());
    // The pool moved since: nothing to hold the next creation to.
    assert!(rules_of(&mut m, create(1, 9), ok_volume("b", 9 * MIB)).is_empty());
    assert!(rules_of(&mut m, capacity, bounds(Some(8 * MIB))).is_empty());
    assert_eq!(rules_of(&mut m, create(2, 9), ok_volume("c", 9 * MIB)), [Rule::CapacityMaxSize]);
    // Without the walk's capability, its answer bounds nothing.
    assert!(rules_of(&mut m, Call::GetCapacity { with: false }, bounds(Some(MIB))).is_empty());
    assert!(rules_of(&mut m, create(3, 2), ok_volume("d", 2 * MIB)).is_empty());
    // With several lanes the pool moves under any call.
    let mut m = Model::new(Caps { alone: false, ..caps() });
    assert!(rules_of(&mut m, capacity, bounds(Some(8 * MIB))).is_empty());
    assert!(rules_of(&mut m, create(0, 9), ok_volume("a", 9 * MIB)).is_empty());
}

#[test]
fn clones_and_restores_are_sized_around_their_source() {
    let mut relative = std::collections::BTreeSet::new();
    // A few walks: each size relative to its source is a rare draw of a rare kind.
    for seed in [7, 8, 9] {
        let mut g = Generator::new(seed);
        let mut m = Model::new(caps());
        let mut plugin = Ideal { next: 0 };
        for _ in 0..3000 {
            let Some(call) = g.next(&m) else { break };
            if let Call::CreateVolume { mib, limit, .. } = call {
                assert!(limit == 0 || limit >= mib, "a range no volume meets: {call}");
            }
            if let Call::CreateVolume { source: Some(Source::Volume(src)), mib, limit, .. } = call
                && let Some(s) = m.vol(src).filter(|s| s.life == Life::Alive && s.capacity > 0)
            {
                let of = (s.capacity + MIB - 1) / MIB;
                relative.insert((i64::from(mib) - of, (limit > 0).then(|| i64::from(limit) - of)));
            }
            let reply = plugin.answer(&m, &call);
            assert!(m.judge(&call, &reply).broken.is_empty(), "{call}");
        }
    }
    for dr in -1..=1 {
        assert!(relative.iter().any(|(r, _)| *r == dr), "required {dr}: {relative:?}");
        assert!(relative.iter().any(|(_, l)| *l == Some(dr)), "limit {dr}: {relative:?}");
    }
}
