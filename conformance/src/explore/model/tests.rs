//! Properties of the reference model: a plugin that answers as the spec asks never breaks a
//! rule over thousands of random walks; every answer the spec allows besides is accepted (an
//! unknown capacity, a deleted volume's id given again, a refused delete while snapshots
//! stand, OK or NOT_FOUND to unpublish what is gone); each wrong answer breaks the rule it
//! should; and the same seed gives the same walk.

use std::collections::BTreeSet;

use tonic::Code;

use super::*;
use crate::explore::call::{At, Bounds, Call};
use crate::explore::generate::Generator;
use crate::explore::judge::{Body, End, Listed, ListedSnapshot, Listing, Reply};
use crate::explore::rules::{self, Rule};

fn caps() -> Caps {
    Caps {
        create: true,
        publish: true,
        readonly: true,
        list_volumes: true,
        published_nodes: true,
        get_volume: true,
        expand: true,
        online: true,
        snapshots: true,
        list_snapshots: true,
        get_snapshot: true,
        clone: true,
        node: true,
        stage: true,
        stats: true,
        node_expand: true,
        modify: true,
        groups: true,
        single_node_modes: true,
        capacity: true,
        local: true,
        alone: true,
    }
}

/// The largest volume the ideal plugin makes, as its GetCapacity says.
const IDEAL_MAX: i64 = 64 * MIB;

/// A plugin that answers every call as the spec asks, from the model's own state (read before
/// the model applies the answer): new ids from a counter, sizes as asked (1 MiB when not).
struct Ideal {
    next: u32,
}

impl Ideal {
    fn id(&mut self, kind: &str) -> String {
        self.next += 1;
        format!("{kind}-{}", self.next)
    }

