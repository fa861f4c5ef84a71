//! The next call of a random walk, chosen from what the model allows a CO now: a kind of step by
//! weight (new volumes while there are few, deletions as there are more, each lifecycle move,
//! retries, repeats that are not compatible, and calls on what was deleted), then one of the
//! objects it applies to. Swarm testing (Groce et al., ISSTA 2012): most attempts (epochs)
//! leave out a random half of the kinds and weigh the rest at random, and every epoch lasts a
//! random number of calls, so that an interleaving the common kinds would drown is reached in
//! some epoch. Deterministic for a seed and the plugin's answers.

use super::call::{At, Bounds, Call, Elsewhere, Filter, Grp, NodeRpc, STAGINGS, Snap, Source, Vol};
use super::model::{Life, MIB, Model, TARGETS, VolState};

mod data;
mod expand;
mod kind;
mod member;
mod modify;
mod readonly;
mod refusal;
mod sizes;
mod stale;

/// Live volumes (and, apart, snapshots) the walk keeps at most, so listings stay cheap.
pub(crate) const MAX_LIVE: usize = 12;

/// The walk's chooser: its random numbers, the next fresh names and this epoch's swarm.
#[derive(Debug)]
pub(crate) struct Generator {
    rng: fastrand::Rng,
    next_name: u16,
    next_snap_name: u16,
    next_group_name: u16,
    /// Each kind's factor this epoch, by its place in [`Generator::next`]'s list (0: left out).
    swarm: Vec<u32>,
    /// Calls this epoch lasts.
    epoch: usize,
}

/// Kinds of step a swarm draws factors for: at least as many as [`Generator::next`] lists.
const KINDS: usize = 96;
/// The shortest and longest epoch, in calls: long enough for a few lifecycles of several
/// volumes, short enough to shrink quickly.
const EPOCH: std::ops::RangeInclusive<usize> = 150..=400;

/// Sizes a new volume asks for, in MiB (0: no capacity_range).
const SIZES: [u32; 5] = [0, 1, 2, 3, 8];
/// The largest volume the walk makes from GetCapacity's answer but at its maximum: 8 GiB.
const LARGE: i64 = 8 << 30;
/// Page sizes a listing asks for (0: all at once).
const PAGES: [i32; 5] = [0, 0, 1, 2, 3];

impl Generator {
    pub(crate) fn new(seed: u64) -> Generator {
        let mut g = Generator {
            rng: fastrand::Rng::with_seed(seed),
            next_name: 0,
            next_snap_name: 0,
            next_group_name: 0,
            swarm: Vec::new(),
            epoch: *EPOCH.end(),
        };
        g.start_epoch();
        g
    }

    /// A new epoch: every kind at its plain weight (one epoch in three), or each kind kept with
    /// probability one half at a factor of 1 to 4 (a move forward through the lifecycle
    /// always, see [`Generator::advances`]); a random length.
    pub(crate) fn start_epoch(&mut self) {
        // A third of the epochs walk every kind at its plain weight, so that what the plain
        // weights reach quickly is still reached as quickly.
        let full = self.one_in(3);
        self.swarm = (0..KINDS)
            .map(|_| match () {
                () if full => 1,
                () if self.rng.bool() => self.rng.u32(1..=4),
                () => 0,
            })
            .collect();
        self.epoch = self.rng.usize(EPOCH);
    }

    /// Send the next call twice at once (one call in eight): see `concurrent`.
    pub(crate) fn twice(&mut self) -> bool {
        self.one_in(8)
    }

    /// This epoch is over after `calls` calls.
    pub(crate) fn epoch_over(&self, calls: usize) -> bool {
        calls >= self.epoch
    }

    fn pick<T: Copy>(&mut self, from: &[T]) -> T {
        from[self.rng.usize(..from.len())]
    }

    fn one_in(&mut self, n: u32) -> bool {
        self.rng.u32(..n) == 0
    }

    fn size(&mut self) -> u32 {
        self.pick(&SIZES)
    }

