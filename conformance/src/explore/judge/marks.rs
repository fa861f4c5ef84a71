//! The workload's data held to the history (see `model/marks`): a volume made from a snapshot,
//! a group's snapshot or another volume holds, when published, what its source held when the
//! snapshot was cut or the clone made (`source-data`); a volume holds, when published again,
//! the last mark written into it (`target-data`). A volume made empty is held to nothing: no
//! sentence says it is empty. Only a target that is a mount point is read.

use super::super::call::{Call, Source, Vol};
use super::super::model::marks::{From, Held, found_words, held_words};
use super::super::model::seen::Seen;
use super::super::model::{Life, Model};
use super::super::rules::Rule;
use super::seen::undoes_own;
use super::{Body, Reply, Verdicts, show};

impl Model {
    /// What `call` made holds, what its target held, and what was written after it; what
    /// was seen, for the coverage table.
    pub(super) fn judge_marks(
        &mut self,
        v: &mut Verdicts,
        call: &Call,
        reply: &Reply,
        seen: &Seen,
    ) -> Option<&'static str> {
        if !self.seen.marks.on {
            return None;
        }
        if matches!(reply, Reply::Ok(_)) {
            self.marks_made(call, reply);
        }
        self.marks_kept(v, call, reply, seen);
        let what = self.marks_read(v, call, seen);
        if let (Call::Publish { vol, .. }, Some(wrote)) = (*call, seen.wrote) {
            self.seen.marks.wrote(vol, wrote);
        }
        for (vol, wrote) in &seen.rewrote {
            self.seen.marks.wrote(*vol, *wrote);
        }
        what
    }

    /// A volume, snapshot or group made with OK by `call`: what it holds (made before: as
    /// it was).
    fn marks_made(&mut self, call: &Call, reply: &Reply) {
        match *call {
            Call::CreateVolume { name, source, .. } => {
                let Some(vol) = self.current(name) else { return };
                if self.seen.marks.vols.contains_key(&vol)
                    || self.vol(vol).is_none_or(|s| s.life != Life::Alive)
                {
                    return;
                }
                let held = match source {
                    _ if self.is_block(vol) => None,
                    None => Some(Held { mark: None, from: From::Empty }),
                    Some(Source::Volume(src)) => self
                        .cut_from(src)
                        .map(|mark| Held { mark, from: From::Source(Source::Volume(src)) }),
                    Some(s) => self
                        .restorable(s)
                        .and_then(|r| self.seen.marks.snaps.get(r.id).copied().flatten())
                        .map(|mark| Held { mark, from: From::Source(s) }),
                };
                self.seen.marks.vols.insert(vol, held);
            }
            Call::CreateSnapshot { source, .. } => {
                let Reply::Ok(Body::Snapshot { id, .. }) = reply else { return };
                let cut = self.cut_from(source);
                self.seen.marks.snaps.entry(id.clone()).or_insert(cut);
            }
            Call::CreateGroup { name, .. } => {
                let Some(g) = self.current_group(name).and_then(|g| self.groups.get(&g)) else {
                    return;
                };
                let cuts: Vec<(String, Option<Option<u32>>)> = g
                    .members
                    .iter()
                    .map(|(id, from)| {
                        let origin = g.source_ids.iter().position(|i| i == from);
                        let cut = origin.and_then(|i| self.cut_from(g.sources[i]));
                        (id.clone(), cut)
                    })
                    .collect();
                for (id, cut) in cuts {
                    self.seen.marks.snaps.entry(id).or_insert(cut);
                }
            }
            _ => {}
        }
    }

    /// Each read-write mount watched, still published there and of a volume whose data is
    /// known, holds after `call` the last mark written into the volume (before anything this
    /// call writes): a call that is not the volume's own undo changed what the volume holds.
    fn marks_kept(&mut self, v: &mut Verdicts, call: &Call, reply: &Reply, seen: &Seen) {
        for (vol, t, found) in &seen.marked {
            if !self.seen.rw_mounts.contains(&(*vol, *t)) || undoes_own(call, *vol, *t) {
                continue;
            }
            let standing = self.published_at(*vol, *t, false);
            let (Some(s), Some(held)) = (standing, self.seen.marks.held(*vol)) else { continue };
            // Unreadable: nothing told, nothing judged.
            if found.is(held.mark).unwrap_or(true) || held.from == From::Empty {
                continue;
            }
            v.broke(
                Rule::TargetData,
                format!(
                    "{call} answered {}, and target #{t} of {vol} (id {}), published read-write, holds {}; the last mark written into it was {} (the workload's writes and reads are not in a capture)",
                    show(reply),
                    s.id,
                    found_words(*found),
                    held_words(held.mark)
                ),
            );
            self.seen.marks.vols.insert(*vol, None);
        }
    }

    /// What a copy of `source` made now holds (a snapshot cut, a clone made), if known.
    fn cut_from(&self, source: Vol) -> Option<Option<u32>> {
        self.vol(source)
            .filter(|s| s.life == Life::Alive)
            .and_then(|_| self.seen.marks.held(source))
            .map(|h| h.mark)
    }

    /// The mark found at a NodePublishVolume's target (a mount point), held to what the volume
    /// holds.
    fn marks_read(&mut self, v: &mut Verdicts, call: &Call, seen: &Seen) -> Option<&'static str> {
        let (Call::Publish { vol, target, readonly }, Some(found)) = (*call, seen.found) else {
            return None;
        };
        // Only a publication the model took (a second target refused is not one).
        let s = self.published_at(vol, target, readonly)?;
        let Some(held) = self.seen.marks.held(vol) else {
            return Some("data: not known (not judged)");
        };
        let Some(same) = found.is(held.mark) else {
            return Some("data: unreadable (not judged)");
        };
        let rule = match held.from {
            From::Empty if same => return Some("data: none, as made empty"),
            From::Empty => return Some("data: in a volume made empty (not judged)"),
            From::Source(_) => Rule::SourceData,
            From::Written => Rule::TargetData,
        };
        if same {
            v.check(rule);
            return Some(if rule == Rule::SourceData {
                "data: its source's"
            } else {
                "data: as written"
            });
        }
        let what = format!(
            "NodePublishVolume of {vol} (id {}) at target #{target} answered OK, and the target holds {}",
            s.id,
            found_words(found)
        );
        let detail = match held.from {
            From::Source(src) => format!(
                "{what}; it was made from {}, which held {} then, and nothing was written into it since",
                Model::restorable_words(src),
                held_words(held.mark)
            ),
            _ => format!("{what}; the last mark written into it was {}", held_words(held.mark)),
        };
        v.broke(rule, format!("{detail} (the workload's writes and reads are not in a capture)"));
        // Held no longer: what it holds now is the plugin's.
        self.seen.marks.vols.insert(vol, None);
        Some("data: not what it should hold")
    }
}
