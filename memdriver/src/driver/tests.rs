//! The driver's own rules, without gRPC: paging, capacity, target paths, access modes.

use super::*;
use csikit::v1::volume_capability::{AccessMode, MountVolume};
use csikit::v1::{
    DeleteVolumeRequest, GetCapacityRequest, ListVolumesRequest, NodePublishVolumeRequest,
    NodeStageVolumeRequest, NodeUnpublishVolumeRequest, NodeUnstageVolumeRequest,
};
use tonic::Code;

fn capability(mode: Mode) -> VolumeCapability {
    VolumeCapability {
        access_mode: Some(AccessMode { mode: mode as i32 }),
        access_type: Some(AccessType::Mount(MountVolume::default())),
    }
}

async fn create(driver: &Driver, name: &str, bytes: i64, mode: Mode) -> Result<String, Status> {
    let request = CreateVolumeRequest {
        name: name.to_owned(),
        capacity_range: Some(CapacityRange { required_bytes: bytes, limit_bytes: 0 }),
        volume_capabilities: vec![capability(mode)],
        ..Default::default()
    };
    Ok(driver.create_volume(request).await?.volume.unwrap_or_default().volume_id)
}

fn code<T: std::fmt::Debug>(result: Result<T, Status>) -> Code {
    result.map_or_else(|s| s.code(), |_| Code::Ok)
}

#[tokio::test]
async fn paging_follows_tokens_past_deleted_entries_and_refuses_foreign_ones() {
    let driver = Driver::default();
    let mut ids = Vec::new();
    for i in 0..5 {
        ids.push(
            create(&driver, &format!("v{i}"), GIB, Mode::SingleNodeWriter).await.expect("create"),
        );
    }
    let first =
        driver.list_volumes(ListVolumesRequest { max_entries: 2, starting_token: String::new() });
    let first = first.expect("page 1");
    assert_eq!(first.entries.len(), 2);
    // The entry the token names goes away; the token still leads on.
    driver
        .delete_volume(DeleteVolumeRequest {
            volume_id: first.next_token.clone(),
            ..Default::default()
        })
        .expect("delete");
    let rest = driver
        .list_volumes(ListVolumesRequest { max_entries: 0, starting_token: first.next_token });
    let rest: Vec<String> = rest
        .expect("rest")
        .entries
        .into_iter()
        .filter_map(|e| e.volume)
        .map(|v| v.volume_id)
        .collect();
    assert_eq!(rest, ids[2..]);
    for token in ["nonsense", "vol-1", "snap-0000000001", "vol-00000000x1"] {
        let listed = driver
            .list_volumes(ListVolumesRequest { max_entries: 1, starting_token: token.to_owned() });
        assert_eq!(code(listed), Code::Aborted, "token {token}");
    }
}

#[tokio::test]
async fn capacity_is_accounted_and_bounded() {
    let config = Config { total_capacity: 10 * GIB, max_volume_size: 6 * GIB, ..Config::default() };
    let driver = Driver::new(config);
    assert_eq!(
        code(create(&driver, "too-big", 7 * GIB, Mode::SingleNodeWriter).await),
        Code::OutOfRange
    );
    let a = create(&driver, "a", 6 * GIB, Mode::SingleNodeWriter).await.expect("a");
    assert_eq!(
        code(create(&driver, "b", 6 * GIB, Mode::SingleNodeWriter).await),
        Code::ResourceExhausted
    );
    let free = driver.get_capacity(GetCapacityRequest::default()).expect("capacity");
    assert_eq!((free.available_capacity, free.maximum_volume_size), (4 * GIB, Some(4 * GIB)));
    // Retrying with a range the volume satisfies is the same volume; one it does not is a conflict.
    assert_eq!(create(&driver, "a", 5 * GIB, Mode::SingleNodeWriter).await.expect("retry"), a);
    assert_eq!(
        code(create(&driver, "a", 6 * GIB, Mode::MultiNodeMultiWriter).await),
        Code::AlreadyExists
    );
    driver
        .delete_volume(DeleteVolumeRequest { volume_id: a, ..Default::default() })
        .expect("delete");
    assert_eq!(
        driver.get_capacity(GetCapacityRequest::default()).expect("capacity").available_capacity,
        10 * GIB
    );
}