    /// A few handles that stopped being valid, of `gone` (newest first): the two most recent,
    /// and two of any age, so that one deleted long ago, with much done since, is named too.
    fn stale<T: Copy>(&mut self, mut gone: Vec<T>) -> Vec<T> {
        if gone.len() > 4 {
            let older = gone.split_off(2);
            let a = self.rng.usize(..older.len());
            let b = (a + 1 + self.rng.usize(..older.len() - 1)) % older.len();
            gone.extend([older[a], older[b]]);
        }
        gone
    }

    /// The next call, or `None` when the plugin serves nothing the walk can call.
    pub(crate) fn next(&mut self, m: &Model) -> Option<Call> {
        let (live, live_snaps) = m.live_counts();
        let mut kinds: Vec<(u32, Vec<Call>)> = Vec::new();
        let alive: Vec<(Vol, &VolState)> =
            m.vols.iter().filter(|(_, s)| s.life == Life::Alive).map(|(v, s)| (*v, s)).collect();
        // A few of what is gone: calls on stale handles.
        let dead: Vec<Vol> = self.stale(
            m.vols.iter().rev().filter(|(_, s)| s.life == Life::Dead).map(|(v, _)| *v).collect(),
        );
        let snaps: Vec<Snap> =
            m.snaps.iter().filter(|(_, s)| s.life == Life::Alive).map(|(s, _)| *s).collect();
        let dead_snaps: Vec<Snap> = self.stale(
            m.snaps.iter().rev().filter(|(_, s)| s.life == Life::Dead).map(|(s, _)| *s).collect(),
        );

        // Volumes made (every kind listed, empty where it cannot apply: it keeps its place).
        let room = live < MAX_LIVE;
        {
            let mib = self.size();
            // The capacity_range's shapes: at least, exactly, between, at most.
            let (mib, limit) = match self.rng.u8(..6) {
                0 if mib > 0 => (mib, mib),
                1 if mib > 0 => (mib, mib + self.rng.u32(1..4)),
                2 => (0, self.rng.u32(1..=8)),
                _ => (mib, 0),
            };
            // Now and then a size from the boundaries GetCapacity gave: its maximum_volume_size
            // and just above, its minimum_volume_size as a limit and just below, or a large
            // share of what is available (so that totals cross large values).
            let (mib, limit) = match m.bounds {
                Some(b) if self.one_in(4) => self.bounded(b),
                _ => (mib, limit),
            };
            let fresh = Call::CreateVolume { name: self.next_name, mib, limit, source: None };
            kinds.push((10, if room { vec![fresh] } else { Vec::new() }));
            let free: Vec<Call> = m
                .names
                .iter()
                .filter(|(n, st)| {
                    room && !st.burnt
                        && m.current(**n)
                            .and_then(|v| m.vol(v))
                            .is_some_and(|s| s.life == Life::Dead)
                })
                .map(|(n, _)| Call::CreateVolume { name: *n, mib, limit: 0, source: None })
                .collect();
            kinds.push((3, free));
            // Sizes relative to the source's: required_bytes and limit_bytes below, equal to or
            // above it ("Unsupported capacity_range" allows refusing; an OK is held to it).
            let rel = self.relative();
            let clones: Vec<Call> = alive
                .iter()
                .filter(|_| room)
                .map(|(v, s)| (*v, relative(mib_of(s), rel)))
                .chain(dead.iter().map(|v| (*v, (0, 0))))
                .map(|(v, (mib, limit))| Call::CreateVolume {
                    name: self.next_name,
                    mib,
                    limit,
                    source: Some(Source::Volume(v)),
                })
                .collect();
            kinds.push((2, clones));
            // A restore asks for the snapshot's size, or (a third of them) for no size: the
            // volume is then the plugin's to size, and still no smaller than the snapshot.
            let sized = !self.one_in(3);
            let restores: Vec<Call> = snaps
                .iter()
                .chain(dead_snaps.iter())
                .filter(|_| room)
                .map(|s| {
                    let size = m.snap(*s).map_or(0, |x| x.size);
                    let of = mib_ceil(size).unwrap_or(0);
                    let (mib, limit) = if sized { relative(of, rel) } else { (0, 0) };
                    Call::CreateVolume {
                        name: self.next_name,
                        mib,
                        limit,
                        source: Some(Source::Snapshot(*s)),
                    }
                })
                .collect();
            kinds.push((3, restores));
            // A source used before, used again: a snapshot restored once more (its earlier
            // restores alive or deleted), a volume cloned once more; each use is held to leave
            // the source as it was (its reads, `describe`) and to be judged as the first was.
            let mut used: Vec<Source> = m
                .vols
                .values()
                .filter_map(|s| s.source)
                .filter(|src| match src {
                    Source::Snapshot(x) => m.snap(*x).is_some_and(|y| y.life == Life::Alive),
                    Source::Volume(v) => m.vol(*v).is_some_and(|y| y.life == Life::Alive),
                    x => m.restorable(*x).is_some_and(|y| y.life == Life::Alive),
                })
                .collect();
            used.dedup();
            let again: Vec<Call> = used
                .into_iter()
                .filter(|_| room)
                .map(|src| Call::CreateVolume {
                    name: self.next_name,
                    mib: 0,
                    limit: 0,
                    source: Some(src),
                })
                .collect();
            kinds.push((2, again));
        }
        kinds.push((3, alive.iter().map(|(v, s)| made_again(*v, s)).collect()));
        let bigger = self.rng.u32(1..5);
        let larger: Vec<Call> = alive
            .iter()
            .filter(|(_, s)| s.capacity > 0)
            .map(|(v, s)| Call::CreateVolume {
                name: v.name,
                mib: mib_of(s) + bigger,
                limit: 0,
                source: s.source,
            })
            .collect();
        kinds.push((1, larger));

        // Deleted, and what is asked of the deleted.
        let unused: Vec<Vol> = alive.iter().filter(|(_, s)| s.unused()).map(|(v, _)| *v).collect();
        kinds.push((2 + live as u32, unused.iter().map(|v| Call::DeleteVolume(*v)).collect()));
        kinds.push((1, dead.iter().map(|v| Call::DeleteVolume(*v)).collect()));
        // Out of the lifecycle's order (a crashed kubelet, a force-detach, an operator):
        // DeleteVolume of a volume in use.
        let in_use: Vec<Vol> = alive.iter().filter(|(_, s)| !s.unused()).map(|(v, _)| *v).collect();
        kinds.push((1, in_use.iter().map(|v| Call::DeleteVolume(*v)).collect()));

        // The controller's publication.
        let readonly = self.one_in(3);
        kinds.push((
            5,
            unused
                .iter()
                .map(|v| Call::ControllerPublish { vol: *v, readonly, own: true })
                .collect(),
        ));
        let published: Vec<(Vol, bool)> =
            alive.iter().filter_map(|(v, s)| s.published.map(|ro| (*v, ro))).collect();
        kinds.push((
            2,
            published
                .iter()
                .map(|(v, ro)| Call::ControllerPublish { vol: *v, readonly: *ro, own: true })
                .collect(),
        ));
        kinds.push((
            1,
            published
                .iter()
                .map(|(v, ro)| Call::ControllerPublish { vol: *v, readonly: !*ro, own: true })
                .collect(),
        ));
        kinds.push((
            1,
            unused
                .iter()
                .map(|v| Call::ControllerPublish { vol: *v, readonly: false, own: false })
                .collect(),
        ));
        let all = self.one_in(4);
        let node_free = |v: &Vol| {
            m.vol(*v).is_some_and(|s| {
                !s.staged && !s.second_staged && s.targets.iter().all(Option::is_none)
            })
        };
        kinds.push((
            4,
            published
                .iter()
                .filter(|(v, _)| node_free(v))
                .map(|(v, _)| Call::ControllerUnpublish { vol: *v, all })
                .collect(),
        ));
        // Out of order: while the node still stages or publishes it.
        kinds.push((
            1,
            published
                .iter()
                .filter(|(v, _)| !node_free(v))
                .map(|(v, _)| Call::ControllerUnpublish { vol: *v, all })
                .collect(),
        ));
        kinds
            .push((1, unused.iter().map(|v| Call::ControllerUnpublish { vol: *v, all }).collect()));

        // Reads.
        let some: Vec<Vol> = alive.iter().map(|(v, _)| *v).chain(dead.iter().copied()).collect();
        kinds.push((2, some.iter().map(|v| Call::Validate(*v)).collect()));
        kinds.push((4, vec![Call::ListVolumes { max_entries: self.pick(&PAGES) }]));
        // GetCapacity in every state, mostly with the capability and parameters of the walk's
        // creations (whose sizes its answer then bounds).
        kinds.push((2, vec![Call::GetCapacity { with: !self.one_in(4) }]));
        // A token held across later calls (creations and deletions among them, or not), then
        // followed to the end.
        kinds
            .push((1, vec![Call::ListHold { max_entries: self.rng.i32(1..=3), snapshots: false }]));
        let resume = Call::ListResume { snapshots: false };
        kinds.push((3, if m.held.is_some() { vec![resume] } else { Vec::new() }));
        kinds.push((3, some.iter().map(|v| Call::GetVolume(*v)).collect()));

        self.expansions(m, &alive, &dead, &mut kinds);

        // Mutable parameters.
        kinds.push((2, alive.iter().map(|(v, _)| Call::Modify(*v)).collect()));
        kinds.push((1, dead.iter().map(|v| Call::Modify(*v)).collect()));

        // Snapshots.
        let name = self.next_snap_name;
        kinds.push((
            4,
            alive
                .iter()
                .filter(|_| live_snaps < MAX_LIVE)
                .map(|(v, _)| Call::CreateSnapshot { name, source: *v })
                .collect(),
        ));
        let held: Vec<(u16, Vol)> = m
            .snap_names
            .keys()
            .filter_map(|n| m.current_snap(*n))
            .filter_map(|s| m.snap(s).filter(|x| x.life == Life::Alive).map(|x| (s.name, x.source)))
            .collect();
        kinds.push((
            2,
            held.iter().map(|(n, v)| Call::CreateSnapshot { name: *n, source: *v }).collect(),
        ));
        let other = alive.first().map(|(v, _)| *v);
        kinds.push((
            1,
            held.iter()
                .filter_map(|(n, v)| {
                    other.filter(|o| o != v).map(|o| Call::CreateSnapshot { name: *n, source: o })
                })
                .collect(),
        ));
        kinds.push((
            1,
            dead.iter()
                .map(|v| Call::CreateSnapshot { name: self.next_snap_name, source: *v })
                .collect(),
        ));
        kinds.push((3, snaps.iter().map(|s| Call::DeleteSnapshot(*s)).collect()));
        kinds.push((1, dead_snaps.iter().map(|s| Call::DeleteSnapshot(*s)).collect()));
        let page = self.pick(&PAGES);
        let mut filters = vec![Call::ListSnapshots { filter: Filter::All, max_entries: page }];
        filters.extend(
            snaps
                .iter()
                .chain(dead_snaps.iter())
                .map(|s| Call::ListSnapshots { filter: Filter::Id(*s), max_entries: page }),
        );
        let sources: std::collections::BTreeSet<Vol> = m.snaps.values().map(|x| x.source).collect();
        filters.extend(
            sources
                .iter()
                .map(|v| Call::ListSnapshots { filter: Filter::Source(*v), max_entries: page }),
        );
        kinds.push((4, filters));
        // A ListSnapshots token held across later calls (snapshots cut and deleted among them,
        // or not), then followed to the end, as ListVolumes' are.
        kinds.push((1, vec![Call::ListHold { max_entries: self.rng.i32(1..=3), snapshots: true }]));
        let resume = Call::ListResume { snapshots: true };
        kinds.push((3, if m.held_snaps.is_some() { vec![resume] } else { Vec::new() }));
        kinds.push((2, snaps.iter().map(|s| Call::GetSnapshot(*s)).collect()));
        kinds.push((1, dead_snaps.iter().map(|s| Call::GetSnapshot(*s)).collect()));

        // Group snapshots: of two live volumes, the same again, of two others; deleted, read.
        let pairs: Vec<[Vol; 2]> =
            alive.iter().zip(alive.iter().skip(1)).map(|((a, _), (b, _))| [*a, *b]).collect();
        let group_name = self.next_group_name;
        kinds.push((
            2,
            pairs.iter().map(|p| Call::CreateGroup { name: group_name, vols: *p }).collect(),
        ));
        let groups: Vec<(Grp, bool)> =
            m.groups.iter().map(|(g, x)| (*g, x.life == Life::Alive)).collect();
        let standing: Vec<Grp> = groups.iter().filter(|(_, a)| *a).map(|(g, _)| *g).collect();
        let gone: Vec<Grp> =
            self.stale(groups.iter().rev().filter(|(_, a)| !*a).map(|(g, _)| *g).collect());
        let current: Vec<(Grp, [Vol; 2])> = standing
            .iter()
            .filter(|g| m.current_group(g.name) == Some(**g))
            .map(|g| (*g, m.groups[g].sources))
            .collect();
        // The same volumes again (a retry), or a pair that is not the group's.
        let retry = current.iter().map(|(g, p)| Call::CreateGroup { name: g.name, vols: *p });
        kinds.push((2, retry.collect()));
        let other = current.iter().filter_map(|(g, own)| {
            let p = pairs.iter().find(|p| *p != own)?;
            Some(Call::CreateGroup { name: g.name, vols: *p })
        });
        kinds.push((1, other.collect()));
        kinds.push((2, standing.iter().map(|g| Call::DeleteGroup(*g)).collect()));
        kinds.push((1, gone.iter().map(|g| Call::DeleteGroup(*g)).collect()));
        kinds.push((1, standing.iter().chain(gone.iter()).map(|g| Call::GetGroup(*g)).collect()));
        // One of a group's snapshots alone: deleted (refused while the group stands) or read,
        // while the group stands and after it was deleted.
        let nth = self.rng.u8(..2);
        let delete = self.rng.bool();
        kinds.push((
            1,
            standing
                .iter()
                .chain(gone.iter())
                .map(|g| Call::Member { group: *g, nth, delete })
                .collect(),
        ));

        // The node.
        let target = self.rng.u8(..TARGETS as u8);
        let ro = self.one_in(3);
        // NodePublishVolume again where the volume is published at `target`: a retry, or
        // (`flip`) the other readonly flag.
        let republish = |flip: bool| -> Vec<Call> {
            alive
                .iter()
                .filter_map(|(v, s)| {
                    s.targets[usize::from(target)].map(|r| Call::Publish {
                        vol: *v,
                        target,
                        readonly: r != flip,
                    })
                })
                .collect()
        };
        // Where it is staged, or was last (see `restage` for the other path).
        let stage = |vol: Vol, s: &VolState| Call::Stage { vol, path: s.staging };
        let mut node: Vec<(u32, Vec<Call>)> = vec![
            (4, alive.iter().filter(|(_, s)| !s.staged).map(|(v, s)| stage(*v, s)).collect()),
            (2, alive.iter().filter(|(_, s)| s.staged).map(|(v, s)| stage(*v, s)).collect()),
            (1, dead.iter().map(|v| Call::Stage { vol: *v, path: 0 }).collect()),
            (
                3,
                alive
                    .iter()
                    .filter(|(_, s)| s.staged && s.targets.iter().all(Option::is_none))
                    .map(|(v, _)| Call::Unstage(*v))
                    .collect(),
            ),
            // Out of order: unstaged while still published at a target.
            (
                1,
                alive
                    .iter()
                    .filter(|(_, s)| s.staged && s.targets.iter().any(Option::is_some))
                    .map(|(v, _)| Call::Unstage(*v))
                    .collect(),
            ),
            (
                1,
                alive
                    .iter()
                    .filter(|(_, s)| !s.staged && s.staged_ever)
                    .map(|(v, _)| Call::Unstage(*v))
                    .collect(),
            ),
            (
                5,
                alive
                    .iter()
                    .filter(|(_, s)| s.targets.iter().all(Option::is_none))
                    .map(|(v, _)| Call::Publish { vol: *v, target, readonly: ro })
                    .collect(),
            ),
            (2, republish(false)),
            (1, republish(true)),
            (
                1,
                alive
                    .iter()
                    .filter(|(_, s)| {
                        s.targets[usize::from(target)].is_none()
                            && s.targets.iter().any(Option::is_some)
                    })
                    .map(|(v, _)| Call::Publish { vol: *v, target, readonly: ro })
                    .collect(),
            ),
            (1, dead.iter().map(|v| Call::Publish { vol: *v, target, readonly: false }).collect()),
            (
                5,
                alive
                    .iter()
                    .flat_map(|(v, s)| {
                        (0..TARGETS as u8)
                            .filter(|t| s.targets[usize::from(*t)].is_some())
                            .map(|t| Call::Unpublish { vol: *v, target: t })
                    })
                    .collect(),
            ),
            (1, alive.iter().map(|(v, _)| Call::Unpublish { vol: *v, target }).collect()),
            (1, dead.iter().map(|v| Call::Unpublish { vol: *v, target }).collect()),
            (
                2,
                alive
                    .iter()
                    .flat_map(|(v, _)| {
                        [
                            Call::Stats { vol: *v, at: At::Staging },
                            Call::Stats { vol: *v, at: At::Target(target) },
                        ]
                    })
                    .chain(dead.iter().map(|v| Call::Stats {
                        vol: *v,
                        at: if target == 0 { At::Staging } else { At::Target(0) },
                    }))
                    .collect(),
            ),
            (
                1,
                alive
                    .iter()
                    .filter(|(_, s)| s.capacity > 0)
                    .map(|(v, s)| Call::NodeExpand {
                        vol: *v,
                        mib: u32::try_from(s.capacity / MIB).unwrap_or(0),
                        limit: 0,
                    })
                    .collect(),
            ),
        ];
        kinds.append(&mut node);
        self.elsewhere(m, &alive, &mut kinds);
        self.mismatched(m, &mut kinds);
        self.refusals(m, &mut kinds);
        self.of_rare_kinds(m, &mut kinds);
        self.member_restores(m, &mut kinds);
        self.repeated_refusals(m, &mut kinds);
        self.readonly_pairs(m, &mut kinds);
        self.sizes(m, &alive, &mut kinds);
        self.data_paths(m, &mut kinds);
        self.stale_groups(m, &mut kinds);
        self.exact_growth(m, &alive, &mut kinds);
        self.unsupported_modify(m, &alive, &mut kinds);

        // Keep what a CO may do now, weigh it by the epoch's swarm (by the plain weights when
        // the swarm leaves nothing), then choose: a kind by weight, then one of its calls.
        debug_assert!(kinds.len() <= KINDS, "{} kinds", kinds.len());
        for (_, calls) in &mut kinds {
            calls.retain(|c| m.enabled(c));
        }
        let swarmed: Vec<u32> = kinds
            .iter()
            .zip(self.swarm.iter().chain(std::iter::repeat(&1)))
            .map(|((w, calls), f)| match calls.first() {
                None => 0,
                // A move forward through the lifecycle is never left out: the states behind
                // it (and every move there) would be left out with it.
                Some(c) if self.advances(m, c) => w * f.max(&1),
                Some(_) => w * f,
            })
            .collect();
        if swarmed.iter().any(|w| *w > 0) {
            for ((w, _), s) in kinds.iter_mut().zip(swarmed) {
                *w = s;
            }
        }
        kinds.retain(|(w, calls)| *w > 0 && !calls.is_empty());
        let total: u32 = kinds.iter().map(|(w, _)| *w).sum();
        if total == 0 {
            return None;
        }
        let mut at = self.rng.u32(..total);
        let (_, calls) = kinds.iter().find(|(w, _)| {
            if at < *w {
                true
            } else {
                at -= *w;
                false
            }
        })?;
        let call = calls[self.rng.usize(..calls.len())];
        let call = self.restage(m, call);
        self.took(&call);
        Some(call)
    }

