//! Refusals that must last and leave nothing behind: a CreateVolume of a new name from a live
//! source refused for a reason that does not pass by itself (OUT_OF_RANGE, "Unsupported
//! `capacity_range`"; INVALID_ARGUMENT) keeps its name free. The identical request again, with
//! nothing changed that the reason rests on (a source's size only grows, a snapshot's not at
//! all), must not be answered OK with a volume the reason rules out (a clone smaller than its
//! source; a restore smaller than its snapshot is `restore-at-least-snapshot`'s); and a later
//! create of the name that is another request finds no volume of it (no ALREADY_EXISTS, no
//! volume with the refused request's source).

use tonic::Code;

use super::super::call::Source;
use super::super::model::{Life, MIB, Model, Refused};
use super::super::rules::Rule;
use super::{Body, Reply, Verdicts, show};

/// Refused names kept free at once: past it, the oldest is used no more (burnt), so that the
/// walk's choices stay few (a plugin that refuses every such request would otherwise leave a
/// name behind at each).
const KEPT: usize = 4;

/// The codes whose reason lasts: the caller "MUST fix the capacity range" or "MUST fix the
/// field" before retrying.
const LASTING: [Code; 2] = [Code::OutOfRange, Code::InvalidArgument];

impl Model {
    /// CreateVolume of name #`name` (no volume of it standing) from `source`, refused: when
    /// the code is one whose reason lasts and the source is alive, the name is kept free (not
    /// burnt) and the refusal remembered for what comes next of the name; true then.
    pub(super) fn refusal_kept(
        &mut self,
        name: u16,
        (mib, limit): (u32, u32),
        source: Option<Source>,
        reply: &Reply,
    ) -> bool {
        let (Some(from), Reply::Err { code, message }) = (source, reply) else { return false };
        let size = match from {
            Source::Volume(sv) => {
                self.vols.get(&sv).filter(|s| s.life == Life::Alive).map(|s| s.capacity)
            }
            x => self.restorable(x).filter(|s| s.life == Life::Alive).map(|s| s.size),
        };
        let Some(size) = size.filter(|_| LASTING.contains(code)) else { return false };
        if self.refused_creates.len() >= KEPT
            && let Some((oldest, _)) = self.refused_creates.pop_first()
        {
            self.names.entry(oldest).or_default().burnt = true;
        }
        self.refused_creates.insert(
            name,
            Refused {
                mib,
                limit,
                source: from,
                source_size: size,
                code: *code,
                message: message.clone(),
            },
        );
        self.names.entry(name).or_default();
        true
    }

    /// A CreateVolume of name #`name` after the refusal `refused` of it, nothing made of the
    /// name since. The same request: an OK is held to the refusal's reason (a clone no smaller
    /// than its source, when the first refusal was OUT_OF_RANGE and the range asked lets it be
    /// smaller). Another request: no ALREADY_EXISTS, and an OK volume carries the source asked,
    /// not the refused request's.
    pub(super) fn after_refusal(
        &self,
        v: &mut Verdicts,
        what: &str,
        refused: &Refused,
        (mib, limit, source): (u32, u32, Option<Source>),
        reply: &Reply,
    ) {
        let same = (refused.mib, refused.limit, Some(refused.source)) == (mib, limit, source);
        let first = format!(
            "refused before with {}: {}",
            crate::suite::code_name(refused.code),
            refused.message
        );
        if same {
            let Source::Volume(sv) = refused.source else { return };
            if self.vols.get(&sv).is_none_or(|s| s.life != Life::Alive) {
                return;
            }
            let below = i64::from(limit) * MIB;
            if refused.code != Code::OutOfRange
                || refused.source_size == 0
                || (limit > 0 && below >= refused.source_size)
            {
                return;
            }
            v.check(Rule::RefusalLasts);
            let Reply::Ok(Body::Volume { capacity, .. }) = reply else { return };
            if *capacity > 0 && *capacity < refused.source_size {
                v.broke(
                    Rule::RefusalLasts,
                    format!(
                        "{what}, the same request {first}, answered OK: {capacity} bytes, cloned from {sv} of {} bytes",
                        refused.source_size
                    ),
                );
            }
            return;
        }
        v.check(Rule::RefusedNoTrace);
        match reply {
            Reply::Err { code: Code::AlreadyExists, .. } => v.broke(
                Rule::RefusedNoTrace,
                format!("{what}, another request after the one {first}, answered {}", show(reply)),
            ),
            Reply::Ok(Body::Volume { source: Some((snap, id)), .. }) if source.is_none() => {
                let kind = if *snap { "snapshot" } else { "volume" };
                v.broke(
                    Rule::RefusedNoTrace,
                    format!(
                        "{what} with no source, after one from a source {first}, answered a volume with content_source {kind} {id}"
                    ),
                );
            }
            _ => {}
        }
    }
}
