//! Valid calls a plugin must support: a CreateVolume from a live source (a volume of any kind
//! the walk made, a snapshot of any kind), at a size the spec lets no plugin refuse, is held to
//! the capability's MUST. A refusal is allowed only with a code CreateVolume's table gives for
//! the situation or a code that may pass by itself; any other code breaks "MUST support".

use tonic::Code;

use super::super::call::Source;
use super::super::model::{Life, MIB, Model};
use super::super::rules::Rule;
use super::{Reply, Verdicts, show};

/// The codes no row of CreateVolume's table (nor the general table) gives to a create from a
/// live, ready source of the walk's own parameters at an allowed size: INVALID_ARGUMENT ("Source
/// incompatible or not supported": the walk sends the source's own parameters, and the
/// capability rules out "not supporting the source"), FAILED_PRECONDITION (no row) and
/// UNIMPLEMENTED (the capability is advertised): each a plugin saying it does not serve the
/// request.
///
/// UNKNOWN and INTERNAL are left out too: they name no condition, and gRPC gives them to a
/// server that failed, not to a request it refuses; one of them does not show a plugin that
/// does not support the source (a restore refused so after one answered OK is the note
/// `restore-ready-refused`).
///
/// Left out, never judged here: NOT_FOUND (a live source's id: `volume-id-found` and
/// `snapshot-id-found` hold it), OUT_OF_RANGE (the row "Unsupported `capacity_range`" lets a
/// plugin refuse any size but the source's own, and even that one is the row's example),
/// ALREADY_EXISTS (names: the other rules), and the codes the Error Scheme leaves to the moment,
/// which a retry may find gone: RESOURCE_EXHAUSTED (the pool, "Unable to provision"), ABORTED
/// ("Operation pending for volume"), UNAVAILABLE and DEADLINE_EXCEEDED (gRPC's transient
/// codes). The spec gives no bound on how long those may last, so no history shows one to
/// be the plugin refusing the source rather than the moment; they are not judged.
pub(super) const NOT_A_REASON: [Code; 3] =
    [Code::InvalidArgument, Code::FailedPrecondition, Code::Unimplemented];

impl Model {
    /// CreateVolume of a new name from `source`, answered: held to the support MUST when the
    /// source is alive (a snapshot also described ready to use) and the size asked is one the
    /// spec allows for it (none; exactly its size; larger; a limit no lower than its size);
    /// broken by a refusal with a code of [`NOT_A_REASON`]. The rule and the source and size in
    /// a finding's words when the create is so held (`judge/repeats` holds it further).
    pub(super) fn source_supported(
        &self,
        v: &mut Verdicts,
        what: &str,
        source: Source,
        (mib, limit): (u32, u32),
        reply: &Reply,
    ) -> Option<(Rule, String)> {
        let (rule, size, from) = match source {
            Source::Volume(sv) => {
                let s = self.vols.get(&sv).filter(|s| s.life == Life::Alive)?;
                if !self.caps.clone {
                    return None;
                }
                (Rule::CloneSupported, s.capacity, format!("live volume {sv} (id {})", s.id))
            }
            // Cut alone or a group's: a snapshot either way.
            x => {
                let s = self.restorable(x).filter(|s| s.life == Life::Alive)?;
                if !self.caps.snapshots || !s.ready {
                    return None;
                }
                // Its volume deleted or not: a refusal that is no row's is the support MUST's
                // (one bug, one rule: a plugin that restores nothing without a size refuses
                // both); `snapshot-outlives-source` holds its NOT_FOUND and its listing.
                let gone = s.origin.and_then(|o| self.vols.get(&o));
                let gone = gone.is_some_and(|o| o.life == Life::Dead);
                let words = if gone { ", its volume deleted" } else { "" };
                let of = Model::restorable_words(x);
                (Rule::RestoreSupported, s.size, format!("{of} (id {}{words}, ready to use)", s.id))
            }
        };
        if !allowed_size(size, mib, limit) {
            return None;
        }
        v.check(rule);
        let asked = format!("{from}, {}", size_words(size, mib, limit));
        if let Reply::Err { code, .. } = reply
            && NOT_A_REASON.contains(code)
        {
            v.broke(rule, format!("{what} from {asked}, answered {}", show(reply)));
        }
        Some((rule, asked))
    }
}

/// A size the spec lets no plugin refuse for a source of `size` bytes (0: unknown): no range,
/// or (the size known) `required_bytes` unset or at least the source's and `limit_bytes` unset
/// or no lower than both ("The size of the volume MUST NOT be less than the size of the source
/// snapshot"; the "Unsupported `capacity_range`" row's OUT_OF_RANGE is not judged here, so a
/// plugin that makes no larger volume than its source is not held by this).
fn allowed_size(size: i64, mib: u32, limit: u32) -> bool {
    let required = i64::from(mib) * MIB;
    let limit = i64::from(limit) * MIB;
    if required == 0 && limit == 0 {
        return true;
    }
    size > 0 && (required == 0 || required >= size) && (limit == 0 || limit >= size.max(required))
}

/// The size asked, beside the source's, in a finding's words.
fn size_words(size: i64, mib: u32, limit: u32) -> String {
    let source = if size > 0 { format!("{size} bytes") } else { "of unknown size".to_owned() };
    match (mib, limit) {
        (0, 0) => format!("no capacity_range (the source {source})"),
        (m, 0) => format!("required {m} MiB (the source {source})"),
        (m, l) => format!("required {m} MiB, limit {l} MiB (the source {source})"),
    }
}

#[cfg(test)]
mod tests {
    use super::allowed_size;

    #[test]
    fn sizes_allowed_for_a_source_are_none_its_own_and_larger() {
        let mib = super::MIB;
        // Unknown size: only no range.
        assert!(allowed_size(0, 0, 0));
        assert!(!allowed_size(0, 2, 0));
        // Known: none, exactly, larger, a limit at or above.
        assert!(allowed_size(2 * mib, 2, 2));
        assert!(allowed_size(2 * mib, 3, 0));
        assert!(allowed_size(2 * mib, 0, 2));
        // Below the source's size, either way: the row's OUT_OF_RANGE, or any answer.
        assert!(!allowed_size(2 * mib, 1, 0));
        assert!(!allowed_size(2 * mib, 0, 1));
        assert!(!allowed_size(2 * mib, 3, 2));
        // A source of a size that is not whole MiB, asked in whole MiB above it.
        assert!(allowed_size(2 * mib + 1, 3, 3));
        assert!(!allowed_size(2 * mib + 1, 2, 0));
    }
}
