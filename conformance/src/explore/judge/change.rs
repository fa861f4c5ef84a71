//! The answers of the calls that change a live volume held to the history: its expansion (the
//! same expansion again, in the same use, after OK, is OK again) and the modification of its
//! mutable parameters (idempotent; NOT_FOUND once deleted).

use tonic::Code;

use super::super::call::Vol;
use super::super::model::{Life, MIB, Model, VolState};
use super::super::rules::{NOT_EXIST, Rule};
use super::{Body, Reply, Verdicts, code, show};

impl Model {
    /// NodeExpandVolume: the row's NOT_FOUND once deleted; the same expansion again, in the
    /// same use, after OK, OK again (the RPC is idempotent). Asked only at sizes the volume
    /// has (below, at, no range; a limit at or above): a refusal where the node's file system
    /// is already as big as asked is the SHOULD `node-expand-smaller`, a note. An OK raises
    /// the floor to its `required_bytes` ("Volume MUST be at least this big") and lowers
    /// nothing: its `capacity_bytes` (OPTIONAL) is held to this request's range by the answer
    /// checks only, as the range of earlier requests binds their answers and the volume, not
    /// what the node says of its file system.
    pub(super) fn node_expand(
        &mut self,
        v: &mut Verdicts,
        vol: Vol,
        (mib, limit): (u32, u32),
        reply: &Reply,
    ) {
        let Some(s) = self.vols.get(&vol) else { return };
        let rpc = "NodeExpandVolume";
        if s.life == Life::Dead {
            v.row(rpc, NOT_EXIST, reply, &format!("of deleted {vol}"));
            return;
        }
        if let Some(s) = self.state_mut(vol) {
            s.retried_ok = None;
        }
        let Some(s) = self.vols.get(&vol) else { return };
        let required = i64::from(mib) * MIB;
        let again = s.node_expanded_ok == Some((mib, limit, s.usage()));
        // Its file system was made at the size its CreateVolume answered, or grown since by
        // the node to what a NodeExpandVolume asked.
        let done = mib > 0 && (required <= s.first_capacity || mib <= s.node_grown);
        let what =
            format!("{rpc} of {vol} (id {}) to {mib} MiB again, in the same use, after OK", s.id);
        match reply {
            Reply::Ok(_) => {
                if let Some(s) = self.state_mut(vol) {
                    s.node_expanded_ok = Some((mib, limit, s.usage()));
                    s.node_grown = s.node_grown.max(mib);
                    s.floor = s.floor.max(required);
                    // The node did its part: a later controller answer may say so.
                    s.grown.iter_mut().for_each(|(_, _, flag)| *flag = None);
                }
            }
            Reply::Err { code: Code::NotFound, .. } => self.not_found(v, vol, rpc, reply),
            Reply::Err { .. } if again => {
                v.ok(Rule::NodeExpandIdempotent, reply, &what);
            }
            Reply::Err { .. } if done => {
                v.broke(
                    Rule::NodeExpandSmaller,
                    format!(
                        "{rpc} of {vol} (id {}) to {mib} MiB, its file system already at least {} bytes, answered {}",
                        s.id,
                        s.first_capacity.max(i64::from(s.node_grown) * MIB),
                        show(reply)
                    ),
                );
            }
            Reply::Err { .. } => {}
        }
    }

