//! Listings followed over their pages: every page of ListVolumes and ListSnapshots from a
//! token (a loop or a failed page ends it, what was listed still read), the same listing asked
//! again unpaged when one full page came without `next_token`, and a first page whose token is
//! held across later calls of the attempt.

use std::sync::PoisonError;

use csikit::v1::*;

use super::super::judge::{Body, End, Listed, ListedSnapshot, Listing, Reply};
use super::{Exec, content_source, error};
use crate::suite::Suite;

/// The most pages one listing follows.
const MAX_PAGES: usize = 1000;

impl Exec {
    /// ListVolumes' first page of `max_entries`, its `next_token` held for
    /// [`Exec::take_held_token`].
    pub(super) async fn hold_first_page(&self, s: &Suite, max_entries: i32) -> Reply {
        let r = ListVolumesRequest { max_entries, starting_token: String::new() };
        match self.ask(s, r).await {
            Ok(a) => {
                let token = self.hold(false, a.next_token);
                let entries = a.entries.into_iter().filter_map(|e| self.listed(e)).collect();
                Reply::Ok(Body::Page { entries, token })
            }
            Err(e) => error(&e),
        }
    }

    /// ListSnapshots' first page, its `next_token` held for [`Exec::take_held_token`].
    pub(super) async fn hold_first_snapshots(&self, s: &Suite, r: ListSnapshotsRequest) -> Reply {
        match self.ask(s, r).await {
            Ok(a) => {
                let token = self.hold(true, a.next_token);
                let entries = a.entries.into_iter().filter_map(listed_snapshot).collect();
                Reply::Ok(Body::SnapPage { entries, token })
            }
            Err(e) => error(&e),
        }
    }

    /// Holds `token` (ListSnapshots': `snapshots`), if one was set; whether it was.
    fn hold(&self, snapshots: bool, token: String) -> bool {
        let set = !token.is_empty();
        self.held_tokens.lock().unwrap_or_else(PoisonError::into_inner)[usize::from(snapshots)] =
            set.then_some(token);
        set
    }

    /// The `next_token` the last first page of ListVolumes (`snapshots`: ListSnapshots) held,
    /// taken (a token is followed once).
    pub(super) fn take_held_token(&self, snapshots: bool) -> Option<String> {
        self.held_tokens.lock().unwrap_or_else(PoisonError::into_inner)[usize::from(snapshots)]
            .take()
    }

    /// A ListVolumes entry as the model reads it.
    pub(super) fn listed(&self, e: list_volumes_response::Entry) -> Option<Listed> {
        let v = e.volume?;
        let on_node = self.on_node(e.status.map(|st| st.published_node_ids));
        Some(Listed {
            source: content_source(v.content_source),
            id: v.volume_id,
            capacity: v.capacity_bytes,
            on_node,
        })
    }

    /// Every page from `token` (empty: from the start).
    pub(super) async fn list_volumes(
        &self,
        s: &Suite,
        max_entries: i32,
        mut token: String,
    ) -> Reply {
        let mut entries = Vec::new();
        for page in 0..MAX_PAGES {
            let r = ListVolumesRequest { max_entries, starting_token: token.clone() };
            match self.ask(s, r).await {
                Err(e) if page == 0 => return error(&e),
                Err(e) => return listed(Body::Volumes, entries, End::Failed(e.code()), 0),
                Ok(a) => {
                    let last = a.entries.len();
                    entries.extend(a.entries.into_iter().filter_map(|e| self.listed(e)));
                    if a.next_token.is_empty() {
                        let unpaged = if one_full_page(max_entries, entries.len(), last) {
                            let r = ListVolumesRequest {
                                max_entries: 0,
                                starting_token: String::new(),
                            };
                            self.ask(s, r).await.ok().map(|a| {
                                a.entries.into_iter().filter_map(|e| self.listed(e)).collect()
                            })
                        } else {
                            None
                        };
                        let listing =
                            Listing { entries, end: End::Complete, last_page: last, unpaged };
                        return Reply::Ok(Body::Volumes(listing));
                    }
                    if a.next_token == token {
                        return listed(Body::Volumes, entries, End::Loop(token), last);
                    }
                    token = a.next_token;
                }
            }
        }
        listed(Body::Volumes, entries, End::Loop(token), 0)
    }

    pub(super) async fn list_snapshots(&self, s: &Suite, request: ListSnapshotsRequest) -> Reply {
        let mut entries = Vec::new();
        // From the start, or from a token held.
        let mut token = request.starting_token.clone();
        for page in 0..MAX_PAGES {
            let r = ListSnapshotsRequest { starting_token: token.clone(), ..request.clone() };
            match self.ask(s, r).await {
                Err(e) if page == 0 => return error(&e),
                Err(e) => return listed(Body::Snapshots, entries, End::Failed(e.code()), 0),
                Ok(a) => {
                    let last = a.entries.len();
                    entries.extend(a.entries.into_iter().filter_map(listed_snapshot));
                    if a.next_token.is_empty() {
                        let unpaged = if one_full_page(request.max_entries, entries.len(), last) {
                            let r = ListSnapshotsRequest { max_entries: 0, ..request.clone() };
                            self.ask(s, r).await.ok().map(|a| {
                                a.entries.into_iter().filter_map(listed_snapshot).collect()
                            })
                        } else {
                            None
                        };
                        let listing =
                            Listing { entries, end: End::Complete, last_page: last, unpaged };
                        return Reply::Ok(Body::Snapshots(listing));
                    }
                    if a.next_token == token {
                        return listed(Body::Snapshots, entries, End::Loop(token), last);
                    }
                    token = a.next_token;
                }
            }
        }
        listed(Body::Snapshots, entries, End::Loop(token), 0)
    }
}

/// A ListSnapshots entry as the model reads it.
fn listed_snapshot(e: list_snapshots_response::Entry) -> Option<ListedSnapshot> {
    e.snapshot.map(described_snapshot)
}

/// A snapshot as the model reads it, whichever answer describes it.
pub(super) fn described_snapshot(x: Snapshot) -> ListedSnapshot {
    ListedSnapshot {
        id: x.snapshot_id,
        source: x.source_volume_id,
        ready: x.ready_to_use,
        size: x.size_bytes,
        created: x.creation_time.map(|t| (t.seconds, t.nanos)),
        group: x.group_snapshot_id,
    }
}

fn listed<T>(body: fn(Listing<T>) -> Body, entries: Vec<T>, end: End, last_page: usize) -> Reply {
    Reply::Ok(body(Listing { entries, end, last_page, unpaged: None }))
}

/// One full page and no `next_token`: the listing may have stopped early.
fn one_full_page(max_entries: i32, entries: usize, last: usize) -> bool {
    max_entries > 0 && entries == last && last >= usize::try_from(max_entries).unwrap_or(0)
}
