//! The model's properties for sizes at the edges: NodeExpandVolume in every shape (no range,
//! below the volume's size, at it, with a limit) never lowers the floor and raises it to what it
//! was asked; a node refusal where the file system is already as big is a note; an expansion
//! refused OUT_OF_RANGE or FAILED_PRECONDITION is never read back at the size refused, and
//! other codes leave the size unknown; and the walk asks every such shape.

use tonic::Code;

use super::*;
use crate::explore::call::FAR;

/// A model with volume a (id "a", 4 MiB, made for 4 MiB) controller-published and staged.
fn staged() -> Model {
    let mut m = Model::new(caps());
    let a = v(0, 0);
    let ok = || Reply::Ok(Body::Empty);
    assert!(rules_of(&mut m, create(0, 4), ok_volume("a", 4 * MIB)).is_empty());
    let publish = Call::ControllerPublish { vol: a, readonly: false, own: true };
    assert!(rules_of(&mut m, publish, ok()).is_empty());
    assert!(rules_of(&mut m, Call::Stage { vol: a, path: 0 }, ok()).is_empty());
    m
}

fn got(capacity: i64) -> Reply {
    Reply::Ok(Body::Got(Listed { id: "a".into(), capacity, source: None, on_node: Some(true) }))
}

#[test]
fn a_node_expansion_never_lowers_the_floor_and_a_later_read_below_it_breaks_it() {
    let a = v(0, 0);
    let node = |mib, limit| Call::NodeExpand { vol: a, mib, limit };
    let mut m = staged();
    // Every shape is asked of a staged volume of known size, and each is counted apart.
    for (call, words) in [
        (node(0, 0), "no capacity_range"),
        (node(3, 0), "one MiB or more below its size"),
        (node(4, 0), "at its size, never grown by the controller"),
        (node(4, 4), "limit_bytes at or above its size"),
        (node(4, 5), "limit_bytes at or above its size"),
    ] {
        assert!(m.enabled(&call), "{call}");
        assert_eq!(m.state_of(&call), words, "{call}");
    }
    assert!(!m.enabled(&node(5, 0)), "never above the size the controller gave");
    // Below its size, answered OK with a capacity below the floor (the node's word on its
    // file system; its own range is the answer checks'): nothing broken, nothing lowered.
    assert!(rules_of(&mut m, node(3, 0), Reply::Ok(Body::Capacity(3 * MIB))).is_empty());
    assert_eq!(m.vol(a).map(|s| (s.floor, s.capacity)), Some((4 * MIB, 4 * MIB)));
    // A read after it holds the floor: the record shrunk to the node's size breaks it.
    assert_eq!(rules_of(&mut m, Call::GetVolume(a), got(3 * MIB)), [Rule::CapacityAtLeast]);
    assert!(rules_of(&mut m, Call::GetVolume(a), got(4 * MIB)).is_empty());
    // No range: OK or any refusal (the field is OPTIONAL; nothing says it must be taken).
    assert!(rules_of(&mut m, node(0, 0), error(Code::InvalidArgument)).is_empty());
    assert!(rules_of(&mut m, node(0, 0), Reply::Ok(Body::Capacity(0))).is_empty());
    // At a size its file system already has (made at 4 MiB): a refusal is the SHOULD's note.
    assert_eq!(rules_of(&mut m, node(4, 5), error(Code::OutOfRange)), [Rule::NodeExpandSmaller]);
    assert_eq!(Rule::NodeExpandSmaller.sentence().level, crate::sentence::Level::Should);
}

#[test]
fn a_node_expansion_after_the_controllers_raises_the_floor_to_what_it_was_asked() {
    let a = v(0, 0);
    let mut m = Model::new(Caps { online: true, ..caps() });
    let ok = || Reply::Ok(Body::Empty);
    // Made with no range (1 MiB given: no floor), grown by the controller to 6 MiB, staged.
    assert!(rules_of(&mut m, create(0, 0), ok_volume("a", MIB)).is_empty());
    let grow = Call::Expand { vol: a, mib: 6, limit: 0 };
    let grown = Reply::Ok(Body::Expanded { capacity: 6 * MIB, node: true });
    assert!(rules_of(&mut m, grow, grown).is_empty());
    let publish = Call::ControllerPublish { vol: a, readonly: false, own: true };
    assert!(rules_of(&mut m, publish, ok()).is_empty());
    assert!(rules_of(&mut m, Call::Stage { vol: a, path: 0 }, ok()).is_empty());
    let node = |mib| Call::NodeExpand { vol: a, mib, limit: 0 };
    assert_eq!(m.state_of(&node(6)), "at the controller's size, before the node grew it");
    assert_eq!(m.state_of(&node(1)), "a size from before the controller's expansion");
    // Not yet grown on the node: a refusal at the controller's size is no note (the file
    // system is smaller than asked), nor at the old size (made at 1 MiB, it is that big).
    assert!(rules_of(&mut m, node(6), error(Code::Internal)).is_empty());
    assert_eq!(rules_of(&mut m, node(1), error(Code::Internal)), [Rule::NodeExpandSmaller]);
    assert!(rules_of(&mut m, node(6), Reply::Ok(Body::Capacity(6 * MIB))).is_empty());
    assert_eq!(m.state_of(&node(6)), "at the controller's size, the node grown to it before");
    // The same again is OK (idempotent); the floor is what the node was asked.
    assert_eq!(rules_of(&mut m, node(6), error(Code::Internal)), [Rule::NodeExpandIdempotent]);
    assert_eq!(m.vol(a).map(|s| s.floor), Some(6 * MIB));
}