    /// ControllerExpandVolume to `required_bytes` of `mib` MiB and `limit_bytes` of `limit` MiB
    /// (0: not set). An OK is held to the range asked ("Volume MUST be at least this big",
    /// "Volume MUST not be bigger than this"), and its limit binds the volume's later reads
    /// until another expansion answers OK.
    pub(super) fn expand(
        &mut self,
        v: &mut Verdicts,
        vol: Vol,
        (mib, limit): (u32, u32),
        reply: &Reply,
    ) {
        let Some(s) = self.vols.get(&vol) else { return };
        if s.life == Life::Dead {
            v.row(
                "ControllerExpandVolume",
                NOT_EXIST,
                reply,
                &format!("of deleted {vol} (id {})", s.id),
            );
            return;
        }
        // Its size may change: a CreateVolume again met before says nothing of after.
        if let Some(s) = self.state_mut(vol) {
            s.retried_ok = None;
        }
        let Some(s) = self.vols.get(&vol) else { return };
        let required = i64::from(mib) * MIB;
        let limit_bytes = i64::from(limit) * MIB;
        // A limit the volume already passed cannot be met (no expansion shrinks): the row
        // "Unsupported capacity_range" (OUT_OF_RANGE), not the SHOULD of a size it has, nor a
        // retry's OK, binds the answer then.
        let meetable = s.meets_limit(limit);
        let smaller = s.capacity > 0 && required <= s.capacity && meetable;
        // Out of order for a plugin without ONLINE expansion: the row "Volume in use"
        // (FAILED_PRECONDITION) or OK; refused, the volume keeps its size.
        let grows = s.capacity > 0 && s.capacity < required;
        if !self.caps.online
            && !s.unused()
            && let Reply::Err { code: Code::FailedPrecondition, .. } = reply
        {
            if grows {
                self.refused_expand(vol, required, Rule::ExpandRefusedKept);
            }
            return;
        }
        // The same expansion again in the same use, or (a CO's late retry) a size answered
        // OK before, in any use the walk may expand in.
        // In another use, the row "Volume in use" (FAILED_PRECONDITION: the file system
        // cannot grow while staged or published) may apply where it did not before.
        let first =
            s.grown.iter().find(|(m, l, _)| (*m, *l) == (mib, limit)).map(|(_, _, flag)| *flag);
        let again = meetable
            && (s.expanded_ok == Some((mib, limit, s.usage()))
                || (first.is_some() && code(reply) != Code::FailedPrecondition));
        match reply {
            Reply::Ok(body) => {
                let (capacity, node) = if let Body::Expanded { capacity, node } = body {
                    (*capacity, Some(*node))
                } else {
                    (0, None)
                };
                let what =
                    format!("ControllerExpandVolume of {vol} (id {}) to {required} bytes", s.id);
                // `capacity_bytes` is REQUIRED here ("Capacity of volume after expansion"), so
                // 0 is no "unknown" as in CreateVolume's answer: it is less than was asked.
                if matches!(body, Body::Expanded { .. }) {
                    v.check(Rule::CapacityAtLeast);
                    if capacity < required {
                        v.broke(
                            Rule::CapacityAtLeast,
                            format!("{what} answered capacity_bytes {capacity}"),
                        );
                    }
                    if limit > 0 {
                        v.check(Rule::CapacityAtMost);
                        if capacity > limit_bytes {
                            v.broke(
                                Rule::CapacityAtMost,
                                format!(
                                    "{what}, limit_bytes {limit_bytes}, answered capacity_bytes {capacity}"
                                ),
                            );
                        }
                    }
                }
                // Compared only at the capacity the first answer gave: a volume grown since
                // leaves the node more to do.
                if let (Some(Some((was, at))), Some(now)) = (first, node)
                    && at == capacity
                    && capacity > 0
                {
                    v.check(Rule::ExpandFlagSame);
                    if was != now {
                        v.broke(
                            Rule::ExpandFlagSame,
                            format!(
                                "{what} again answered node_expansion_required {now}; the first answer to it said {was}, and neither an expansion nor a NodeExpandVolume answered OK since"
                            ),
                        );
                    }
                }
                if let Some(s) = self.state_mut(vol) {
                    s.chose.refused_expand = None;
                    s.floor = s.floor.max(required);
                    s.limit = limit_bytes;
                    s.capacity = capacity.max(0);
                    s.expanded = true;
                    s.expanded_ok = Some((mib, limit, s.usage()));
                    if first.is_none() {
                        s.grown.push((mib, limit, node.map(|n| (n, capacity))));
                    }
                }
            }
            Reply::Err { code: Code::NotFound, .. } => {
                self.not_found(v, vol, "ControllerExpandVolume", reply);
            }
            Reply::Err { .. } if again => {
                v.ok(
                    Rule::ExpandIdempotent,
                    reply,
                    &format!(
                        "ControllerExpandVolume of {vol} (id {}) to {required} bytes again, after OK",
                        s.id
                    ),
                );
                if let Some(s) = self.state_mut(vol) {
                    s.expanded_ok = None;
                }
            }
            // The rows that say the volume was not grown: "could not be expanded" (Volume in
            // use), "the capacity range is not allowed by the Plugin" (Unsupported
            // capacity_range). Its size stays known; no read may show the size refused.
            Reply::Err { code: c @ (Code::FailedPrecondition | Code::OutOfRange), .. } => {
                if smaller {
                    refused_smaller(v, vol, s, required, reply);
                }
                let rule = if *c == Code::OutOfRange {
                    Rule::ExpandRefusedRangeKept
                } else {
                    Rule::ExpandRefusedKept
                };
                if grows {
                    self.refused_expand(vol, required, rule);
                }
                if let Some(s) = self.state_mut(vol) {
                    s.expanded = true;
                }
            }
            Reply::Err { .. } => {
                if smaller {
                    refused_smaller(v, vol, s, required, reply);
                }
                // Grown or not: its size is not known until it is read back.
                if let Some(s) = self.state_mut(vol) {
                    s.capacity = 0;
                    s.expanded = true;
                }
            }
        }
    }