    fn answer(&mut self, m: &Model, call: &Call) -> Reply {
        let ok = || Reply::Ok(Body::Empty);
        let err = |code| Reply::Err { code, message: "as the spec asks".into() };
        let alive = |v: Vol| m.vol(v).is_some_and(|s| s.life == Life::Alive);
        match *call {
            Call::CreateVolume { name, mib, limit, source } => {
                let required = i64::from(mib) * MIB;
                let limit = i64::from(limit) * MIB;
                if let Some(s) =
                    m.current(name).and_then(|v| m.vol(v)).filter(|s| s.life == Life::Alive)
                {
                    let fits = s.source == source
                        && s.capacity >= required
                        && (limit == 0 || s.capacity <= limit);
                    return if fits {
                        Reply::Ok(Body::Volume {
                            id: s.id.clone(),
                            capacity: s.capacity,
                            source: s.answered_source.clone(),
                        })
                    } else {
                        err(Code::AlreadyExists)
                    };
                }
                let floor = match source {
                    Some(x @ (Source::Snapshot(_) | Source::Member(..))) => match m.restorable(x) {
                        Some(y) if y.life == Life::Alive => y.size,
                        _ => return err(Code::NotFound),
                    },
                    Some(Source::Volume(v)) if !alive(v) => return err(Code::NotFound),
                    Some(Source::Volume(v)) => m.vol(v).map_or(0, |s| s.capacity),
                    None => 0,
                };
                // The "Unsupported capacity_range" row: no size meets the range and the source.
                if (limit > 0 && limit < required.max(floor)) || required.max(floor) > IDEAL_MAX {
                    return err(Code::OutOfRange);
                }
                let capacity = required.max(floor).max(if mib == 0 { MIB } else { 0 });
                let capacity = if limit > 0 { capacity.min(limit) } else { capacity };
                let source = source.and_then(|x| match x {
                    Source::Volume(v) => m.vol(v).map(|v| (false, v.id.clone())),
                    y => m.restorable(y).map(|y| (true, y.id.to_owned())),
                });
                Reply::Ok(Body::Volume { id: self.id("vol"), capacity, source })
            }
            Call::ControllerPublish { vol, readonly, own } => match m.vol(vol) {
                Some(s) if s.life != Life::Alive || !own => err(Code::NotFound),
                Some(s) if s.published.is_some_and(|r| r != readonly) => err(Code::AlreadyExists),
                _ => ok(),
            },
            Call::Validate(v) | Call::GetVolume(v) | Call::Modify(v) if !alive(v) => {
                err(Code::NotFound)
            }
            Call::Validate(_) => Reply::Ok(Body::Validated { confirmed: true }),
            Call::ModifyUnsupported(_) => err(Code::InvalidArgument),
            Call::GetVolume(v) => {
                let s = m.vol(v).expect("alive");
                Reply::Ok(Body::Got(Listed {
                    id: s.id.clone(),
                    capacity: s.capacity,
                    source: s.answered_source.clone(),
                    on_node: Some(s.published.is_some()),
                }))
            }
            Call::Expand { vol, mib, limit } => match m.vol(vol) {
                // Past the largest volume it makes, or a limit below what it has: the row
                // "Unsupported capacity_range".
                Some(s)
                    if s.life == Life::Alive
                        && (i64::from(mib) * MIB > IDEAL_MAX
                            || (limit > 0 && s.capacity > i64::from(limit) * MIB)) =>
                {
                    err(Code::OutOfRange)
                }
                Some(s) if s.life == Life::Alive => {
                    let capacity = s.capacity.max(i64::from(mib) * MIB);
                    Reply::Ok(Body::Expanded { capacity, node: false })
                }
                _ => err(Code::NotFound),
            },
            Call::ListVolumes { .. } => complete(live(m, &[])),
            Call::ListHold { max_entries, snapshots: false } => {
                let live = live(m, &[]);
                let n = usize::try_from(max_entries).unwrap_or(0);
                let token = live.len() > n;
                Reply::Ok(Body::Page { entries: live.into_iter().take(n).collect(), token })
            }
            Call::ListResume { snapshots: false } => {
                let first = m.held.as_ref().map(|h| h.first.clone()).unwrap_or_default();
                complete(live(m, &first))
            }
            Call::ListHold { max_entries, snapshots: true } => {
                let all = standing(m, Filter::All);
                let n = usize::try_from(max_entries).unwrap_or(0);
                let token = all.len() > n;
                Reply::Ok(Body::SnapPage { entries: all.into_iter().take(n).collect(), token })
            }
            Call::ListResume { snapshots: true } => {
                let first = m.held_snaps.as_ref().map(|h| h.first.clone()).unwrap_or_default();
                let entries =
                    standing(m, Filter::All).into_iter().filter(|e| !first.contains(&e.id));
                Reply::Ok(Body::Snapshots(Listing {
                    entries: entries.collect(),
                    end: End::Complete,
                    last_page: 0,
                    unpaged: None,
                }))
            }
            Call::CreateSnapshot { name, source } => {
                if let Some(x) =
                    m.current_snap(name).and_then(|s| m.snap(s)).filter(|x| x.life == Life::Alive)
                {
                    return if x.source == source {
                        Reply::Ok(Body::Snapshot {
                            id: x.id.clone(),
                            source: x.source_id.clone(),
                            size: x.size,
                            ready: true,
                            created: x.created,
                        })
                    } else {
                        err(Code::AlreadyExists)
                    };
                }
                match m.vol(source) {
                    Some(s) if s.life == Life::Alive => Reply::Ok(Body::Snapshot {
                        id: self.id("snap"),
                        source: s.id.clone(),
                        size: s.capacity,
                        ready: true,
                        created: Some((i64::from(self.next), 0)),
                    }),
                    _ => err(Code::NotFound),
                }
            }
            Call::ListSnapshots { filter, .. } => Reply::Ok(Body::Snapshots(Listing {
                entries: standing(m, filter),
                end: End::Complete,
                last_page: 0,
                unpaged: None,
            })),
            Call::CreateGroup { name, vols } => {
                let ids = vols.map(|v| m.vol(v).map(|s| s.id.clone()).unwrap_or_default());
                let held = m.current_group(name).and_then(|g| m.groups.get(&g));
                match held.filter(|g| g.life == Life::Alive) {
                    Some(g) if g.source_ids == ids => Reply::Ok(Body::Group {
                        id: g.id.clone(),
                        members: g.members.clone(),
                        bound: g.bound.clone(),
                        described: g.members.iter().map(|(s, v)| described(m, s, v)).collect(),
                    }),
                    Some(_) => err(Code::AlreadyExists),
                    None if vols.iter().any(|v| m.vol(*v).is_none_or(|s| s.life == Life::Dead)) => {
                        err(Code::NotFound)
                    }
                    None => {
                        let id = self.id("group");
                        let members: Vec<(String, String)> =
                            ids.iter().map(|v| (self.id("member"), v.clone())).collect();
                        let described = members
                            .iter()
                            .map(|(s, v)| ListedSnapshot {
                                id: s.clone(),
                                source: v.clone(),
                                ready: true,
                                size: 0,
                                created: Some((i64::from(self.next), 0)),
                                group: id.clone(),
                            })
                            .collect();
                        Reply::Ok(Body::Group { id, members, bound: vec![true; 2], described })
                    }
                }
            }
            Call::GetGroup(g) => match m.groups.get(&g) {
                Some(x) if x.life == Life::Alive => Reply::Ok(Body::Group {
                    id: x.id.clone(),
                    members: x.members.clone(),
                    bound: x.bound.clone(),
                    described: x.members.iter().map(|(s, v)| described(m, s, v)).collect(),
                }),
                _ => err(Code::NotFound),
            },
            Call::Member { group, nth, delete } => {
                let g = m.groups.get(&group);
                match (g.map(|g| g.life), delete) {
                    (Some(Life::Alive), true) => err(Code::InvalidArgument),
                    (Some(Life::Alive), false) => {
                        let (s, v) = &g.expect("standing").members[usize::from(nth)];
                        Reply::Ok(Body::GotSnapshot(described(m, s, v)))
                    }
                    (_, true) => ok(),
                    _ => err(Code::NotFound),
                }
            }
            Call::GetSnapshot(s) if m.snap(s).is_some_and(|x| x.life == Life::Alive) => {
                let x = m.snap(s).expect("alive");
                Reply::Ok(Body::GotSnapshot(described(m, &x.id, &x.source_id)))
            }
            Call::GetSnapshot(_) => err(Code::NotFound),
            Call::Stage { vol: v, .. }
            | Call::Stats { vol: v, .. }
            | Call::NodeExpand { vol: v, .. }
                if !alive(v) =>
            {
                err(Code::NotFound)
            }
            Call::Stats { vol, at } => {
                let s = m.vol(vol).expect("alive");
                let there = match at {
                    At::Staging => s.staged,
                    At::Target(t) => s.targets[usize::from(t)].is_some(),
                };
                if there { ok() } else { err(Code::NotFound) }
            }
            Call::Publish { vol, target, readonly } => match m.vol(vol) {
                Some(s) if s.life != Life::Alive => err(Code::NotFound),
                Some(s) => match s.targets[usize::from(target)] {
                    Some(r) if r != readonly => err(Code::AlreadyExists),
                    Some(_) => Reply::Ok(Body::Target { exists: Some(true), gone: Vec::new() }),
                    None if s.targets.iter().any(Option::is_some) => err(Code::FailedPrecondition),
                    None => Reply::Ok(Body::Target { exists: Some(true), gone: Vec::new() }),
                },
                None => err(Code::NotFound),
            },
            // Not the volume's path: the row's NOT_FOUND.
            Call::Elsewhere { rpc: crate::explore::call::NodeRpc::Stats, .. } => {
                err(Code::NotFound)
            }
            Call::GetCapacity { .. } => Reply::Ok(Body::Bounds(Bounds {
                available: 1 << 40,
                max: Some(IDEAL_MAX),
                min: None,
            })),
            Call::Unpublish { vol, .. } if !alive(vol) => err(Code::NotFound),
            Call::Unpublish { .. } => {
                Reply::Ok(Body::Target { exists: Some(false), gone: Vec::new() })
            }
            _ => ok(),
        }
    }
}

