//! The model's properties for the calls that change a live volume: ControllerExpandVolume with
//! `limit_bytes` (its answer and every later read held to the last limit answered OK), and a
//! ControllerModifyVolume refused INVALID_ARGUMENT, after which the volume is held unmodified
//! (its own CreateVolume again still met); and the walk reaches both.

use tonic::Code;

use super::*;

fn grown(capacity: i64) -> Reply {
    Reply::Ok(Body::Expanded { capacity, node: false })
}

fn got(capacity: i64) -> Reply {
    Reply::Ok(Body::Got(Listed { id: "a".into(), capacity, source: None, on_node: Some(false) }))
}

#[test]
fn an_expansion_with_a_limit_binds_its_answer_and_every_later_read() {
    let a = v(0, 0);
    let mut m = Model::new(caps());
    assert!(rules_of(&mut m, create(0, 2), ok_volume("a", 2 * MIB)).is_empty());
    let exact = |mib| Call::Expand { vol: a, mib, limit: mib };
    // No limit first, then an exact size: within it, nothing broken.
    assert!(rules_of(&mut m, Call::Expand { vol: a, mib: 3, limit: 0 }, grown(3 * MIB)).is_empty());
    assert_eq!(
        m.state_of(&exact(4)),
        "an exact size (limit_bytes = required_bytes), a second growth"
    );
    assert!(rules_of(&mut m, exact(4), grown(4 * MIB)).is_empty());
    assert!(rules_of(&mut m, Call::GetVolume(a), got(4 * MIB)).is_empty());
    // The second exact growth overshoots: its own answer, or a later read, over the limit.
    assert_eq!(
        m.state_of(&exact(5)),
        "an exact size (limit_bytes = required_bytes), a third growth or later"
    );
    let mut answer = m.clone();
    assert_eq!(rules_of(&mut answer, exact(5), grown(8 * MIB)), [Rule::CapacityAtMost]);
    assert!(rules_of(&mut m, exact(5), grown(5 * MIB)).is_empty());
    assert_eq!(rules_of(&mut m, Call::GetVolume(a), got(8 * MIB)), [Rule::CapacityAtMost]);
    assert_eq!(
        rules_of(&mut m, Call::ListVolumes { max_entries: 0 }, listing(&[("a", 8 * MIB)])),
        [Rule::CapacityAtMost]
    );
    // A later growth with no limit lifts it; one with a limit above binds to that.
    assert!(rules_of(&mut m, Call::Expand { vol: a, mib: 6, limit: 8 }, grown(7 * MIB)).is_empty());
    assert_eq!(rules_of(&mut m, Call::GetVolume(a), got(9 * MIB)), [Rule::CapacityAtMost]);
    assert!(rules_of(&mut m, Call::Expand { vol: a, mib: 7, limit: 0 }, grown(9 * MIB)).is_empty());
    assert!(rules_of(&mut m, Call::GetVolume(a), got(9 * MIB)).is_empty());
    // A limit it cannot meet refused OUT_OF_RANGE: allowed, and the size stays.
    assert!(rules_of(&mut m, exact(10), error(Code::OutOfRange)).is_empty());
    assert!(rules_of(&mut m, Call::GetVolume(a), got(9 * MIB)).is_empty());
    // A late retry of the exact size 4 MiB, grown past since: its limit cannot be met, so a
    // refusal is no breach of idempotency (nor the SHOULD of a size it has).
    assert!(rules_of(&mut m, exact(4), error(Code::OutOfRange)).is_empty());
    // A late retry that can still be met is the same request again: OK again.
    assert_eq!(
        rules_of(&mut m, Call::Expand { vol: a, mib: 7, limit: 0 }, error(Code::Internal)),
        [Rule::ExpandIdempotent]
    );
}