    /// Node calls at paths that are not where the volume is: a second staging path (staged
    /// there, and unstaged), another volume's staging path (or, for statistics, target #0), a
    /// folder of no volume.
    fn elsewhere(
        &mut self,
        m: &Model,
        alive: &[(Vol, &VolState)],
        kinds: &mut Vec<(u32, Vec<Call>)>,
    ) {
        let staged: Vec<Vol> = alive.iter().filter(|(_, s)| s.staged).map(|(v, _)| *v).collect();
        let published: Vec<Vol> =
            alive.iter().filter(|(_, s)| s.targets[0].is_some()).map(|(v, _)| *v).collect();
        let second = |rpc| {
            staged.iter().map(move |v| Call::Elsewhere {
                vol: *v,
                rpc,
                at: Elsewhere::SecondStaging,
            })
        };
        kinds.push((1, second(NodeRpc::Stage).collect()));
        let unstage_second =
            alive.iter().filter(|(_, s)| s.second_staged || s.staged).map(|(v, _)| {
                Call::Elsewhere { vol: *v, rpc: NodeRpc::Unstage, at: Elsewhere::SecondStaging }
            });
        kinds.push((1, unstage_second.collect()));
        // One volume at another's path (or at a folder of no volume): the other's first.
        let at = |rpc: NodeRpc, of: &[Vol], place: fn(Vol) -> Elsewhere| -> Vec<Call> {
            alive
                .iter()
                .flat_map(|(v, _)| {
                    of.iter()
                        .filter(move |w| *w != v)
                        .take(1)
                        .map(move |w| Call::Elsewhere { vol: *v, rpc, at: place(*w) })
                        .chain(std::iter::once(Call::Elsewhere {
                            vol: *v,
                            rpc,
                            at: Elsewhere::Nowhere,
                        }))
                })
                .filter(|c| m.enabled(c))
                .collect()
        };
        kinds.push((1, at(NodeRpc::Unstage, &staged, Elsewhere::Staging)));
        kinds.push((1, at(NodeRpc::Unpublish, &[], Elsewhere::Target)));
        let mut stats = at(NodeRpc::Stats, &staged, Elsewhere::Staging);
        stats.extend(at(NodeRpc::Stats, &published, Elsewhere::Target));
        kinds.push((1, stats));
    }