/// The live volumes as a listing shows them, but those listed already (`except`).
fn live(m: &Model, except: &[String]) -> Vec<Listed> {
    m.vols
        .values()
        .filter(|s| s.life == Life::Alive && !except.contains(&s.id))
        .map(|s| Listed {
            id: s.id.clone(),
            capacity: s.capacity,
            source: s.answered_source.clone(),
            on_node: Some(s.published.is_some()),
        })
        .collect()
}

/// The snapshots standing within `filter`, as the ideal plugin lists them: those cut alone,
/// then those of group snapshots standing.
fn standing(m: &Model, filter: Filter) -> Vec<ListedSnapshot> {
    let of_source = |id: &str| match filter {
        Filter::Source(v) => m.vol(v).is_some_and(|y| y.id == id),
        _ => true,
    };
    let mut entries: Vec<ListedSnapshot> = m
        .snaps
        .iter()
        .filter(|(s, x)| {
            x.life == Life::Alive
                && of_source(&x.source_id)
                && match filter {
                    Filter::Id(f) => f == **s,
                    _ => true,
                }
        })
        .map(|(_, x)| described(m, &x.id, &x.source_id))
        .collect();
    // The snapshots of group snapshots standing.
    if !matches!(filter, Filter::Id(_)) {
        entries.extend(
            m.group_members(true)
                .into_iter()
                .filter(|(_, v)| of_source(v))
                .map(|(s, v)| described(m, s, v)),
        );
    }
    entries
}

