//! ControllerExpandVolume as a CO sends it: larger, in the uses the plugin expands in and out
//! of order, to GetCapacity's maximum, to the size the volume has, of deleted volumes, and a
//! size answered OK before, sent again later. A CO may bound the size after expansion with
//! `limit_bytes` ("This allows CO to specify the capacity requirement of the volume after
//! expansion"), so one volume's growths go in turn with no limit, an exact size
//! (`limit_bytes` = `required_bytes`) and a limit one MiB or more above; and a volume grown
//! before is grown again to an exact size on purpose, so that a second and a third exact
//! growth of one volume are common.

use super::super::call::{Call, Vol};
use super::super::model::{MIB, Model, VolState};
use super::{Generator, mib_ceil, mib_floor, mib_of};

impl Generator {
    /// Six move kinds, in the places the walk's expansions always had in the swarm.
    pub(super) fn expansions(
        &mut self,
        m: &Model,
        alive: &[(Vol, &VolState)],
        dead: &[Vol],
        kinds: &mut Vec<(u32, Vec<Call>)>,
    ) {
        let grow = self.rng.u32(1..5);
        // Expanded where the plugin expands (in use only ONLINE); out of order otherwise.
        let larger = |want: bool| -> Vec<Call> {
            alive
                .iter()
                .filter(|(_, s)| m.may_expand(s) == want)
                .map(|(v, s)| {
                    let mib = mib_of(s) + grow;
                    Call::Expand { vol: *v, mib, limit: limit_in_turn(*v, s, mib) }
                })
                .collect()
        };
        kinds.push((3, larger(true)));
        kinds.push((1, larger(false)));
        // To the largest size GetCapacity said a volume may be made with (where that is a
        // small share of the pool, see `bounded`).
        let max =
            m.bounds.and_then(|b| b.max.filter(|x| *x <= b.available / 8)).map_or(0, mib_floor);
        kinds.push((
            1,
            alive
                .iter()
                .filter(|(_, s)| max > mib_of(s) && m.may_expand(s))
                .map(|(v, _)| Call::Expand { vol: *v, mib: max, limit: 0 })
                .collect(),
        ));
        kinds.push((
            1,
            alive
                .iter()
                .filter(|(_, s)| s.capacity > 0)
                .map(|(v, s)| Call::Expand { vol: *v, mib: mib_of(s), limit: 0 })
                .collect(),
        ));
        kinds.push((1, dead.iter().map(|v| Call::Expand { vol: *v, mib: 1, limit: 0 }).collect()));
        // A CO's late retry: an expansion answered OK, sent again after whatever came since
        // (its limit too), while the volume still meets that limit: one it has grown past
        // cannot be met, and an OK would say a size the request forbids.
        let late: Vec<Call> = alive
            .iter()
            .filter_map(|(v, s)| {
                let meetable: Vec<(u32, u32)> = s
                    .grown
                    .iter()
                    .filter(|(_, l, _)| s.meets_limit(*l))
                    .map(|(mib, l, _)| (*mib, *l))
                    .collect();
                if meetable.is_empty() {
                    return None;
                }
                let (mib, limit) = meetable[self.rng.usize(..meetable.len())];
                Some(Call::Expand { vol: *v, mib, limit })
            })
            .collect();
        kinds.push((2, late));
    }

    /// One move kind, appended last: a volume grown before (an expansion answered OK) and of
    /// known size, where the plugin expands, grown again by one MiB to an exact size.
    pub(super) fn exact_growth(
        &mut self,
        m: &Model,
        alive: &[(Vol, &VolState)],
        kinds: &mut Vec<(u32, Vec<Call>)>,
    ) {
        let again = alive
            .iter()
            .filter(|(_, s)| !s.grown.is_empty() && m.may_expand(s))
            .filter_map(|(v, s)| {
                let mib = mib_ceil(s.capacity).filter(|_| s.capacity > 0)?.saturating_add(1);
                Some(Call::Expand { vol: *v, mib, limit: mib })
            })
            .collect();
        kinds.push((2, again));
    }
}

/// The `limit_bytes` (MiB, 0: none) of a growth of `vol` (`s`) to `mib` MiB: in turn by the
/// sizes it was grown to before, none, `mib` exactly, or one or two MiB above; none while its
/// size is not known (a limit below what it has could not be met).
fn limit_in_turn(vol: Vol, s: &VolState, mib: u32) -> u32 {
    if s.capacity <= 0 || i64::from(mib) * MIB <= s.capacity {
        return 0;
    }
    match s.grown.len() % 3 {
        0 => 0,
        1 => mib,
        _ => mib.saturating_add(1 + u32::from(vol.name % 2)),
    }
}
