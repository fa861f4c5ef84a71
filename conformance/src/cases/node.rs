//! Node service cases: stage, publish (the target path made by the plugin), unpublish, unstage,
//! each twice; a readonly publish that is read-only; paths longer than the general size limit;
//! unstage undoing stage (the error-table rows are in `errors`).

use csikit::v1::controller_service_capability::rpc::Type as Ctl;
use csikit::v1::node_service_capability::rpc::Type as Nd;
use csikit::v1::{
    NodeGetVolumeStatsRequest, NodePublishVolumeRequest, NodeUnpublishVolumeRequest,
    NodeUnstageVolumeRequest,
};
use tonic::Code;

use crate::case::{Case, Need, body};
use crate::report::Outcome;
use crate::sentence::Sentence;
use crate::suite::{Suite, check, ensure, expect, show_status};
use crate::workload::{self, Paths, bring_down, bring_up, mount_at};

const CREATE: Need = Need::Ctl(Ctl::CreateDeleteVolume);

/// The shortest path every path field must take ("at a minimum, SP MUST accept a max path
/// length of at least 128 bytes"); the suite's long paths are longer still.
const LONG_PATH: usize = 200;

// Rows of one shape (a duplicate the tree's scan lists on purpose, both places being rows of
// this table): a case is a row (name, needs, sentence, body), data rather than code. The first
// three rows differ in their sentence and body alone and share their needs, as each makes a
// volume and uses it on the node; a constant for those needs would leave the rows as alike, and
// joining the rows would need a second kind of row holding several cases, whose needs a reader
// of one case would no longer see beside it.
pub(crate) const CASES: &[Case] = &[
    Case {
        name: "node: stage, publish (target_path created), unpublish (removed), unstage, each twice",
        needs: &[CREATE, Need::Node],
        sentence: Sentence::must(
            "NodePublishVolume",
            "If the volume corresponding to the `volume_id` has already been published at the specified `target_path`, and is compatible with the specified `volume_capability` and `readonly` flag, the Plugin MUST reply `0 OK`.",
        ),
        body: body!(lifecycle),
    },
    Case {
        name: "node: a readonly NodePublishVolume mounts read-only",
        needs: &[CREATE, Need::Node],
        sentence: Sentence::must(
            "NodePublishVolumeRequest.readonly",
            "Indicates SP MUST publish the volume in readonly mode.",
        ),
        body: body!(readonly),
    },
    Case {
        name: "node: staging, target and volume paths of 200 bytes are taken (stage, publish, stats, expand)",
        needs: &[CREATE, Need::Node],
        sentence: Sentence::must(
            "NodePublishVolumeRequest.target_path / NodeStageVolumeRequest.staging_target_path / NodeGetVolumeStatsRequest.volume_path",
            "SP SHOULD support the maximum path length allowed by the operating system/filesystem, but, at a minimum, SP MUST accept a max path length of at least 128 bytes.",
        ),
        body: body!(long_paths),
    },
    Case {
        name: "node: NodeUnstageVolume undoes the mount NodeStageVolume made",
        needs: &[CREATE, Need::Nd(Nd::StageUnstageVolume)],
        sentence: Sentence::must(
            "NodeUnstageVolume",
            "This RPC MUST undo the work by the corresponding `NodeStageVolume`.",
        ),
        body: body!(unstage_undoes),
    },
];