/// Snapshot `id` (of volume `source`) as the ideal plugin describes it: as it was cut.
fn described(m: &Model, id: &str, source: &str) -> ListedSnapshot {
    let f = m.snap_facts.get(id).cloned().unwrap_or_default();
    ListedSnapshot {
        id: id.to_owned(),
        source: source.to_owned(),
        ready: true,
        size: 0,
        created: f.created,
        group: f.group.unwrap_or_default(),
    }
}

/// A listing followed to its end.
fn complete(entries: Vec<Listed>) -> Reply {
    Reply::Ok(Body::Volumes(Listing { entries, end: End::Complete, last_page: 0, unpaged: None }))
}

/// A walk of `steps` calls against the ideal plugin: the calls, and every rule broken.
/// The walk of `seed`, answered by the ideal plugin: its calls, the rules they broke, and the
/// coverage table's state of each call.
fn walk(seed: u64, steps: usize) -> (Vec<Call>, Vec<Violation>, Vec<&'static str>) {
    let mut m = Model::new(caps());
    let mut g = Generator::new(seed);
    let mut plugin = Ideal { next: 0 };
    let (mut calls, mut broken, mut states) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..steps {
        let Some(call) = g.next(&m) else { break };
        assert!(m.enabled(&call), "seed {seed}: generated a call the model does not allow: {call}");
        states.push(m.state_of(&call));
        let reply = plugin.answer(&m, &call);
        broken.extend(m.judge(&call, &reply).broken);
        calls.push(call);
    }
    (calls, broken, states)
}

#[test]
fn a_plugin_answering_as_the_spec_asks_breaks_nothing_over_many_walks() {
    let (mut reached, mut states) = (BTreeSet::new(), BTreeSet::new());
    for seed in 0..100 {
        let (calls, broken, of) = walk(seed, 250);
        assert!(broken.is_empty(), "seed {seed}: {broken:#?}");
        reached.extend(calls.iter().map(Call::rpc));
        states.extend(of);
    }
    // Every RPC the model knows is reached.
    assert_eq!(reached.len(), 23, "{reached:?}");
    // And the histories a kubelet makes after a pod is deleted or it restarted elsewhere.
    for state in [
        "staged again at the staging path it was unstaged from",
        "staged again at its other staging path",
        "again at a target unpublished, the same readonly flag",
        "again at a target unpublished, the other readonly flag",
        "at a new target after an unpublish",
    ] {
        assert!(states.contains(state), "{state}: {states:?}");
    }
}

#[test]
fn the_same_seed_gives_the_same_walk_and_another_seed_another() {
    assert_eq!(walk(7, 500).0, walk(7, 500).0);
    assert_ne!(walk(7, 500).0, walk(8, 500).0);
}

fn v(name: u16, nth: u16) -> Vol {
    Vol { name, nth }
}

fn ok_volume(id: &str, capacity: i64) -> Reply {
    Reply::Ok(Body::Volume { id: id.into(), capacity, source: None })
}

fn error(code: Code) -> Reply {
    Reply::Err { code, message: "x".into() }
}

fn rules_of(m: &mut Model, call: Call, reply: Reply) -> Vec<Rule> {
    m.judge(&call, &reply).broken.into_iter().map(|b| b.rule).collect()
}

fn create(name: u16, mib: u32) -> Call {
    Call::CreateVolume { name, mib, limit: 0, source: None }
}

fn listing(ids: &[(&str, i64)]) -> Reply {
    let entries = ids
        .iter()
        .map(|(id, c)| Listed { id: (*id).into(), capacity: *c, source: None, on_node: None })
        .collect();
    Reply::Ok(Body::Volumes(Listing {
        entries,
        end: End::Complete,
        last_page: ids.len(),
        unpaged: None,
    }))
}

