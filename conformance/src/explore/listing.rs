//! What a complete listing must hold after the history so far: every live volume (or snapshot
//! within the filter) and none deleted, each as the model knows it (a capacity no smaller than
//! it accepted, a snapshot's own source). Volumes and snapshots the history did not make are the
//! plugin's business and are not looked at.

use std::collections::HashMap;

use super::call::{Call, Filter, Snap, Vol};
use super::judge::{Body, End, Listed, ListedSnapshot, Listing, Reply, Verdicts};
use super::model::{Held, Life, Model};
use super::rules::Rule;

impl Model {
    /// ListVolumes followed over its pages.
    pub(super) fn list_volumes(
        &mut self,
        out: &mut Verdicts,
        max_entries: i32,
        listing: &Listing<Listed>,
    ) {
        let seen: HashMap<&str, &Listed> =
            listing.entries.iter().map(|e| (e.id.as_str(), e)).collect();
        for rule in [Rule::VolumesListed, Rule::VolumesPaged, Rule::VolumeDeletedGone] {
            out.check(rule);
        }
        let mut missing: Vec<(Vol, String, bool)> = Vec::new();
        for (vol, s) in &self.vols {
            match s.life {
                Life::Alive => match seen.get(s.id.as_str()) {
                    Some(e) => self.volume_described(out, *vol, e, "ListVolumes"),
                    None => missing.push((*vol, s.id.clone(), s.refused_delete)),
                },
                Life::Dead if !self.id_in_use(&s.id) && seen.contains_key(s.id.as_str()) => {
                    out.broke(
                        Rule::VolumeDeletedGone,
                        format!(
                            "ListVolumes lists {vol} (id {}), which DeleteVolume deleted with OK",
                            s.id
                        ),
                    );
                }
                _ => {}
            }
        }
        if let End::Loop(token) = &listing.end {
            out.broke(Rule::VolumesPaged, format!(
                    "ListVolumes with max_entries {max_entries} answered next_token '{token}' to starting_token '{token}': the same page again"
                ));
            return;
        }
        if listing.end != End::Complete || missing.is_empty() {
            return;
        }
        let (vol, id, refused) = &missing[0];
        let names = missing.iter().map(|(v, id, _)| format!("{v} (id {id})")).collect::<Vec<_>>();
        // A full last page and no token: the pages stopped early.
        // One full page and no token, and the listing without max_entries holds what it
        // lacked: the pages stopped early.
        let short = listing
            .unpaged
            .as_ref()
            .is_some_and(|all| missing.iter().all(|(_, id, _)| all.iter().any(|e| e.id == *id)));
        let rule = if *refused {
            Rule::DeleteRefusedUnaltered
        } else if short {
            Rule::VolumesPaged
        } else {
            Rule::VolumesListed
        };
        let why = if *refused {
            format!(", {vol} (id {id}) after DeleteVolume refused to delete it")
        } else if short {
            format!(", its last page full ({max_entries} entries) and no next_token")
        } else {
            String::new()
        };
        out.broke(
            rule,
            format!(
                "ListVolumes (max_entries {max_entries}) lists {} entries and not live {}{why}",
                listing.entries.len(),
                names.join(", ")
            ),
        );
    }

    /// Entries of a part of a listing (a page, or the pages from a held token): none a volume
    /// DeleteVolume deleted with OK, each live one as the model knows it.
    pub(super) fn listed_entries(&self, out: &mut Verdicts, entries: &[Listed]) {
        out.check(Rule::VolumeDeletedGone);
        for e in entries {
            let Some((vol, s)) =
                self.vols.iter().find(|(_, s)| s.id == e.id && s.life != Life::Lost)
            else {
                continue;
            };
            match s.life {
                Life::Alive => self.volume_described(out, *vol, e, "ListVolumes"),
                _ if !self.id_in_use(&s.id) => out.broke(
                    Rule::VolumeDeletedGone,
                    format!(
                        "ListVolumes lists {vol} (id {}), which DeleteVolume deleted with OK",
                        s.id
                    ),
                ),
                _ => {}
            }
        }
    }

    /// ListVolumes from a held `next_token`, every page to the end: with no volume created or
    /// deleted since the token was handed out (and no other walk making any), the first page
    /// and these together list every live volume ("all the volumes that it knows about"; the
    /// pages may shift only under creations and deletions).
    pub(super) fn resumed(&self, out: &mut Verdicts, held: &Held, listing: &Listing<Listed>) {
        let live = self.vols.iter().filter(|(_, s)| s.life == Life::Alive);
        let live = live.map(|(v, s)| (format!("{v} (id {})", s.id), s.id.clone())).collect();
        let rest: Vec<&str> = listing.entries.iter().map(|e| e.id.as_str()).collect();
        let how = ("ListVolumes", "no volume was created or deleted", "live");
        held_complete(
            out,
            Rule::VolumesListed,
            (self.caps.alone, held, &rest, &listing.end),
            live,
            how,
        );
    }

