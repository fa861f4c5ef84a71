//! Late retries: a CO resends a request that was answered OK after a timeout, possibly much
//! later, after other calls changed the volume (grown, modified, published, snapshotted) or
//! the snapshot's source (grown, deleted). The answer is held, field by field, to the first
//! answer to the same request, in each field the spec ties to the object rather than to the
//! moment; and ValidateVolumeCapabilities, idempotent, confirms the same capability the same
//! way while the volume's mutable parameters stay as they were.

use super::super::call::{Snap, Vol};
use super::super::model::{Life, Model};
use super::super::rules::Rule;
use super::Verdicts;

impl Model {
    /// A CreateVolume again of a name whose volume stands, answered OK with its id: "the
    /// corresponding CreateVolumeResponse", field by field. The content source is the
    /// volume's, whatever happened since; a capacity is never below what was accepted (nor
    /// above a limit that still binds); and while the volume was neither expanded nor
    /// modified, the first request again is answered the first capacity.
    pub(super) fn retried_volume(
        &self,
        v: &mut Verdicts,
        cur: Vol,
        what: &str,
        capacity: i64,
        source: &Option<(bool, String)>,
        (mib, limit): (u32, u32),
    ) {
        let Some(s) = self.vols.get(&cur) else { return };
        v.check(Rule::CreateRetrySame);
        let words = |x: &Option<(bool, String)>| match x {
            None => "no content_source".to_owned(),
            Some((true, id)) => format!("snapshot {id}"),
            Some((false, id)) => format!("volume {id}"),
        };
        if *source != s.answered_source {
            v.broke(
                Rule::CreateRetrySame,
                format!(
                    "{what} answered content_source {}; its first answer said {}",
                    words(source),
                    words(&s.answered_source)
                ),
            );
        }
        let first = mib == s.mib && limit == s.asked_limit;
        if first
            && !s.expanded
            && !s.modified
            && capacity > 0
            && s.first_capacity > 0
            && capacity != s.first_capacity
        {
            v.broke(
                Rule::CreateRetrySame,
                format!(
                    "{what}, the first request again, never expanded, answered {capacity} bytes; its first answer said {}",
                    s.first_capacity
                ),
            );
        }
        self.capacity(v, cur, capacity, what);
    }

    /// A CreateSnapshot again of a name whose snapshot stands, answered OK with its id: the
    /// corresponding response. A snapshot's source, size and creation time are what it was cut
    /// with, whatever its source went through since (grown, deleted); a size or time not known
    /// yet (0, unset) may become known.
    pub(super) fn retried_snapshot(
        &self,
        v: &mut Verdicts,
        cur: Snap,
        what: &str,
        got: &str,
        size: i64,
        created: Option<(i64, i32)>,
    ) {
        let Some(s) = self.snaps.get(&cur) else { return };
        v.check(Rule::SnapshotRetrySame);
        let mut differs = Vec::new();
        if got != s.answered_source {
            differs.push(format!("source_volume_id {got:?}, first {:?}", s.answered_source));
        }
        if size > 0 && s.size > 0 && size != s.size {
            differs.push(format!("size_bytes {size}, first {}", s.size));
        }
        if let (Some(a), Some(b)) = (created, s.created)
            && a != b
        {
            differs.push(format!("creation_time {a:?}, first {b:?}"));
        }
        if !differs.is_empty() {
            v.broke(Rule::SnapshotRetrySame, format!("{what} answered {}", differs.join("; ")));
        }
    }

    /// ValidateVolumeCapabilities of a live volume answered OK: confirmed (or not) as it was
    /// the first time, while nothing changed its mutable parameters (the request is always the
    /// same: its capability, its `volume_context`).
    pub(super) fn validated(&mut self, v: &mut Verdicts, vol: Vol, confirmed: bool) {
        let Some(s) = self.vols.get_mut(&vol).filter(|s| s.life == Life::Alive) else { return };
        match s.confirmed {
            None => s.confirmed = Some(confirmed),
            Some(was) => {
                v.check(Rule::ValidateIdempotent);
                if was != confirmed {
                    let say = |c: bool| if c { "confirmed" } else { "left confirmed unset" };
                    v.broke(
                        Rule::ValidateIdempotent,
                        format!(
                            "ValidateVolumeCapabilities of {vol} (id {}) again, the same request, {}; it {} before",
                            s.id,
                            say(confirmed),
                            say(was)
                        ),
                    );
                }
            }
        }
    }
}
