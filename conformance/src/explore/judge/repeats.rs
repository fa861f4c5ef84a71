//! Refusals that never pass: a CreateVolume of a new name from a live source, valid and at a
//! size the spec lets no plugin refuse, answered UNKNOWN, INTERNAL or a transient code is not
//! judged once (a server may fail once, a condition may pass), but the model remembers it per
//! (source, request shape). Refused so with the same code three times in a row, the creates
//! sent one at a time (no other history in flight), while the plugin creates from other
//! sources of the kind with OK:
//! - UNKNOWN or INTERNAL break the support MUST (`clone-supported`, `restore-supported`): gRPC
//!   gives these codes to a server that failed, and one that fails the same request every time
//!   does not support it;
//! - UNAVAILABLE, RESOURCE_EXHAUSTED, ABORTED or DEADLINE_EXCEEDED are the note
//!   `refusal-transient-repeated`: the spec bounds no transient condition's length.

use tonic::Code;

use super::super::call::Source;
use super::super::model::Model;
use super::super::model::repeats::{Repeat, TIMES};
use super::super::rules::Rule;
use super::{Reply, Verdicts, show};

/// Codes gRPC gives to a server that failed.
const FAILED: [Code; 2] = [Code::Unknown, Code::Internal];
/// Codes of a condition that may pass: gRPC's transient ones and the Error Scheme's of the
/// moment ("Unable to provision", "Operation pending for volume").
const TRANSIENT: [Code; 4] =
    [Code::Unavailable, Code::ResourceExhausted, Code::Aborted, Code::DeadlineExceeded];

impl Model {
    /// CreateVolume of a new name from the live `source` answered `reply`. `held`: the
    /// support rule the create is held to and the source in a finding's words, when the
    /// create is one the spec lets no plugin refuse (`judge/support`); `shape`: the request's
    /// (`Call::shape`).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn refused_repeatedly(
        &mut self,
        v: &mut Verdicts,
        what: &str,
        source: Source,
        held: Option<(Rule, String)>,
        (mib, limit): (u32, u32),
        shape: &'static str,
        reply: &Reply,
    ) {
        let key = (source, shape);
        let Reply::Err { code, .. } = reply else {
            self.repeats.refused.remove(&key);
            if matches!(reply, Reply::Ok(_)) {
                self.repeats.served.insert(source);
            }
            return;
        };
        let counted = FAILED.contains(code) || TRANSIENT.contains(code);
        let Some((rule, from)) = held.filter(|_| counted && self.caps.alone) else {
            self.repeats.refused.remove(&key);
            return;
        };
        let times = match self.repeats.refused.get(&key) {
            Some(r) if r.code == *code => r.times.saturating_add(1),
            _ => 1,
        };
        let repeat = Repeat { mib, limit, code: *code, times };
        self.repeats.refused.insert(key, repeat);
        // Creates of the kind served with OK, from another source: not a plugin that creates
        // nothing of the kind now.
        let snapshot = |s: &Source| !matches!(s, Source::Volume(_));
        let served =
            self.repeats.served.iter().any(|s| *s != source && snapshot(s) == snapshot(&source));
        if times < TIMES || !served {
            return;
        }
        let rule = if FAILED.contains(code) { rule } else { Rule::RefusalTransientRepeated };
        v.check(rule);
        v.broke(
            rule,
            format!(
                "{what} from {from}, answered {} {times} times in a row (one at a time), while creates from other sources of the kind answered OK",
                show(reply)
            ),
        );
    }
}