#[test]
fn an_expansion_refused_for_its_range_or_in_use_is_never_read_back_at_the_size_refused() {
    let a = v(0, 0);
    let listed =
        |capacity| complete(vec![Listed { id: "a".into(), capacity, source: None, on_node: None }]);
    for (code, rule) in [
        (Code::OutOfRange, Some(Rule::ExpandRefusedRangeKept)),
        (Code::FailedPrecondition, Some(Rule::ExpandRefusedKept)),
        // A code that may come after the work was done: the size is unknown until read.
        (Code::Internal, None),
        (Code::DeadlineExceeded, None),
    ] {
        let mut m = Model::new(Caps { online: true, ..caps() });
        assert!(rules_of(&mut m, create(0, 2), ok_volume("a", 2 * MIB)).is_empty());
        let far = Call::Expand { vol: a, mib: FAR, limit: 0 };
        assert_eq!(m.state_of(&far), "a size far beyond any pool (2^50 bytes)");
        assert!(rules_of(&mut m, far, error(code)).is_empty(), "{code:?}");
        let at = 1_i64 << 50;
        let expect: Vec<Rule> = rule.into_iter().collect();
        assert_eq!(rules_of(&mut m, Call::GetVolume(a), got(at)), expect, "{code:?}");
        let l = Call::ListVolumes { max_entries: 0 };
        assert_eq!(rules_of(&mut m, l, listed(at)), expect, "{code:?}");
        // Read at its size: nothing; then grown to a size it can give, as any expansion.
        assert!(rules_of(&mut m, Call::GetVolume(a), got(2 * MIB)).is_empty());
        let grow = Call::Expand { vol: a, mib: 3, limit: 0 };
        let grown = Reply::Ok(Body::Expanded { capacity: 3 * MIB, node: false });
        assert!(rules_of(&mut m, grow, grown).is_empty());
        assert!(rules_of(&mut m, Call::GetVolume(a), got(3 * MIB)).is_empty());
        assert_eq!(rules_of(&mut m, Call::GetVolume(a), got(2 * MIB)), [Rule::CapacityAtLeast]);
    }
}

#[test]
fn past_the_pool_sizes_are_one_mib_above_the_maximum_or_past_what_is_free() {
    let a = v(0, 0);
    let mut m = Model::new(Caps { online: true, ..caps() });
    assert!(rules_of(&mut m, create(0, 2), ok_volume("a", 2 * MIB)).is_empty());
    let bounds = Bounds { available: 100 * MIB, max: Some(64 * MIB), min: None };
    let capacity = Call::GetCapacity { with: true };
    assert!(rules_of(&mut m, capacity, Reply::Ok(Body::Bounds(bounds))).is_empty());
    assert_eq!(
        m.state_of(&Call::Expand { vol: a, mib: 65, limit: 0 }),
        "a size at GetCapacity's bounds"
    );
    let free = Call::Expand { vol: a, mib: 103, limit: 0 };
    assert_eq!(m.state_of(&free), "a size past GetCapacity's available_capacity");
    let new = Call::CreateVolume { name: 1, mib: 101, limit: 0, source: None };
    assert_eq!(m.state_of(&new), "a size past GetCapacity's available_capacity");
    // The walk asks them: over a few walks of a plugin that gives at most 64 MiB, the
    // expansions and creations past it, and NodeExpandVolume in each shape.
    let mut calls = Vec::new();
    for seed in 1..=3 {
        let (walked, broken, _) = walk(seed, 1500);
        assert!(broken.is_empty(), "seed {seed}: {broken:?}");
        calls.extend(walked);
    }
    let has = |f: &dyn Fn(&Call) -> bool| calls.iter().any(f);
    assert!(has(&|c| matches!(c, Call::Expand { mib, .. } if *mib == FAR || *mib > 64)));
    assert!(has(&|c| matches!(c, Call::CreateVolume { mib, .. } if *mib > 64)));
    assert!(has(&|c| matches!(c, Call::NodeExpand { mib: 0, limit: 0, .. })));
    assert!(has(&|c| matches!(c, Call::NodeExpand { limit, .. } if *limit > 0)));
}