#[test]
fn a_refused_modification_leaves_the_volume_as_its_create_made_it() {
    let a = v(0, 0);
    let again = create(0, 2);
    let refused = Call::ModifyUnsupported(a);
    // Made, and its CreateVolume again met.
    let made = || {
        let mut m = Model::new(caps());
        assert!(rules_of(&mut m, create(0, 2), ok_volume("a", 2 * MIB)).is_empty());
        assert!(rules_of(&mut m, create(0, 2), ok_volume("a", 2 * MIB)).is_empty());
        m
    };
    // Refused INVALID_ARGUMENT: the same CreateVolume again is met (OK), or the refused call
    // changed the volume (ALREADY_EXISTS: its mutable parameters no longer the request's).
    let mut m = made();
    assert_eq!(m.state_of(&refused), "a key no plugin takes among the suite's");
    assert!(rules_of(&mut m, refused, error(Code::InvalidArgument)).is_empty());
    assert!(m.enabled(&again));
    assert_eq!(m.state_of(&again), "name held, a ControllerModifyVolume of it refused");
    assert!(rules_of(&mut m, again, ok_volume("a", 2 * MIB)).is_empty());
    assert_eq!(rules_of(&mut m, again, error(Code::AlreadyExists)), [Rule::ModifyRefusedKept]);
    // The suite's own keys refused alike: the same row, the same rule.
    let mut m = made();
    assert!(rules_of(&mut m, Call::Modify(a), error(Code::InvalidArgument)).is_empty());
    assert_eq!(rules_of(&mut m, again, error(Code::AlreadyExists)), [Rule::ModifyRefusedKept]);
    // Without a refused modification it is the retry's own rule; and so it is without the
    // retry met before the refusal (a plugin that refuses every retry of the volume), or with
    // an expansion since (its size changed: the retry may be refused for another reason).
    let mut m = made();
    assert_eq!(rules_of(&mut m, again, error(Code::AlreadyExists)), [Rule::CreateRetrySame]);
    let mut m = Model::new(caps());
    assert!(rules_of(&mut m, create(0, 2), ok_volume("a", 2 * MIB)).is_empty());
    assert!(rules_of(&mut m, refused, error(Code::InvalidArgument)).is_empty());
    assert_eq!(rules_of(&mut m, again, error(Code::AlreadyExists)), [Rule::CreateRetrySame]);
    let mut m = made();
    assert!(rules_of(&mut m, Call::Expand { vol: a, mib: 3, limit: 0 }, grown(3 * MIB)).is_empty());
    assert!(rules_of(&mut m, refused, error(Code::InvalidArgument)).is_empty());
    assert_eq!(rules_of(&mut m, again, error(Code::AlreadyExists)), [Rule::CreateRetrySame]);
    // An OK with the unknown key is not judged, and what it applied is the plugin's: the
    // CreateVolume again may then be either answer. A refusal of another code (a timeout may
    // come after the work) likewise.
    for reply in [Reply::Ok(Body::Empty), error(Code::DeadlineExceeded)] {
        let mut m = made();
        assert!(rules_of(&mut m, refused, reply).is_empty());
        assert!(rules_of(&mut m, again, error(Code::AlreadyExists)).is_empty());
    }
    assert!(!m.enabled(&Call::ModifyUnsupported(v(0, 1))), "only of a live volume");
    assert_eq!(Rule::ModifyRefusedKept.sentence().level, crate::sentence::Level::Must);
}

#[test]
fn the_walk_grows_one_volume_to_exact_sizes_and_retries_a_create_after_a_refused_modify() {
    let mut states = BTreeSet::new();
    for seed in 0..40 {
        let (calls, broken, of) = walk(seed, 250);
        assert!(broken.is_empty(), "seed {seed}: {broken:#?}");
        states.extend(of);
        assert!(!calls.is_empty());
    }
    for state in [
        // A refused modification, then the volume's own CreateVolume again.
        "name held, a ControllerModifyVolume of it refused",
        "an exact size (limit_bytes = required_bytes), a second growth",
        "an exact size (limit_bytes = required_bytes), a third growth or later",
        "limit_bytes above required_bytes",
    ] {
        assert!(states.contains(state), "{state}: {states:?}");
    }
}