#[test]
fn every_answer_the_spec_allows_is_accepted() {
    let mut m = Model::new(caps());
    // Capacity 0 is "unknown": no capacity rule, and a repeat with another range may go
    // either way.
    assert!(rules_of(&mut m, create(0, 2), ok_volume("a", 0)).is_empty());
    assert!(rules_of(&mut m, create(0, 3), error(Code::AlreadyExists)).is_empty());
    assert!(rules_of(&mut m, create(0, 3), ok_volume("a", 0)).is_empty());
    assert!(
        rules_of(&mut m, Call::ListVolumes { max_entries: 0 }, listing(&[("a", 0)])).is_empty()
    );
    // An error the spec allows on a fresh create: no rule, and the name is not used again.
    assert!(rules_of(&mut m, create(1, 1), error(Code::ResourceExhausted)).is_empty());
    assert!(!m.enabled(&create(1, 1)));
    // A deleted volume's id given to a new one (a plugin whose ids are its names).
    assert!(rules_of(&mut m, Call::DeleteVolume(v(0, 0)), Reply::Ok(Body::Empty)).is_empty());
    assert!(rules_of(&mut m, create(0, 2), ok_volume("a", 2 * MIB)).is_empty());
    // ...then calls naming the deleted one are calls on the new one, and are not made.
    assert!(!m.enabled(&Call::GetVolume(v(0, 0))));
    // A refused delete while a snapshot stands; the volume stays, unaltered.
    let snap = Call::CreateSnapshot { name: 0, source: v(0, 1) };
    let cut = Reply::Ok(Body::Snapshot {
        id: "s".into(),
        source: "a".into(),
        size: 2 * MIB,
        ready: true,
        created: None,
    });
    assert!(rules_of(&mut m, snap, cut).is_empty());
    assert!(
        rules_of(&mut m, Call::DeleteVolume(v(0, 1)), error(Code::FailedPrecondition)).is_empty()
    );
    assert!(
        rules_of(&mut m, Call::ListVolumes { max_entries: 0 }, listing(&[("a", 2 * MIB)]))
            .is_empty()
    );
    // Unpublishing what is gone: OK or the row's NOT_FOUND.
    assert!(rules_of(&mut m, create(2, 1), ok_volume("b", MIB)).is_empty());
    assert!(rules_of(&mut m, Call::DeleteVolume(v(2, 0)), Reply::Ok(Body::Empty)).is_empty());
    for answer in [Reply::Ok(Body::Empty), error(Code::NotFound)] {
        assert!(
            rules_of(&mut m, Call::ControllerUnpublish { vol: v(2, 0), all: false }, answer)
                .is_empty()
        );
    }
    // A second target for a single-node writer refused: the table's answer.
    let vol = v(3, 0);
    assert!(rules_of(&mut m, create(3, 1), ok_volume("c", MIB)).is_empty());
    for call in
        [Call::ControllerPublish { vol, readonly: false, own: true }, Call::Stage { vol, path: 0 }]
    {
        assert!(rules_of(&mut m, call, Reply::Ok(Body::Empty)).is_empty());
    }
    let placed = Reply::Ok(Body::Target { exists: Some(true), gone: Vec::new() });
    assert!(rules_of(&mut m, Call::Publish { vol, target: 0, readonly: false }, placed).is_empty());
    let second = Call::Publish { vol, target: 1, readonly: false };
    assert!(rules_of(&mut m, second, error(Code::FailedPrecondition)).is_empty());
}