async fn lifecycle(s: &mut Suite) -> Outcome {
    let fixture = s.fixture.clone();
    let (staging, target) = match (s.staging_for_publish(), s.target_path()) {
        (Ok(st), Ok(t)) => (st, t),
        (Err(why), _) | (_, Err(why)) => return Outcome::Failed(why),
    };
    let publish_context = match s.publish_for_node(&fixture, s.capability()).await {
        Ok(c) => c,
        Err(why) => return Outcome::Failed(why),
    };
    let stage = !staging.is_empty();
    if stage {
        for what in ["NodeStageVolume", "NodeStageVolume again"] {
            let cap = s.capability();
            let r = workload::stage(s, &fixture, &staging, cap, &publish_context).await;
            check!(expect(&r, Code::Ok, what));
        }
    }
    let req = NodePublishVolumeRequest {
        volume_id: fixture.clone(),
        staging_target_path: staging.clone(),
        target_path: target.display().to_string(),
        volume_capability: Some(s.capability()),
        publish_context,
        secrets: s.secrets("NodePublishVolume"),
        ..NodePublishVolumeRequest::default()
    };
    for what in ["NodePublishVolume", "NodePublishVolume again"] {
        let r = s.ask(req.clone()).await;
        check!(expect(&r, Code::Ok, what));
    }
    s.node_published.push((fixture.clone(), target.clone()));
    ensure!(
        target.exists(),
        "target_path {} does not exist after NodePublishVolume (\"Creation of target_path is the responsibility of the SP.\")",
        target.display()
    );
    if s.plugin.node_has(Nd::GetVolumeStats) {
        let r = s
            .ask(NodeGetVolumeStatsRequest {
                volume_id: fixture.clone(),
                volume_path: target.display().to_string(),
                ..NodeGetVolumeStatsRequest::default()
            })
            .await;
        check!(expect(&r, Code::Ok, "NodeGetVolumeStats of the published path"));
    }
    let un = NodeUnpublishVolumeRequest {
        volume_id: fixture.clone(),
        target_path: target.display().to_string(),
    };
    for what in ["NodeUnpublishVolume", "NodeUnpublishVolume again"] {
        let r = s.ask(un.clone()).await;
        check!(expect(&r, Code::Ok, what));
    }
    s.node_published.retain(|(_, p)| *p != target);
    ensure!(
        !target.exists(),
        "target_path {} is still there after NodeUnpublishVolume",
        target.display()
    );
    if stage {
        let un = NodeUnstageVolumeRequest {
            volume_id: fixture.clone(),
            staging_target_path: staging.clone(),
        };
        for what in ["NodeUnstageVolume", "NodeUnstageVolume again"] {
            let r = s.ask(un.clone()).await;
            check!(expect(&r, Code::Ok, what));
        }
        s.staged.retain(|(_, p)| p.as_os_str() != staging.as_str());
    }
    if let Err(why) = s.unpublish_for_node(&fixture).await {
        return Outcome::Failed(why);
    }
    Outcome::Passed
}

/// Published with `readonly`, the target is a read-only mount. A plugin that mounts nothing at
/// the target (an in-memory one) gives the suite nothing to look at: skipped.
async fn readonly(s: &mut Suite) -> Outcome {
    let v = match s.fresh_volume("readonly", 0).await {
        Ok(v) => v.volume_id,
        Err(why) => return Outcome::Failed(why),
    };
    let cap = s.capability();
    let used = match bring_up(s, &v, cap, true, Paths::default()).await {
        Ok(u) => u,
        Err(why) => return Outcome::Failed(format!("a readonly publish: {why}")),
    };
    let seen = mount_at(&used.target);
    let down = bring_down(s, &used).await;
    let _ = s.delete(&v).await;
    let outcome = match seen {
        Err(why) => Outcome::Skipped(why),
        Ok(None) => Outcome::Skipped(
            "the plugin mounted nothing at target_path: whether it is read-only cannot be seen"
                .into(),
        ),
        Ok(Some(m)) if m.read_only => Outcome::Passed,
        Ok(Some(_)) => Outcome::Failed(format!(
            "NodePublishVolume with readonly: true mounted {} read-write",
            used.target.display()
        )),
    };
    match down {
        Err(why) if outcome == Outcome::Passed => Outcome::Failed(why),
        _ => outcome,
    }
}

/// A fresh folder whose path is `len` bytes or more (the parent made, the last part not).
fn long_path(
    s: &mut Suite,
    base: &std::path::Path,
    what: &str,
    len: usize,
) -> Result<std::path::PathBuf, String> {
    let name = s.name(what);
    let short = base.join(&name).join("x").display().to_string().len();
    let pad = "p".repeat(len.saturating_sub(short).min(200));
    let parent = base.join(format!("{name}{pad}"));
    std::fs::create_dir_all(&parent)
        .map_err(|e| format!("cannot make the folder '{}': {e}", parent.display()))?;
    Ok(parent.join("x"))
}