    /// Sizes from GetCapacity's answer: exactly its maximum_volume_size (in whole MiB) where
    /// that is a small share of the pool, else just above it; a limit at its
    /// minimum_volume_size or just below; or a large volume (an eighth of what is available, at
    /// most 8 GiB, so that a few alive at once cross 2^32 bytes and more). A volume a plugin
    /// cannot delete again (a bug, or still in use) stays out of the pool for the rest of the
    /// run, so no size here takes much of it.
    fn bounded(&mut self, b: Bounds) -> (u32, u32) {
        let max = b.max.map(|x| (mib_floor(x), x <= b.available / 8));
        let min = b.min.map(|x| mib_ceil(x).unwrap_or(u32::MAX));
        match (self.rng.u8(..5), max, min) {
            (0, Some((max, true)), _) if max > 0 => (max, 0),
            (0 | 1, Some((max, _)), _) => (max.saturating_add(1), 0),
            (2, _, Some(min)) if min > 0 => (0, min),
            (3, _, Some(min)) if min > 1 => (0, min - 1),
            _ => (mib_floor((b.available / 8).min(LARGE)).max(1), 0),
        }
    }

    /// Where a size relative to a source's goes this time: required_bytes and limit_bytes
    /// each one MiB below, equal to, or one MiB above it (a limit also unset).
    fn relative(&mut self) -> (i8, Option<i8>) {
        let required = self.rng.i8(-1..=1);
        let limit = if self.one_in(2) { None } else { Some(self.rng.i8(-1..=1)) };
        (required, limit)
    }