#[test]
fn each_wrong_answer_breaks_its_rule() {
    let mut m = Model::new(caps());
    assert!(rules_of(&mut m, create(0, 2), ok_volume("a", 2 * MIB)).is_empty());
    // A retry answered with another volume.
    assert_eq!(rules_of(&mut m, create(0, 2), ok_volume("b", 2 * MIB)), [Rule::CreateRetrySame]);
    // An incompatible repeat answered OK.
    assert_eq!(
        rules_of(&mut m, create(0, 3), ok_volume("a", 2 * MIB)),
        [Rule::Row("CreateVolume", rules::VOLUME_INCOMPATIBLE)]
    );
    // A live volume missing from a complete listing; a smaller capacity than accepted.
    let list = Call::ListVolumes { max_entries: 0 };
    assert_eq!(rules_of(&mut m, list, listing(&[])), [Rule::VolumesListed]);
    assert_eq!(rules_of(&mut m, list, listing(&[("a", MIB)])), [Rule::CapacityAtLeast]);
    // One full page without next_token, the rest there when asked without max_entries: the
    // paging rule (csi-driver-host-path's ListVolumes); not there either: the listing's.
    let other = Listed { id: "z".into(), capacity: MIB, source: None, on_node: None };
    let page = |unpaged: Vec<Listed>| {
        Reply::Ok(Body::Volumes(Listing {
            entries: vec![other.clone()],
            end: End::Complete,
            last_page: 1,
            unpaged: Some(unpaged),
        }))
    };
    let paged = Call::ListVolumes { max_entries: 1 };
    let all = vec![
        other.clone(),
        Listed { id: "a".into(), capacity: 2 * MIB, source: None, on_node: None },
    ];
    assert_eq!(rules_of(&mut m, paged, page(all)), [Rule::VolumesPaged]);
    assert_eq!(rules_of(&mut m, paged, page(vec![other.clone()])), [Rule::VolumesListed]);
    // Deleted: still listed; still found; its id deleted again is OK.
    assert!(rules_of(&mut m, Call::DeleteVolume(v(0, 0)), Reply::Ok(Body::Empty)).is_empty());
    assert_eq!(rules_of(&mut m, list, listing(&[("a", 2 * MIB)])), [Rule::VolumeDeletedGone]);
    assert_eq!(
        rules_of(&mut m, Call::GetVolume(v(0, 0)), Reply::Ok(Body::Empty)),
        [Rule::Row("ControllerGetVolume", rules::NOT_EXIST)]
    );
    assert_eq!(
        rules_of(&mut m, Call::DeleteVolume(v(0, 0)), error(Code::NotFound)),
        [Rule::DeleteIdempotent]
    );
    // Its name taken again answered ALREADY_EXISTS: the delete did not free it.
    assert_eq!(
        rules_of(&mut m, create(0, 5), error(Code::AlreadyExists)),
        [Rule::VolumeDeletedGone]
    );
    // A live volume answered NOT_FOUND.
    assert!(rules_of(&mut m, create(1, 1), ok_volume("c", MIB)).is_empty());
    assert_eq!(
        rules_of(&mut m, Call::Validate(v(1, 0)), error(Code::NotFound)),
        [Rule::VolumeIdFound]
    );
    // Published, then unpublished with OK: published_node_ids naming the node before is
    // right, after it is the publication not undone; without LIST_VOLUMES_PUBLISHED_NODES the
    // field is not the plugin's to keep.
    let got = |on_node| {
        Reply::Ok(Body::Got(Listed {
            id: "c".into(),
            capacity: MIB,
            source: None,
            on_node: Some(on_node),
        }))
    };
    let publish = Call::ControllerPublish { vol: v(1, 0), readonly: false, own: true };
    assert!(rules_of(&mut m, publish, Reply::Ok(Body::Empty)).is_empty());
    assert!(rules_of(&mut m, Call::GetVolume(v(1, 0)), got(true)).is_empty());
    let unpublish = Call::ControllerUnpublish { vol: v(1, 0), all: false };
    assert!(rules_of(&mut m, unpublish, Reply::Ok(Body::Empty)).is_empty());
    assert!(rules_of(&mut m, Call::GetVolume(v(1, 0)), got(false)).is_empty());
    assert_eq!(rules_of(&mut m, Call::GetVolume(v(1, 0)), got(true)), [Rule::UnpublishedGone]);
    m.caps.published_nodes = false;
    assert!(rules_of(&mut m, Call::GetVolume(v(1, 0)), got(true)).is_empty());
}

#[test]
fn snapshots_outlive_their_source_and_lists_hold_every_one() {
    let mut m = Model::new(caps());
    assert!(rules_of(&mut m, create(0, 1), ok_volume("a", MIB)).is_empty());
    for (name, id) in [(0, "s0"), (1, "s1")] {
        let cut = Reply::Ok(Body::Snapshot {
            id: id.into(),
            source: "a".into(),
            size: MIB,
            ready: true,
            created: None,
        });
        assert!(rules_of(&mut m, Call::CreateSnapshot { name, source: v(0, 0) }, cut).is_empty());
    }
    let by_source = Call::ListSnapshots { filter: Filter::Source(v(0, 0)), max_entries: 0 };
    let one = |id: &str| {
        let e = ListedSnapshot {
            id: id.into(),
            source: "a".into(),
            ready: true,
            size: 0,
            created: None,
            group: String::new(),
        };
        Reply::Ok(Body::Snapshots(Listing {
            entries: vec![e],
            end: End::Complete,
            last_page: 1,
            unpaged: None,
        }))
    };
    // Only the first snapshot of the source: csi-driver-host-path's known bug.
    assert_eq!(rules_of(&mut m, by_source, one("s0")), [Rule::SnapshotsListed]);
    assert!(rules_of(&mut m, Call::DeleteVolume(v(0, 0)), Reply::Ok(Body::Empty)).is_empty());
    assert_eq!(
        rules_of(&mut m, Call::GetSnapshot(Snap { name: 1, nth: 0 }), error(Code::NotFound)),
        [Rule::SnapshotOutlivesSource]
    );
    let restore = Call::CreateVolume {
        name: 1,
        mib: 1,
        limit: 0,
        source: Some(Source::Snapshot(Snap { name: 0, nth: 0 })),
    };
    assert_eq!(rules_of(&mut m, restore, error(Code::NotFound)), [Rule::SnapshotOutlivesSource]);
    // A snapshot of the deleted volume answered OK.
    let of_deleted = Call::CreateSnapshot { name: 2, source: v(0, 0) };
    let cut = Reply::Ok(Body::Snapshot {
        id: "s2".into(),
        source: "a".into(),
        size: MIB,
        ready: true,
        created: None,
    });
    assert_eq!(rules_of(&mut m, of_deleted, cut), [Rule::SnapshotOfDeleted]);
}