/// The volume staged, published, asked for its stats and taken down at paths of 200 bytes.
async fn long_paths(s: &mut Suite) -> Outcome {
    let base = match s.staging_dir() {
        Ok(d) => d,
        Err(why) => return Outcome::Failed(why),
    };
    let target = match long_path(s, &base, "long-target", LONG_PATH) {
        Ok(t) => t,
        Err(why) => return Outcome::Failed(why),
    };
    let staging = if s.plugin.node_has(Nd::StageUnstageVolume) {
        match long_path(s, &base, "long-staging", LONG_PATH) {
            Ok(p) => match std::fs::create_dir_all(&p) {
                Ok(()) => p.display().to_string(),
                Err(e) => return Outcome::Failed(format!("cannot make '{}': {e}", p.display())),
            },
            Err(why) => return Outcome::Failed(why),
        }
    } else {
        String::new()
    };
    let (v, held) = match s.fresh_volume("long-paths", 0).await {
        Ok(v) => (v.volume_id, v.capacity_bytes),
        Err(why) => return Outcome::Failed(why),
    };
    let paths = Paths { staging: Some(staging), target: Some(target) };
    let cap = s.capability();
    let used = match bring_up(s, &v, cap, false, paths).await {
        Ok(u) => u,
        Err(why) => {
            return Outcome::Failed(format!("at paths of {LONG_PATH} bytes: {why}"));
        }
    };
    if s.plugin.node_has(Nd::GetVolumeStats) {
        let r = s
            .ask(NodeGetVolumeStatsRequest {
                volume_id: v.clone(),
                volume_path: used.target.display().to_string(),
                staging_target_path: used.staging.clone(),
            })
            .await;
        check!(expect(
            &r,
            Code::Ok,
            &format!(
                "NodeGetVolumeStats at a volume_path of {} bytes",
                used.target.display().to_string().len()
            )
        ));
    }
    if s.plugin.node_has(Nd::ExpandVolume) {
        let to = crate::cases::expand::past(held);
        if s.plugin.has(Ctl::ExpandVolume)
            && let Err(e) = crate::cases::expand::controller_expand(s, &v, to).await
        {
            return Outcome::Failed(format!("ControllerExpandVolume: {}", show_status(&e)));
        }
        let r = crate::cases::expand::node_expand(s, &used, to).await;
        check!(expect(&r, Code::Ok, "NodeExpandVolume at a volume_path of 200 bytes"));
    }
    if let Err(why) = bring_down(s, &used).await {
        return Outcome::Failed(format!("at paths of {LONG_PATH} bytes: {why}"));
    }
    let _ = s.delete(&v).await;
    Outcome::Passed
}

/// Staged, the staging path is a mount point or not; unstaged, a mount the plugin made there is
/// gone. A plugin that mounts nothing at the staging path gives nothing to see: skipped.
async fn unstage_undoes(s: &mut Suite) -> Outcome {
    let v = match s.fresh_volume("unstage", 0).await {
        Ok(v) => v.volume_id,
        Err(why) => return Outcome::Failed(why),
    };
    let cap = s.capability();
    let publish_context = match s.publish_for_node(&v, cap.clone()).await {
        Ok(c) => c,
        Err(why) => return Outcome::Failed(why),
    };
    let staging = match s.staging_dir() {
        Ok(d) => d,
        Err(why) => return Outcome::Failed(why),
    };
    let path = staging.display().to_string();
    if let Err(e) = workload::stage(s, &v, &path, cap, &publish_context).await {
        return Outcome::Failed(format!("NodeStageVolume: {}", show_status(&e)));
    }
    let staged = mount_at(&staging);
    let r = workload::unstage(s, &v, &path).await;
    check!(expect(&r, Code::Ok, "NodeUnstageVolume"));
    let after = mount_at(&staging);
    if let Err(why) = s.unpublish_for_node(&v).await {
        return Outcome::Failed(why);
    }
    let _ = s.delete(&v).await;
    match (staged, after) {
        (Err(why), _) | (_, Err(why)) => Outcome::Skipped(why),
        (Ok(None), _) => Outcome::Skipped(
            "the plugin mounted nothing at staging_target_path: nothing to see undone".into(),
        ),
        (Ok(Some(_)), Ok(None)) => Outcome::Passed,
        (Ok(Some(_)), Ok(Some(_))) => Outcome::Failed(format!(
            "{} is still a mount point after NodeUnstageVolume",
            staging.display()
        )),
    }
}
