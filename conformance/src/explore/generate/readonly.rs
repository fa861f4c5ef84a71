//! The pairs of readonly flags on one volume that a readonly mount must outlive, made on
//! purpose: a second target with the other flag than the one standing (read-write, then
//! readonly; readonly, then read-write), and a target published again with the other flag than
//! it last had (readonly where a read-write one stood, and the reverse). The publishing moves
//! draw the flag at random, so these pairs would be rare.

use csikit::v1::volume_capability::access_mode::Mode;

use super::super::call::Call;
use super::super::model::{Life, Model, TARGETS};
use super::Generator;

impl Generator {
    /// Two move kinds, appended last, so the kinds before keep their places in the swarm.
    pub(super) fn readonly_pairs(&mut self, m: &Model, kinds: &mut Vec<(u32, Vec<Call>)>) {
        let (mut second, mut again) = (Vec::new(), Vec::new());
        for (v, s) in m.vols.iter().filter(|(_, s)| s.life == Life::Alive) {
            let standing: Vec<bool> = s.targets.iter().flatten().copied().collect();
            let free = (0..TARGETS as u8).find(|t| s.targets[usize::from(*t)].is_none());
            // A second target where the access mode is for it (SINGLE_NODE_MULTI_WRITER, where
            // the walk asks for it): the others' is the SHOULD table's refusal.
            let many = !m.caps.single_node_modes || m.mode_of(*v) == Mode::SingleNodeMultiWriter;
            if let ([flag], Some(t), true) = (standing.as_slice(), free, many) {
                second.push(Call::Publish { vol: *v, target: t, readonly: !flag });
            }
            if standing.is_empty() {
                for t in 0..TARGETS as u8 {
                    if let Some(was) = s.targets_used[usize::from(t)] {
                        again.push(Call::Publish { vol: *v, target: t, readonly: !was });
                    }
                }
            }
        }
        kinds.push((2, second));
        kinds.push((1, again));
    }
}