    /// `call` takes the history forward: a new volume or snapshot, a volume published to the
    /// node, staged, or published at a target path.
    fn advances(&self, m: &Model, call: &Call) -> bool {
        let vol = |v: Vol| m.vol(v);
        match *call {
            Call::CreateVolume { name, source: None, .. } => name == self.next_name,
            Call::CreateSnapshot { name, .. } => name == self.next_snap_name,
            Call::ControllerPublish { vol: v, own: true, .. } => {
                vol(v).is_some_and(|s| s.published.is_none())
            }
            Call::Stage { vol: v, .. } => vol(v).is_some_and(|s| !s.staged),
            Call::Publish { vol: v, target, .. } => {
                vol(v).is_some_and(|s| s.targets[usize::from(target)].is_none())
            }
            _ => false,
        }
    }

    /// A NodeStageVolume of a volume staged before and unstaged since goes, one time in two, to
    /// the staging path it was not staged at last (a kubelet restarted with another plugin
    /// folder): the CO's "staging_target_path" is its own to choose at each stage. Drawn only
    /// for such a call, so that a walk is the same as before up to its first stage again.
    fn restage(&mut self, m: &Model, call: Call) -> Call {
        match call {
            Call::Stage { vol, path }
                if m.vol(vol).is_some_and(|s| {
                    s.life == Life::Alive && s.staged_ever && !s.staged && !s.second_staged
                }) && self.one_in(2) =>
            {
                Call::Stage { vol, path: (path + 1) % STAGINGS }
            }
            other => other,
        }
    }