#[test]
fn an_undo_the_plugin_forgot_breaks_the_undos_sentence() {
    let mut m = Model::new(caps());
    let vol = v(0, 0);
    assert!(rules_of(&mut m, create(0, 1), ok_volume("a", MIB)).is_empty());
    for call in [
        Call::ControllerPublish { vol, readonly: false, own: true },
        Call::ControllerUnpublish { vol, all: false },
    ] {
        assert!(rules_of(&mut m, call, Reply::Ok(Body::Empty)).is_empty());
    }
    // Refused as in use after the only publication was undone, no snapshot standing.
    assert_eq!(
        rules_of(&mut m, Call::DeleteVolume(vol), error(Code::FailedPrecondition)),
        [Rule::InUseAfterUndo]
    );
    // A target still there after NodeUnpublishVolume answered OK.
    let mut m = Model::new(caps());
    assert!(rules_of(&mut m, create(0, 1), ok_volume("a", MIB)).is_empty());
    for call in
        [Call::ControllerPublish { vol, readonly: false, own: true }, Call::Stage { vol, path: 0 }]
    {
        assert!(rules_of(&mut m, call, Reply::Ok(Body::Empty)).is_empty());
    }
    let publish = Call::Publish { vol, target: 0, readonly: false };
    assert_eq!(
        rules_of(
            &mut m,
            publish,
            Reply::Ok(Body::Target { exists: Some(false), gone: Vec::new() })
        ),
        [Rule::TargetPlaced]
    );
    let unpublish = Call::Unpublish { vol, target: 0 };
    assert_eq!(
        rules_of(
            &mut m,
            unpublish,
            Reply::Ok(Body::Target { exists: Some(true), gone: Vec::new() })
        ),
        [Rule::TargetRemoved]
    );
    // Publishing there again with the other flag refused as if the first still stood.
    let again = Call::Publish { vol, target: 0, readonly: true };
    assert_eq!(rules_of(&mut m, again, error(Code::AlreadyExists)), [Rule::NodeUnpublishUndoes]);
}

