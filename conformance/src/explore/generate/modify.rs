//! ControllerModifyVolume with a key no plugin takes beside the suite's mutable parameters, and
//! the volume's own CreateVolume again after such a call was refused: the row "Parameters not
//! supported" says "The SP MUST NOT have applied any modification to the volume as part of this
//! specific call", and a CreateVolume again compares the volume's `mutable_parameters` with the
//! request's (none), so a plugin that applied the keys it takes before refusing shows there: the
//! same request met before the refusal, refused after it.

use super::super::call::{Call, Vol};
use super::super::model::{Model, VolState};
use super::{Generator, made_again};

impl Generator {
    /// Three move kinds, appended last: the modification with the unknown key of a volume
    /// whose CreateVolume again was met (so that a refusal has a before and an after to
    /// compare), of any live volume, and the CreateVolume again of a volume one was refused
    /// for.
    pub(super) fn unsupported_modify(
        &mut self,
        m: &Model,
        alive: &[(Vol, &VolState)],
        kinds: &mut Vec<(u32, Vec<Call>)>,
    ) {
        if !m.caps.modify {
            kinds.extend([(2, Vec::new()), (1, Vec::new()), (3, Vec::new())]);
            return;
        }
        let met = alive.iter().filter(|(_, s)| s.retried_ok.is_some());
        kinds.push((2, met.map(|(v, _)| Call::ModifyUnsupported(*v)).collect()));
        kinds.push((1, alive.iter().map(|(v, _)| Call::ModifyUnsupported(*v)).collect()));
        let again = alive.iter().filter(|(_, s)| s.modify_refused).map(|(v, s)| made_again(*v, s));
        kinds.push((3, again.collect()));
    }
}