#[tokio::test]
async fn publish_creates_the_target_path_and_unpublish_removes_it() {
    let driver = Driver::default();
    let dir = tempfile::tempdir().expect("temp dir");
    let id = create(&driver, "paths", GIB, Mode::SingleNodeWriter).await.expect("create");
    let stage = NodeStageVolumeRequest {
        volume_id: id.clone(),
        staging_target_path: "/staging".into(),
        volume_capability: Some(capability(Mode::SingleNodeWriter)),
        ..Default::default()
    };
    driver.node_stage_volume(stage).await.expect("stage");
    let target = dir.path().join("mount");
    let publish = |target: &std::path::Path| NodePublishVolumeRequest {
        volume_id: id.clone(),
        staging_target_path: "/staging".into(),
        target_path: target.to_str().expect("utf-8").to_owned(),
        volume_capability: Some(capability(Mode::SingleNodeWriter)),
        ..Default::default()
    };
    driver.node_publish_volume(publish(&target)).await.expect("publish");
    assert!(target.is_dir(), "a mount publication is a directory");
    driver.node_publish_volume(publish(&target)).await.expect("publish again: idempotent");
    let unpublish = NodeUnpublishVolumeRequest {
        volume_id: id.clone(),
        target_path: target.to_str().expect("utf-8").to_owned(),
    };
    driver.node_unpublish_volume(unpublish.clone()).expect("unpublish");
    assert!(!target.exists(), "unpublish removes it");
    driver.node_unpublish_volume(unpublish).expect("unpublish again: idempotent");
    let orphan = dir.path().join("no-parent/mount");
    assert_eq!(code(driver.node_publish_volume(publish(&orphan)).await), Code::FailedPrecondition);
    // Block access: a file.
    let block = dir.path().join("block");
    create_target(block.to_str().expect("utf-8"), true).expect("create");
    assert!(block.is_file());
    remove_target(block.to_str().expect("utf-8")).expect("remove");
    assert!(!block.exists());
}

#[tokio::test]
async fn a_second_target_path_needs_a_multi_writer_mode() {
    let driver = Driver::default();
    for (mode, second) in [
        (Mode::SingleNodeWriter, Code::FailedPrecondition),
        (Mode::SingleNodeMultiWriter, Code::Ok),
        (Mode::MultiNodeReaderOnly, Code::Ok),
    ] {
        let id = create(&driver, &format!("{mode:?}"), GIB, mode).await.expect("create");
        let stage = NodeStageVolumeRequest {
            volume_id: id.clone(),
            staging_target_path: format!("/staging/{id}"),
            volume_capability: Some(capability(mode)),
            ..Default::default()
        };
        driver.node_stage_volume(stage).await.expect("stage");
        let publish = |target: &str| NodePublishVolumeRequest {
            volume_id: id.clone(),
            staging_target_path: format!("/staging/{id}"),
            target_path: target.to_owned(),
            volume_capability: Some(capability(mode)),
            ..Default::default()
        };
        let dir = tempfile::tempdir().expect("temp dir");
        let (t1, t2) = (dir.path().join("t1"), dir.path().join("t2"));
        let (t1, t2) = (t1.to_str().expect("utf-8"), t2.to_str().expect("utf-8"));
        driver.node_publish_volume(publish(t1)).await.expect("first publish");
        assert_eq!(code(driver.node_publish_volume(publish(t2)).await), second, "{mode:?}");
        let unstage = NodeUnstageVolumeRequest {
            volume_id: id.clone(),
            staging_target_path: format!("/staging/{id}"),
        };
        assert_eq!(
            code(driver.node_unstage_volume(unstage)),
            Code::FailedPrecondition,
            "unstage while published"
        );
    }
}

#[tokio::test]
async fn mutable_parameters_outside_the_accepted_names_are_refused_and_nothing_is_applied() {
    use csikit::v1::ControllerModifyVolumeRequest;
    let driver =
        Driver::new(Config { mutable_parameters: vec!["iops".to_owned()], ..Config::default() });
    let create = |name: &str, params: &[(&str, &str)]| CreateVolumeRequest {
        name: name.to_owned(),
        volume_capabilities: vec![capability(Mode::SingleNodeWriter)],
        mutable_parameters: params
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
        ..Default::default()
    };
    let refused = driver.create_volume(create("a", &[("iops", "10"), ("XXX_FakeKey", "1")])).await;
    let status = refused.expect_err("an unknown name is refused");
    assert_eq!(status.code(), Code::InvalidArgument);
    assert!(status.message().contains("'XXX_FakeKey'"), "{}", status.message());
    assert!(driver.state().volume_names.is_empty(), "nothing was created");
    let id = driver
        .create_volume(create("b", &[("iops", "10")]))
        .await
        .expect("an accepted name")
        .volume
        .unwrap_or_default()
        .volume_id;
    let modify = |params: &[(&str, &str)]| ControllerModifyVolumeRequest {
        volume_id: id.clone(),
        mutable_parameters: params
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
        ..Default::default()
    };
    assert_eq!(
        code(driver.controller_modify_volume(modify(&[("iops", "20"), ("bogus", "1")]))),
        Code::InvalidArgument
    );
    let held = |d: &Driver| d.state().volumes.get(&id).map(|v| v.mutable_parameters.clone());
    assert_eq!(
        held(&driver).and_then(|p| p.get("iops").cloned()).as_deref(),
        Some("10"),
        "nothing applied"
    );
    assert_eq!(code(driver.controller_modify_volume(modify(&[("iops", "20")]))), Code::Ok);
    assert_eq!(held(&driver).and_then(|p| p.get("iops").cloned()).as_deref(), Some("20"));
    // The fault accepts anything.
    let faulty = Driver::new(Config { fault: Some(Fault::AcceptAnyMutable), ..Config::default() });
    assert!(faulty.create_volume(create("c", &[("XXX_FakeKey", "1")])).await.is_ok());
}