    /// A fresh name, once used, is used up.
    fn took(&mut self, call: &Call) {
        match *call {
            Call::CreateVolume { name, .. } if name == self.next_name => self.next_name += 1,
            Call::CreateSnapshot { name, .. } if name == self.next_snap_name => {
                self.next_snap_name += 1
            }
            Call::CreateGroup { name, .. } if name == self.next_group_name => {
                self.next_group_name += 1
            }
            _ => {}
        }
    }
}

/// Volume `v`'s CreateVolume again: the request it was made with (a CO's retry, late or not).
pub(super) fn made_again(v: Vol, s: &VolState) -> Call {
    Call::CreateVolume { name: v.name, mib: s.mib, limit: s.asked_limit, source: s.source }
}

/// Volume `s`'s size in whole MiB, at least what it was answered or accepted at (0: neither
/// known), from which a larger size, a clone's or a growth's, is asked.
pub(super) fn mib_of(s: &VolState) -> u32 {
    mib_ceil(s.capacity.max(s.floor)).unwrap_or(0)
}

/// Whole MiB at most `bytes`, as a size the walk asks for.
pub(super) fn mib_floor(bytes: i64) -> u32 {
    u32::try_from(bytes.max(0) / MIB).unwrap_or(u32::MAX - 1)
}

/// Whole MiB at least `bytes` (a size in MiB that holds it); `None` when that is below 0 or
/// past a `u32`, each caller saying what stands for it then.
pub(super) fn mib_ceil(bytes: i64) -> Option<u32> {
    u32::try_from(bytes.saturating_add(MIB - 1) / MIB).ok()
}

/// `(required, limit)` MiB relative to a source of `of` MiB by `(dr, dl)` (see
/// [`Generator::relative`]); a size that would be 0 or less is left unset, and a limit never
/// below the size required (a range no volume meets is a malformed request, the fixed cases'
/// to send: here it would hide the answer the history calls for behind INVALID_ARGUMENT).
fn relative(of: u32, (dr, dl): (i8, Option<i8>)) -> (u32, u32) {
    let at = |d: i8| of.saturating_add_signed(i32::from(d));
    let mib = if of == 0 { 0 } else { at(dr) };
    let limit = match dl {
        Some(d) if of > 0 => at(d).max(mib).max(1),
        _ => 0,
    };
    (mib, limit)
}