    /// ListSnapshots' first page with its token held ([`Call::ListHold`]), or the pages from
    /// that token ([`Call::ListResume`]), after whatever came since: ABORTED ("Invalid
    /// `starting_token`") or any error is the plugin's to answer; the entries never list a
    /// snapshot deleted with OK and describe each standing one as it was cut; with no snapshot
    /// cut or deleted since the token was handed out (and no other lane), the first page and
    /// the rest list every standing snapshot ("If snapshots are created and/or deleted while
    /// the CO is concurrently paging ... the CO MAY either witness duplicate snapshots in the
    /// list, not witness existing snapshots, or both": only then).
    pub(super) fn held_snapshots(&mut self, out: &mut Verdicts, call: &Call, reply: &Reply) {
        let held = self.held_snaps.take();
        let (entries, listing) = match (call, reply) {
            (Call::ListHold { .. }, Reply::Ok(Body::SnapPage { entries, token })) => {
                let first = entries.iter().map(|e| e.id.clone()).collect();
                self.held_snaps = token.then_some(Held { first, changed: false });
                (entries, None)
            }
            (Call::ListResume { .. }, Reply::Ok(Body::Snapshots(l))) if held.is_some() => {
                (&l.entries, Some(l))
            }
            _ => return,
        };
        out.check(Rule::SnapshotDeletedGone);
        let ids = |m: &Model, alive| -> Vec<String> {
            m.group_members(alive).into_iter().map(|(s, _)| s.to_owned()).collect()
        };
        let (standing, gone_groups) = (ids(self, true), ids(self, false));
        for e in entries {
            let alone_dead = self.snaps.iter().find(|(_, x)| x.id == e.id && x.life == Life::Dead);
            let alive = self.snaps.values().any(|x| x.id == e.id && x.life != Life::Dead)
                || standing.contains(&e.id);
            let dead = alone_dead
                .map(|(s, _)| s.to_string())
                .or_else(|| gone_groups.contains(&e.id).then(|| "of a group deleted".into()));
            if let (Some(which), false) = (dead, alive) {
                out.broke(
                    Rule::SnapshotDeletedGone,
                    format!("ListSnapshots from a held token lists snapshot {} ({which}), deleted with OK", e.id),
                );
            }
        }
        for e in entries {
            self.snapshot_described(out, e, "ListSnapshots");
        }
        let (Some(held), Some(listing)) = (held, listing) else { return };
        let live = self.snaps.iter().filter(|(_, x)| x.life == Life::Alive);
        let live = live
            .map(|(s, x)| (format!("{s} (id {})", x.id), x.id.clone()))
            .chain(standing.into_iter().map(|s| (format!("id {s}"), s)))
            .collect();
        let rest: Vec<&str> = listing.entries.iter().map(|e| e.id.as_str()).collect();
        let how = ("ListSnapshots", "no snapshot was cut or deleted", "standing");
        held_complete(
            out,
            Rule::SnapshotsListed,
            (self.caps.alone, &held, &rest, &listing.end),
            live,
            how,
        );
    }

    /// The snapshots of group snapshots in a ListSnapshots answer: each of a group standing
    /// listed (within the filter), none of a group deleted with OK.
    fn group_members_listed(
        &self,
        out: &mut Verdicts,
        filter: Filter,
        source_id: Option<&str>,
        listing: &Listing<ListedSnapshot>,
    ) {
        let listed = |id: &str| listing.entries.iter().any(|e| e.id == id);
        let standing = self.group_members(true);
        for (id, _) in self.group_members(false) {
            if listed(id) && !standing.iter().any(|(s, _)| *s == id) {
                out.broke(
                    Rule::SnapshotDeletedGone,
                    format!("ListSnapshots lists snapshot {id}, of a group snapshot DeleteVolumeGroupSnapshot deleted with OK"),
                );
            }
        }
        let within = |source: &str| match filter {
            Filter::All => true,
            Filter::Id(_) => false,
            Filter::Source(_) => source_id == Some(source),
        };
        let missing: Vec<&str> =
            standing.iter().filter(|(s, v)| within(v) && !listed(s)).map(|(s, _)| *s).collect();
        if listing.end != End::Complete || missing.is_empty() {
            return;
        }
        let short = listing
            .unpaged
            .as_ref()
            .is_some_and(|all| missing.iter().all(|id| all.iter().any(|e| e.id == *id)));
        let rule = if short { Rule::SnapshotsPaged } else { Rule::SnapshotsListed };
        let rule = missing.iter().fold(rule, |r, id| self.gone_rule(id, r));
        let named: String = missing.iter().map(|id| self.gone_why(id)).collect();
        out.broke(
            rule,
            format!(
                "ListSnapshots lists {} entries and not snapshot {} of a group snapshot standing{named}",
                listing.entries.len(),
                missing.join(", ")
            ),
        );
    }