#[test]
fn the_default_mutable_parameters_are_the_documented_ones() {
    assert_eq!(Config::default().mutable_parameters, DEFAULT_MUTABLE_PARAMETERS);
}

#[tokio::test]
async fn a_group_snapshot_is_one_snapshot_per_volume_deleted_with_the_group_only() {
    use csikit::v1::{
        CreateVolumeGroupSnapshotRequest, DeleteSnapshotRequest, DeleteVolumeGroupSnapshotRequest,
        GetSnapshotRequest, GetVolumeGroupSnapshotRequest,
    };
    let driver = Driver::default();
    let a = create(&driver, "a", GIB, Mode::SingleNodeWriter).await.expect("create a");
    let b = create(&driver, "b", GIB, Mode::SingleNodeWriter).await.expect("create b");
    let ask = |sources: Vec<String>| CreateVolumeGroupSnapshotRequest {
        name: "g".into(),
        source_volume_ids: sources,
        ..Default::default()
    };
    let g = driver.create_volume_group_snapshot(ask(vec![a.clone(), b.clone()])).expect("group");
    let g = g.group_snapshot.expect("group_snapshot");
    assert_eq!(g.snapshots.len(), 2);
    assert!(g.snapshots.iter().all(|s| s.group_snapshot_id == g.group_snapshot_id));
    // The same name and volumes: the same group; other volumes: ALREADY_EXISTS.
    let again = driver.create_volume_group_snapshot(ask(vec![b.clone(), a.clone()]));
    assert_eq!(
        again.expect("again").group_snapshot.map(|x| x.group_snapshot_id),
        Some(g.group_snapshot_id.clone())
    );
    assert_eq!(
        code(driver.create_volume_group_snapshot(ask(vec![a.clone()]))),
        Code::AlreadyExists
    );
    let members: Vec<String> = g.snapshots.iter().map(|s| s.snapshot_id.clone()).collect();
    // A member is not deleted alone, and says which group it is part of.
    let alone = DeleteSnapshotRequest { snapshot_id: members[0].clone(), ..Default::default() };
    assert_eq!(code(driver.delete_snapshot(alone)), Code::InvalidArgument);
    let got = driver
        .get_snapshot(GetSnapshotRequest { snapshot_id: members[0].clone(), ..Default::default() });
    assert_eq!(
        got.expect("get").snapshot.map(|s| s.group_snapshot_id),
        Some(g.group_snapshot_id.clone())
    );
    // A snapshot list that is not the group's is refused.
    let get = |ids: Vec<String>| GetVolumeGroupSnapshotRequest {
        group_snapshot_id: g.group_snapshot_id.clone(),
        snapshot_ids: ids,
        ..Default::default()
    };
    assert_eq!(
        code(driver.get_volume_group_snapshot(get(vec![members[0].clone()]))),
        Code::InvalidArgument
    );
    assert_eq!(code(driver.get_volume_group_snapshot(get(members.clone()))), Code::Ok);
    let delete = DeleteVolumeGroupSnapshotRequest {
        group_snapshot_id: g.group_snapshot_id.clone(),
        snapshot_ids: members.clone(),
        ..Default::default()
    };
    assert_eq!(code(driver.delete_volume_group_snapshot(delete.clone())), Code::Ok);
    assert_eq!(code(driver.delete_volume_group_snapshot(delete)), Code::Ok);
    assert_eq!(code(driver.get_volume_group_snapshot(get(members.clone()))), Code::NotFound);
    let gone = driver
        .get_snapshot(GetSnapshotRequest { snapshot_id: members[1].clone(), ..Default::default() });
    assert_eq!(code(gone), Code::NotFound);
}

#[tokio::test]
async fn volumes_are_made_only_within_a_requisite_that_names_this_node() {
    let driver = Driver::default();
    let mine = driver.config().topology();
    let other = Topology { segments: [(TOPOLOGY_KEY.to_owned(), "elsewhere".to_owned())].into() };
    let ask = |name: &str, requisite: Vec<Topology>| CreateVolumeRequest {
        name: name.to_owned(),
        volume_capabilities: vec![capability(Mode::SingleNodeWriter)],
        accessibility_requirements: Some(TopologyRequirement { requisite, preferred: Vec::new() }),
        ..Default::default()
    };
    let made = driver.create_volume(ask("here", vec![other.clone(), mine.clone()])).await;
    assert_eq!(made.expect("create").volume.map(|v| v.accessible_topology), Some(vec![mine]));
    let refused = driver.create_volume(ask("there", vec![other])).await;
    assert_eq!(code(refused), Code::ResourceExhausted);
}
