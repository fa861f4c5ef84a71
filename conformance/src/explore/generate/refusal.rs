//! Moves whose answer may be a refusal the history is then held to: a clone or restore asking
//! for less than its source (refused OUT_OF_RANGE, as the row's example says), then the same
//! request again or another request of the name; DeleteVolumeGroupSnapshot with `snapshot_ids`
//! that are not its group's exactly (one more, of a snapshot cut alone or of another group; one
//! fewer).

use super::super::call::{Call, Grp, Mismatch, Source};
use super::super::model::repeats::TIMES;
use super::super::model::{Life, Model};
use super::{Generator, MAX_LIVE, mib_ceil};

impl Generator {
    /// A clone or restore of a fresh name asking for one MiB less than its source, both as
    /// `required_bytes` and `limit_bytes` (sources of 2 MiB or more); a name whose create was
    /// refused for a reason that lasts, asked again the same way, or with no source and no
    /// size. Appended last, so the kinds before keep their places in the swarm.
    pub(super) fn refusals(&mut self, m: &Model, kinds: &mut Vec<(u32, Vec<Call>)>) {
        let room = m.live_counts().0 < MAX_LIVE;
        let below = |size: i64| {
            let of = mib_ceil(size).unwrap_or(0);
            (of >= 2).then(|| of - 1)
        };
        let volumes = m
            .vols
            .iter()
            .filter(|(_, s)| s.life == Life::Alive)
            .filter_map(|(v, s)| below(s.capacity).map(|mib| (Source::Volume(*v), mib)));
        let snapshots = m
            .snaps
            .iter()
            .filter(|(_, s)| s.life == Life::Alive)
            .filter_map(|(x, s)| below(s.size).map(|mib| (Source::Snapshot(*x), mib)));
        let name = self.next_name;
        let smaller = volumes
            .chain(snapshots)
            .filter(|_| room)
            .map(|(src, mib)| Call::CreateVolume { name, mib, limit: mib, source: Some(src) })
            .collect();
        kinds.push((1, smaller));
        let again = m.refused_creates.iter().map(|(n, r)| Call::CreateVolume {
            name: *n,
            mib: r.mib,
            limit: r.limit,
            source: Some(r.source),
        });
        kinds.push((2, again.collect()));
        let other = m.refused_creates.keys().filter(|_| room).map(|n| Call::CreateVolume {
            name: *n,
            mib: 0,
            limit: 0,
            source: None,
        });
        kinds.push((1, other.collect()));
    }

    /// A standing group deleted with a list not its own: with the newest snapshot cut alone,
    /// with another standing group's first snapshot, or without its last snapshot. Appended
    /// last, so the kinds before keep their places in the swarm.
    pub(super) fn mismatched(&mut self, m: &Model, kinds: &mut Vec<(u32, Vec<Call>)>) {
        let standing: Vec<Grp> =
            m.groups.iter().filter(|(_, x)| x.life == Life::Alive).map(|(g, _)| *g).collect();
        let lone = m.snaps.iter().rev().find(|(_, x)| x.life == Life::Alive).map(|(s, _)| *s);
        let calls = standing
            .iter()
            .flat_map(|g| {
                let other = standing.iter().find(|o| *o != g).copied();
                [lone.map(Mismatch::Lone), other.map(Mismatch::Other), Some(Mismatch::Short)]
                    .into_iter()
                    .flatten()
                    .map(|ids| Call::DeleteGroupMismatch { group: *g, ids })
            })
            .collect();
        kinds.push((1, calls));
    }

    /// A create from a live source refused with a code that may pass (`judge/repeats`), sent
    /// again under a new name (the refused ones are not used again), until it was refused so
    /// three times in a row: a plugin that fails the same request every time is told from one
    /// that failed once. Appended last, so the kinds before keep their places in the swarm.
    pub(super) fn repeated_refusals(&mut self, m: &Model, kinds: &mut Vec<(u32, Vec<Call>)>) {
        let room = m.live_counts().0 < MAX_LIVE;
        let name = self.next_name;
        let calls = m.repeats.refused.iter().filter(|(_, r)| room && r.times < TIMES);
        let calls = calls.map(|((source, _), r)| Call::CreateVolume {
            name,
            mib: r.mib,
            limit: r.limit,
            source: Some(*source),
        });
        kinds.push((4, calls.collect()));
    }
}
