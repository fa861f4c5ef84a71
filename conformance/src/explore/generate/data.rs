//! Moves that carry the workload's data (`model/marks`) where a copy would show it wrong: a
//! snapshot or a clone of a volume published read-write (a new mark is written into it right
//! after, so a copy made later differs), a restore of a snapshot whose volume was written since
//! it was cut, and the next lifecycle move of a copy never published yet (its first publish
//! reads what it was made with). The plain moves reach each of these, but seldom in a row.
//! Copies ask for their source's size (a plugin may refuse a copy without one).

use super::super::call::{Call, Source, Vol};
use super::super::model::marks::From;
use super::super::model::{Life, Model, TARGETS};
use super::{Generator, MAX_LIVE, mib_ceil, mib_of};

impl Generator {
    /// Three move kinds, appended last, so the kinds before keep their places in the swarm;
    /// empty where the walk writes no marks.
    pub(super) fn data_paths(&mut self, m: &Model, kinds: &mut Vec<(u32, Vec<Call>)>) {
        let (mut copies, mut restores, mut bring_up) = (Vec::new(), Vec::new(), Vec::new());
        let marks = &m.seen.marks;
        let room = m.live_counts().0 < MAX_LIVE;
        for (v, s) in m.vols.iter().filter(|(_, s)| s.life == Life::Alive && marks.on) {
            let Some(held) = marks.held(*v) else { continue };
            if held.from == From::Written && s.targets.contains(&Some(false)) {
                copies.push(Call::CreateSnapshot { name: self.next_snap_name, source: *v });
                if room {
                    copies.push(Call::CreateVolume {
                        name: self.next_name,
                        mib: mib_of(s),
                        limit: 0,
                        source: Some(Source::Volume(*v)),
                    });
                }
            }
            if let From::Source(_) = held.from {
                bring_up.extend(next_move(m, *v));
            }
        }
        for (x, s) in m.snaps.iter().filter(|(_, s)| s.life == Life::Alive && room) {
            let cut = marks.snaps.get(&s.id).copied().flatten();
            let now = marks.held(s.source).map(|h| h.mark);
            if cut.is_some() && now.is_some() && cut != now {
                restores.push(Call::CreateVolume {
                    name: self.next_name,
                    mib: mib_ceil(s.size).unwrap_or(0),
                    limit: 0,
                    source: Some(Source::Snapshot(*x)),
                });
            }
        }
        kinds.push((3, copies));
        kinds.push((4, restores));
        kinds.push((6, bring_up));
    }
}

/// The next move that brings live `v` to a read-write target: published to the node, staged,
/// then published at a free target; none once a target stands.
fn next_move(m: &Model, v: Vol) -> Option<Call> {
    let s = m.vol(v)?;
    if s.targets.iter().any(Option::is_some) {
        return None;
    }
    if m.caps.publish && s.published.is_none() {
        return Some(Call::ControllerPublish { vol: v, readonly: false, own: true });
    }
    if m.caps.stage && !s.staged {
        return Some(Call::Stage { vol: v, path: s.staging });
    }
    let target = (0..TARGETS as u8).find(|t| s.targets[usize::from(*t)].is_none())?;
    Some(Call::Publish { vol: v, target, readonly: false })
}
