//! Sizes at the edges of what a volume has and of what the plugin can give.
//!
//! NodeExpandVolume in every shape a kubelet sends it: no `capacity_range`, one MiB below the
//! volume's size (a retry with a stale size), a size from before the controller's last
//! expansion, at its size, and with `limit_bytes` at or one MiB above it. ControllerExpandVolume
//! and CreateVolume past what the plugin can give: one MiB above GetCapacity's
//! `maximum_volume_size`, above its `available_capacity` (the volume's size plus all that is
//! free, and one MiB), or, with neither known, [`FAR`]. Appended last, so the kinds before keep
//! their places in the swarm.

use super::super::call::{Bounds, Call, FAR, Vol};
use super::super::model::{MIB, Model, VolState};
use super::{Generator, mib_ceil, mib_floor};

impl Generator {
    /// Three move kinds: NodeExpandVolume in one of its shapes, ControllerExpandVolume past
    /// what the plugin can give, CreateVolume past it.
    pub(super) fn sizes(
        &mut self,
        m: &Model,
        alive: &[(Vol, &VolState)],
        kinds: &mut Vec<(u32, Vec<Call>)>,
    ) {
        // The shape and the bound come from the volume and the history's length, not from the
        // walk's random numbers: the walk draws as many as it did before these moves.
        let turn = m.vols.len();
        let node = alive
            .iter()
            .filter(|(_, s)| s.capacity > 0)
            .filter_map(|(v, s)| {
                let shape = u8::try_from((turn + usize::from(v.name)) % 6).unwrap_or(0);
                let (mib, limit) = node_shape(s, shape)?;
                Some(Call::NodeExpand { vol: *v, mib, limit })
            })
            .collect();
        kinds.push((1, node));
        // In the uses the plugin expands in, as the walk's other expansions; past the maximum
        // (when known) one time in two, else past what is free.
        let max_first = turn.is_multiple_of(2);
        let grow = alive
            .iter()
            .filter(|(_, s)| s.capacity > 0 && m.may_expand(s))
            .filter_map(|(v, s)| {
                let now = mib_ceil(s.capacity)?;
                let mib = past_size(max_first, m.bounds, now).filter(|mib| *mib > now)?;
                Some(Call::Expand { vol: *v, mib, limit: 0 })
            })
            .collect();
        kinds.push((1, grow));
        let made = match past_size(max_first, m.bounds, 0) {
            Some(mib) if m.live_counts().0 < super::MAX_LIVE => {
                vec![Call::CreateVolume { name: self.next_name, mib, limit: 0, source: None }]
            }
            _ => Vec::new(),
        };
        kinds.push((1, made));
    }
}

/// A size past what the plugin can give a volume of `now` MiB, in MiB: one MiB above the
/// maximum GetCapacity gave (when `max_first` and it gave one), the volume's size plus all that
/// is free and one MiB (when it answered), or [`FAR`].
fn past_size(max_first: bool, b: Option<Bounds>, now: u32) -> Option<u32> {
    let mib = match b {
        Some(Bounds { max: Some(max), .. }) if max_first => mib_floor(max).saturating_add(1),
        Some(b) => mib_floor(b.available).saturating_add(now).saturating_add(1),
        None => FAR,
    };
    (mib > 0).then_some(mib)
}

/// NodeExpandVolume's `(required_bytes, limit_bytes)` in MiB for a volume of known size in
/// shape `shape`, or `None` where the shape does not apply: 0 no `capacity_range`; 1 one MiB
/// below its size (2 MiB or more); 2 the size its CreateVolume answered, after a controller's
/// expansion since; 3 at its size; 4 a limit at its size; 5 a limit one MiB above it.
fn node_shape(s: &VolState, shape: u8) -> Option<(u32, u32)> {
    let at = u32::try_from(s.capacity / MIB).ok().filter(|m| *m > 0)?;
    let up = mib_ceil(s.capacity)?;
    let first = u32::try_from(s.first_capacity / MIB).unwrap_or(0);
    match shape {
        0 => Some((0, 0)),
        1 => (at >= 2).then_some((at - 1, 0)),
        2 => (s.expanded && first > 0 && first < at).then_some((first, 0)),
        3 => Some((at, 0)),
        4 => Some((at, up)),
        _ => Some((at, up.saturating_add(1))),
    }
}
