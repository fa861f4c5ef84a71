//! Group snapshots asked of a live volume and a deleted one, as a CO whose handles went stale
//! asks them, and the same request again after a refusal: a plugin that keeps a half-cut group
//! from the first call shows it in the second.

use super::super::call::{Call, Vol};
use super::super::model::{Life, Model};
use super::Generator;

impl Generator {
    /// Two move kinds, appended last, so the kinds before keep their places in the swarm: a
    /// new group of a live volume and a deleted one (either order), and a refused one again.
    pub(super) fn stale_groups(&mut self, m: &Model, kinds: &mut Vec<(u32, Vec<Call>)>) {
        let live: Vec<Vol> =
            m.vols.iter().filter(|(_, s)| s.life == Life::Alive).map(|(v, _)| *v).take(2).collect();
        let gone: Vec<Vol> = self.stale(
            m.vols.iter().rev().filter(|(_, s)| s.life == Life::Dead).map(|(v, _)| *v).collect(),
        );
        let name = self.next_group_name;
        let mut fresh = Vec::new();
        for (a, d) in live.iter().flat_map(|a| gone.iter().map(move |d| (*a, *d))) {
            fresh.push(Call::CreateGroup { name, vols: [a, d] });
            fresh.push(Call::CreateGroup { name, vols: [d, a] });
        }
        kinds.push((1, fresh));
        let again = m
            .stale_groups
            .iter()
            .map(|(name, vols)| Call::CreateGroup { name: *name, vols: *vols });
        kinds.push((2, again.collect()));
    }
}