    /// ListSnapshots with `filter`, followed over its pages.
    pub(super) fn list_snapshots(
        &mut self,
        out: &mut Verdicts,
        filter: Filter,
        max_entries: i32,
        listing: &Listing<ListedSnapshot>,
    ) {
        let seen: HashMap<&str, &ListedSnapshot> =
            listing.entries.iter().map(|e| (e.id.as_str(), e)).collect();
        for rule in [
            Rule::SnapshotsListed,
            Rule::SnapshotsPaged,
            Rule::SnapshotDeletedGone,
            Rule::SnapshotsCurrent,
            Rule::SnapshotOutlivesSource,
        ] {
            out.check(rule);
        }
        let source_id = match filter {
            Filter::Source(v) => self.vols.get(&v).map(|s| s.id.clone()),
            _ => None,
        };
        let wanted = |snap: Snap, source_id_of: &str| match filter {
            Filter::All => true,
            Filter::Id(s) => s == snap,
            Filter::Source(_) => source_id.as_deref() == Some(source_id_of),
        };
        let mut missing: Vec<(Snap, String, bool)> = Vec::new();
        let mut ready: Vec<(Snap, bool)> = Vec::new();
        for (snap, s) in &self.snaps {
            let listed = seen.get(s.id.as_str());
            match s.life {
                Life::Alive => match listed {
                    Some(e) => ready.push((*snap, e.ready)),
                    None if wanted(*snap, &s.source_id) => {
                        let gone = self.vols.get(&s.source).is_some_and(|v| v.life == Life::Dead);
                        missing.push((*snap, s.id.clone(), gone));
                    }
                    None => {}
                },
                Life::Dead
                    if listed.is_some()
                        && !self.snaps.values().any(|o| o.life != Life::Dead && o.id == s.id) =>
                {
                    out.broke(Rule::SnapshotDeletedGone, format!(
                            "ListSnapshots lists snapshot {snap} (id {}), which DeleteSnapshot deleted with OK",
                            s.id
                        ));
                }
                _ => {}
            }
        }
        for (snap, r) in ready {
            if let Some(s) = self.snaps.get_mut(&snap) {
                s.ready = r;
            }
        }
        for e in &listing.entries {
            self.snapshot_described(out, e, "ListSnapshots");
        }
        self.group_members_listed(out, filter, source_id.as_deref(), listing);
        if let End::Loop(token) = &listing.end {
            out.broke(Rule::SnapshotsPaged, format!(
                    "ListSnapshots with max_entries {max_entries} answered next_token '{token}' to starting_token '{token}': the same page again"
                ));
            return;
        }
        if listing.end != End::Complete || missing.is_empty() {
            return;
        }
        let names = missing.iter().map(|(s, id, _)| format!("{s} (id {id})")).collect::<Vec<_>>();
        let short = listing
            .unpaged
            .as_ref()
            .is_some_and(|all| missing.iter().all(|(_, id, _)| all.iter().any(|e| e.id == *id)));
        // Missing because its source was deleted: none of that source's snapshots is listed
        // (a listing that holds some of them misses the others for another reason).
        let outlived = missing.iter().any(|(snap, _, gone)| {
            *gone
                && self
                    .snaps
                    .get(snap)
                    .is_some_and(|x| !listing.entries.iter().any(|e| e.source == x.source_id))
        });
        let rule = if outlived {
            Rule::SnapshotOutlivesSource
        } else if short {
            Rule::SnapshotsPaged
        } else {
            Rule::SnapshotsListed
        };
        let rule = missing.iter().fold(rule, |r, (_, id, _)| self.gone_rule(id, r));
        let named: String = missing.iter().map(|(_, id, _)| self.gone_why(id)).collect();
        let what = match filter {
            Filter::All => String::new(),
            Filter::Id(s) => format!(" with snapshot_id of {s}"),
            Filter::Source(v) => format!(
                " with source_volume_id of {v} (id {})",
                source_id.as_deref().unwrap_or_default()
            ),
        };
        let why = if outlived {
            ", a snapshot whose source volume was deleted"
        } else if short {
            ", its last page full and no next_token"
        } else {
            ""
        };
        out.broke(rule, format!(
                "ListSnapshots{what} (max_entries {max_entries}) lists {} entries and not live {}{why}{named}",
                listing.entries.len(),
                names.join(", ")
            ));
    }
}

/// The pages from a held token, followed to their end with nothing made or deleted since it
/// was handed out and no other lane (`alone`): its first page and these (`rest`, by id) list
/// every one of `live` (its words, its id), or `rule` is broken. `how`: the RPC, what did not
/// happen since, what the objects are.
fn held_complete(
    out: &mut Verdicts,
    rule: Rule,
    (alone, held, rest, end): (bool, &Held, &[&str], &End),
    live: Vec<(String, String)>,
    (rpc, since, kind): (&str, &str, &str),
) {
    if held.changed || !alone || *end != End::Complete {
        return;
    }
    out.check(rule);
    let listed = |id: &str| held.first.iter().any(|f| f == id) || rest.contains(&id);
    let missing: Vec<String> =
        live.into_iter().filter(|(_, id)| !listed(id)).map(|(words, _)| words).collect();
    if !missing.is_empty() {
        out.broke(
            rule,
            format!(
                "{rpc}' first page ({} entries) and the pages from its next_token, held while {since}, list {} entries and not {kind} {}",
                held.first.len(),
                rest.len(),
                missing.join(", ")
            ),
        );
    }
}