#[test]
fn restores_expansions_modifications_and_limits_are_held_to_their_sentences() {
    let mut m = Model::new(caps());
    let vol = v(0, 0);
    // Made with a limit only: a capacity above it breaks the limit.
    let at_most = Call::CreateVolume { name: 0, mib: 0, limit: 4, source: None };
    assert!(rules_of(&mut m, at_most, ok_volume("a", 4 * MIB)).is_empty());
    let list = Call::ListVolumes { max_entries: 0 };
    assert_eq!(rules_of(&mut m, list, listing(&[("a", 5 * MIB)])), [Rule::CapacityAtMost]);
    // A restore smaller than its snapshot.
    let cut = Reply::Ok(Body::Snapshot {
        id: "s".into(),
        source: "a".into(),
        size: 4 * MIB,
        ready: true,
        created: None,
    });
    assert!(rules_of(&mut m, Call::CreateSnapshot { name: 0, source: vol }, cut).is_empty());
    let restore = Call::CreateVolume {
        name: 1,
        mib: 0,
        limit: 0,
        source: Some(Source::Snapshot(Snap { name: 0, nth: 0 })),
    };
    assert_eq!(rules_of(&mut m, restore, ok_volume("b", MIB)), [Rule::RestoreAtLeastSnapshot]);
    // The same expansion again, in the same use, after OK: OK again (a refusal before any OK,
    // or after the use changed, is the plugin's to give).
    let grow = Call::Expand { vol, mib: 6, limit: 0 };
    assert!(rules_of(&mut m, grow, error(Code::FailedPrecondition)).is_empty());
    assert!(
        rules_of(&mut m, grow, Reply::Ok(Body::Expanded { capacity: 6 * MIB, node: false }))
            .is_empty()
    );
    assert_eq!(rules_of(&mut m, grow, error(Code::Internal)), [Rule::ExpandIdempotent]);
    assert!(
        rules_of(&mut m, grow, Reply::Ok(Body::Expanded { capacity: 6 * MIB, node: false }))
            .is_empty()
    );
    let publish = Call::ControllerPublish { vol, readonly: false, own: true };
    assert!(rules_of(&mut m, publish, Reply::Ok(Body::Empty)).is_empty());
    // Published since: the row "Volume in use" may now apply, and only the SHOULD (a note)
    // holds of it; any other refusal of a size answered OK before breaks idempotency (a CO's
    // late retry).
    assert_eq!(rules_of(&mut m, grow, error(Code::FailedPrecondition)), [Rule::ExpandSmaller]);
    assert_eq!(rules_of(&mut m, grow, error(Code::OutOfRange)), [Rule::ExpandIdempotent]);
    // OK again: a capacity below what was asked breaks it, and node_expansion_required other
    // than the first answer's, with no NodeExpandVolume between, is a note.
    let answered = |capacity, node| Reply::Ok(Body::Expanded { capacity, node });
    assert_eq!(rules_of(&mut m, grow, answered(5 * MIB, false)), [Rule::CapacityAtLeast]);
    // capacity_bytes is REQUIRED in this answer: 0 is less than asked, not an unknown size.
    assert_eq!(rules_of(&mut m, grow, answered(0, false)), [Rule::CapacityAtLeast]);
    assert_eq!(rules_of(&mut m, grow, answered(6 * MIB, true)), [Rule::ExpandFlagSame]);
    // Grown further since: the node has more to do, and the flag may say so.
    assert!(
        rules_of(&mut m, Call::Expand { vol, mib: 7, limit: 0 }, answered(7 * MIB, false))
            .is_empty()
    );
    assert!(rules_of(&mut m, grow, answered(7 * MIB, true)).is_empty());
    // NodeExpandVolume likewise, once staged.
    assert!(rules_of(&mut m, Call::Stage { vol, path: 0 }, Reply::Ok(Body::Empty)).is_empty());
    let node_grow = Call::NodeExpand { vol, mib: 6, limit: 0 };
    assert!(rules_of(&mut m, node_grow, Reply::Ok(Body::Capacity(6 * MIB))).is_empty());
    assert_eq!(rules_of(&mut m, node_grow, error(Code::Internal)), [Rule::NodeExpandIdempotent]);
    // ControllerModifyVolume: refused parameters are the row's; once taken, taken again; a
    // deleted volume's is NOT_FOUND.
    let modify = Call::Modify(v(1, 0));
    assert!(rules_of(&mut m, modify, error(Code::InvalidArgument)).is_empty());
    assert!(rules_of(&mut m, modify, Reply::Ok(Body::Empty)).is_empty());
    assert_eq!(rules_of(&mut m, modify, error(Code::InvalidArgument)), [Rule::ModifyIdempotent]);
    assert!(rules_of(&mut m, Call::DeleteVolume(v(1, 0)), Reply::Ok(Body::Empty)).is_empty());
    assert_eq!(
        rules_of(&mut m, modify, Reply::Ok(Body::Empty)),
        [Rule::Row("ControllerModifyVolume", rules::NOT_EXIST)]
    );
}

#[test]
fn each_epoch_of_a_swarm_leaves_out_kinds_and_its_length_varies() {
    // Two epochs of one generator over the same model choose from other kinds: over many
    // calls, the RPCs each epoch reaches differ for some seed, and the lengths differ.
    let mut m = Model::new(caps());
    let mut plugin = Ideal { next: 0 };
    let mut g = Generator::new(3);
    let mut lengths = std::collections::BTreeSet::new();
    let mut reached: Vec<std::collections::BTreeSet<&str>> = Vec::new();
    for _ in 0..6 {
        let mut rpcs = std::collections::BTreeSet::new();
        let mut n = 0;
        while !g.epoch_over(n) {
            let call = g.next(&m).expect("a call");
            let reply = plugin.answer(&m, &call);
            assert!(m.judge(&call, &reply).broken.is_empty());
            rpcs.insert(call.rpc());
            n += 1;
        }
        lengths.insert(n);
        reached.push(rpcs);
        m = Model::new(caps());
        g.start_epoch();
    }
    assert!(lengths.len() > 1, "{lengths:?}");
    assert!(reached.windows(2).any(|w| w[0] != w[1]), "{reached:?}");
}

mod change;
mod describe;
mod history;
mod marks;
mod order;
mod refusal;
mod repeats;
mod seen;
mod sizes;
