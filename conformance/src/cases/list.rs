//! Controller service cases on listings: ListVolumes and ListSnapshots paging and their tokens.

use csikit::v1::controller_service_capability::rpc::Type as Ctl;
use std::collections::BTreeMap;

use csikit::v1::ListVolumesRequest;

use crate::case::{Case, Need, body};
use crate::report::Outcome;
use crate::sentence::Sentence;
use crate::suite::{Suite, ensure, show_status};

/// How many pages of the concurrent case change the volumes before the next page.
const CHANGES: usize = 6;

pub(crate) const CASES: &[Case] = &[
    Case {
        name: "list: ListVolumes lists every volume the suite holds and none it deleted",
        needs: &[Need::Ctl(Ctl::CreateDeleteVolume), Need::Ctl(Ctl::ListVolumes)],
        sentence: Sentence::must(
            "ListVolumes",
            "The Plugin SHALL return the information about all the volumes that it knows about.",
        ),
        body: body!(presence),
    },
    Case {
        name: "list: ListVolumes pages with max_entries and tokens",
        needs: &[Need::Ctl(Ctl::CreateDeleteVolume), Need::Ctl(Ctl::ListVolumes)],
        sentence: Sentence::must(
            "ListVolumes",
            "If specified (non-zero value), the Plugin MUST NOT return more entries than this number in the response. If the actual number of entries is more than this number, the Plugin MUST set `next_token` in the response which can be used to get the next page of entries in the subsequent `ListVolumes` call.",
        ),
        body: body!(pagination),
    },
    Case {
        name: "list: ListVolumes pages while volumes are created and deleted, then lists each once",
        needs: &[Need::Ctl(Ctl::CreateDeleteVolume), Need::Ctl(Ctl::ListVolumes)],
        sentence: Sentence::must(
            "ListVolumes",
            "The Plugin SHALL return the information about all the volumes that it knows about.",
        ),
        body: body!(concurrent_changes),
    },
];

/// One listing without max_entries holds every volume the suite made and still holds, and not
/// one it deleted.
async fn presence(s: &mut Suite) -> Outcome {
    let gone = match s.fresh_volume("list-gone", 0).await {
        Ok(v) => v.volume_id,
        Err(why) => return Outcome::Failed(why),
    };
    if let Err(e) = s.delete(&gone).await {
        return Outcome::Failed(format!("DeleteVolume: {}", show_status(&e)));
    }
    for _ in 0..3 {
        if let Err(why) = s.fresh_volume("list-present", 0).await {
            return Outcome::Failed(why);
        }
    }
    let listed = match s.list_all(0).await {
        Ok(l) => l,
        Err(why) => return Outcome::Failed(why),
    };
    let missing: Vec<&String> = s.volumes.iter().filter(|v| !listed.contains(v)).collect();
    ensure!(
        missing.is_empty(),
        "ListVolumes left out {} of the {} volumes the suite holds: {missing:?}",
        missing.len(),
        s.volumes.len()
    );
    ensure!(!listed.contains(&gone), "ListVolumes still lists the deleted volume {gone}");
    Outcome::Passed
}

/// Three volumes of its own, paged one at a time among whatever else the plugin holds (which it
/// never touches): each of its own is seen exactly once.
async fn pagination(s: &mut Suite) -> Outcome {
    let mut made = Vec::new();
    for _ in 0..3 {
        match s.fresh_volume("list", 0).await {
            Ok(v) => made.push(v.volume_id),
            Err(why) => return Outcome::Failed(why),
        }
    }
    let paged = match s.list_all(1).await {
        Ok(p) => p,
        Err(why) => return Outcome::Failed(why),
    };
    for id in &made {
        let seen = paged.iter().filter(|p| *p == id).count();
        ensure!(seen == 1, "paging one entry at a time saw volume {id} {seen} times");
    }
    for id in made {
        let _ = s.delete(&id).await;
    }
    Outcome::Passed
}

/// Pages one entry at a time while, between pages, one of its own volumes is created and one
/// deleted. What the spec allows then (a volume seen twice or missed: "the CO MAY either witness
/// duplicate volumes in the list, not witness existing volumes, or both") is a note; once the
/// changes stop, a listing must hold each of its surviving volumes exactly once (a failure).
async fn concurrent_changes(s: &mut Suite) -> Outcome {
    let mut steady = Vec::new();
    for _ in 0..4 {
        match s.fresh_volume("list-steady", 0).await {
            Ok(v) => steady.push(v.volume_id),
            Err(why) => return Outcome::Failed(why),
        }
    }
    let mut churn: Vec<String> = Vec::new();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut token = String::new();
    for page in 0..1000 {
        let r = s.ask(ListVolumesRequest { max_entries: 1, starting_token: token }).await;
        let r = match r {
            Ok(r) => r,
            // A token made stale by the changes may be refused, as the spec's row says.
            Err(e) if e.code() == tonic::Code::Aborted && page > 0 => break,
            Err(e) => {
                return Outcome::Failed(format!("ListVolumes page {page}: {}", show_status(&e)));
            }
        };
        ensure!(
            r.entries.len() <= 1,
            "ListVolumes gave {} entries for max_entries 1",
            r.entries.len()
        );
        for e in r.entries.into_iter().filter_map(|e| e.volume) {
            *seen.entry(e.volume_id).or_default() += 1;
        }
        if r.next_token.is_empty() {
            break;
        }
        token = r.next_token;
        if page >= CHANGES {
            continue;
        }
        // The change between two pages: one created, the previous one deleted.
        match s.fresh_volume("list-churn", 0).await {
            Ok(v) => churn.push(v.volume_id),
            Err(why) => return Outcome::Failed(why),
        }
        if churn.len() > 1 {
            let gone = churn.remove(0);
            let _ = s.delete(&gone).await;
        }
    }
    let repeated = seen.values().filter(|n| **n > 1).count();
    let missed = steady.iter().filter(|id| !seen.contains_key(*id)).count();
    for id in churn {
        let _ = s.delete(&id).await;
    }
    let quiet = match s.list_all(1).await {
        Ok(q) => q,
        Err(why) => return Outcome::Failed(why),
    };
    for id in &steady {
        let n = quiet.iter().filter(|q| *q == id).count();
        ensure!(
            n == 1,
            "after the changes stopped, paging one at a time saw volume {id} {n} times"
        );
    }
    for id in steady {
        let _ = s.delete(&id).await;
    }
    if repeated == 0 && missed == 0 {
        Outcome::Passed
    } else {
        Outcome::Note(format!(
            "while volumes were created and deleted, paging saw {} volume(s) more than once and missed {} that existed throughout (the spec allows this: \"the CO MAY either witness duplicate volumes in the list, not witness existing volumes, or both\"; a CO will see it)",
            repeated, missed
        ))
    }
}