    /// ControllerExpandVolume of `vol` to `required` bytes refused by the row of `rule`: the
    /// smallest size refused is the one no read may reach.
    fn refused_expand(&mut self, vol: Vol, required: i64, rule: Rule) {
        if let Some(s) = self.state_mut(vol) {
            s.chose.refused_expand = match s.chose.refused_expand {
                Some((was, r)) if was <= required => Some((was, r)),
                _ => Some((required, rule)),
            };
        }
    }

    /// ControllerModifyVolume (`unsupported`: with a key no plugin takes among the suite's
    /// keys): the row's NOT_FOUND for a deleted volume; for a live one, the same parameters
    /// again after an OK answer are answered OK (the RPC is idempotent). Refused with the row
    /// "Parameters not supported" (INVALID_ARGUMENT), nothing was applied: the volume is held
    /// to be as it was (`modify-refused-kept`, judged where a CreateVolume again shows it).
    /// An OK with the unknown key is not judged (no sentence makes a plugin refuse a key it
    /// does not know), but what it applied is the plugin's.
    pub(super) fn modify(&mut self, v: &mut Verdicts, vol: Vol, unsupported: bool, reply: &Reply) {
        let Some(s) = self.vols.get(&vol) else { return };
        let rpc = "ControllerModifyVolume";
        if s.life == Life::Dead {
            v.row(rpc, NOT_EXIST, reply, &format!("of deleted {vol} (id {})", s.id));
            return;
        }
        match reply {
            Reply::Ok(_) if unsupported => {
                if let Some(s) = self.state_mut(vol) {
                    s.modify_unknown = true;
                    s.retried_ok = None;
                    s.confirmed = None;
                }
            }
            Reply::Ok(_) => {
                if let Some(s) = self.state_mut(vol) {
                    s.modified = true;
                    s.retried_ok = None;
                    s.confirmed = None;
                }
            }
            Reply::Err { code: Code::NotFound, .. } => self.not_found(v, vol, rpc, reply),
            Reply::Err { .. } if s.modified && !unsupported => {
                let what = format!("{rpc} of {vol} (id {}) again, the same parameters", s.id);
                v.ok(Rule::ModifyIdempotent, reply, &what);
            }
            // Parameters the volume cannot take: the row's INVALID_ARGUMENT, nothing applied.
            Reply::Err { code: Code::InvalidArgument, .. } => {
                if let Some(s) = self.state_mut(vol) {
                    s.modify_refused = s.retried_ok.is_some();
                }
            }
            // No row says a refusal of another code applied nothing.
            Reply::Err { .. } => {
                if let Some(s) = self.state_mut(vol) {
                    s.modify_unknown = true;
                    s.retried_ok = None;
                    s.confirmed = None;
                }
            }
        }
    }
}

/// ControllerExpandVolume of `vol` (`s`) to `required` bytes, no more than it has, refused: "If a
/// volume corresponding to the specified volume ID is already larger than or equal to the target
/// capacity of the expansion request, the plugin SHOULD reply 0 OK".
fn refused_smaller(v: &mut Verdicts, vol: Vol, s: &VolState, required: i64, reply: &Reply) {
    v.broke(
        Rule::ExpandSmaller,
        format!(
            "ControllerExpandVolume of {vol} (id {}, {} bytes) to {required} bytes answered {}",
            s.id,
            s.capacity,
            show(reply)
        ),
    );
}
