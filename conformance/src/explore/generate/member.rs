//! Restores of a group snapshot's snapshots: each, at every size the spec lets no plugin
//! refuse (none, its own `size_bytes`, one MiB more), while its group stands (its volume alive
//! or deleted since) and after the group was deleted (the row "Source does not exist"). A
//! group's snapshots are snapshots like any other, and a plugin may restore them through code
//! of its own (their files, their ids).

use super::super::call::{Call, Source};
use super::super::model::{Life, Model};
use super::{Generator, MAX_LIVE, mib_ceil};

impl Generator {
    /// One move kind: a restore of a fresh name from a group's snapshot. Appended last, so the
    /// kinds before keep their places in the swarm.
    pub(super) fn member_restores(&mut self, m: &Model, kinds: &mut Vec<(u32, Vec<Call>)>) {
        let room = m.live_counts().0 < MAX_LIVE;
        let name = self.next_name;
        let mut calls = Vec::new();
        for (g, x) in m.groups.iter().filter(|(_, x)| room && x.life != Life::Lost) {
            for nth in (0..x.members.len()).filter_map(|n| u8::try_from(n).ok()) {
                let source = Some(Source::Member(*g, nth));
                let size = x.sizes.get(usize::from(nth)).copied().unwrap_or(0);
                let of = mib_ceil(size).unwrap_or(0);
                calls.push(Call::CreateVolume { name, mib: 0, limit: 0, source });
                // Its size known and standing: exactly it, and larger.
                if of > 0 && x.life == Life::Alive {
                    calls.push(Call::CreateVolume { name, mib: of, limit: of, source });
                    calls.push(Call::CreateVolume { name, mib: of + 1, limit: 0, source });
                }
            }
        }
        kinds.push((2, calls));
    }
}
