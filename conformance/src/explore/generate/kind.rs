//! Reads of a volume in a rarer state: a volume made from a clone or a restore, one whose
//! source is deleted, one staged at its second staging path, published at two targets or left
//! at one of two: ControllerGetVolume, ValidateVolumeCapabilities, NodeGetVolumeStats at each
//! path it is at, NodeExpandVolume and ControllerExpandVolume, asked of it as of any volume.
//! The moves that make such a volume are rare, and the reads among all live volumes would
//! seldom fall on it; a second target, readonly or not, is published on purpose too.

use csikit::v1::volume_capability::access_mode::Mode;

use super::super::call::{At, Call, Vol};
use super::super::model::{Life, Model, RARE, TARGETS};
use super::{Generator, mib_of};

impl Generator {
    /// Three move kinds: a read (or growth) of a live volume in a rarer state, the same of one
    /// at two targets, and a second target published for a volume at one. Appended last, so
    /// the kinds before keep their places in the swarm.
    pub(super) fn of_rare_kinds(&mut self, m: &Model, kinds: &mut Vec<(u32, Vec<Call>)>) {
        // The rarest apart (two targets at once), so that the others do not crowd it out.
        let (mut calls, mut two) = (Vec::new(), Vec::new());
        let rare = |v: Vol| m.kinds_of_vol(v, None).iter().any(|k| RARE.contains(k));
        for (v, s) in m.vols.iter().filter(|(v, s)| s.life == Life::Alive && rare(**v)) {
            let at = if s.targets.iter().flatten().count() >= 2 { &mut two } else { &mut calls };
            let mib = mib_of(s);
            at.extend([
                Call::GetVolume(*v),
                Call::Validate(*v),
                Call::Expand { vol: *v, mib: mib + 1, limit: 0 },
            ]);
            if s.staged {
                at.push(Call::Stats { vol: *v, at: At::Staging });
            }
            for t in (0..TARGETS as u8).filter(|t| s.targets[usize::from(*t)].is_some()) {
                at.push(Call::Stats { vol: *v, at: At::Target(t) });
            }
            if s.capacity > 0 {
                at.push(Call::NodeExpand { vol: *v, mib, limit: 0 });
            }
        }
        kinds.push((3, calls));
        kinds.push((2, two));
        // The rarest of them made: a second target (readonly or not) for a volume at one, of
        // SINGLE_NODE_MULTI_WRITER where the walk asks for it (the mode that is for it; the
        // others' second target, which the spec's table says SHOULD be refused, is asked by the
        // publishing moves).
        let readonly = self.rng.bool();
        let at_one: Vec<(Vol, usize)> = m
            .vols
            .iter()
            .filter(|(_, s)| s.life == Life::Alive && s.targets.iter().flatten().count() == 1)
            .filter_map(|(v, s)| Some((*v, s.targets.iter().position(Option::is_none)?)))
            .collect();
        let many = |v: Vol| m.mode_of(v) == Mode::SingleNodeMultiWriter;
        let pick = at_one.iter().any(|(v, _)| many(*v));
        let second = at_one
            .into_iter()
            .filter(|(v, _)| !pick || many(*v))
            .filter_map(|(vol, t)| {
                Some(Call::Publish { vol, target: u8::try_from(t).ok()?, readonly })
            })
            .collect();
        kinds.push((2, second));
    }
}
