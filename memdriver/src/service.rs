//! The gRPC face of the plugin: `csikit::v1::server` trait impls that hand each request to
//! [`Driver`]. `#[csikit::csi_service]` records which RPCs each block implements, so the
//! skeleton can derive the capabilities and answer the rest `UNIMPLEMENTED`.

use std::sync::Arc;

use csikit::v1::{
    ControllerExpandVolumeRequest, ControllerExpandVolumeResponse,
    ControllerGetVolumeHealthRequest, ControllerGetVolumeHealthResponse,
    ControllerGetVolumeRequest, ControllerGetVolumeResponse, ControllerListVolumeHealthRequest,
    ControllerListVolumeHealthResponse, ControllerModifyVolumeRequest,
    ControllerModifyVolumeResponse, ControllerPublishVolumeRequest,
    ControllerPublishVolumeResponse, ControllerUnpublishVolumeRequest,
    ControllerUnpublishVolumeResponse, CreateSnapshotRequest, CreateSnapshotResponse,
    CreateVolumeGroupSnapshotRequest, CreateVolumeGroupSnapshotResponse, CreateVolumeRequest,
    CreateVolumeResponse, DeleteSnapshotRequest, DeleteSnapshotResponse,
    DeleteVolumeGroupSnapshotRequest, DeleteVolumeGroupSnapshotResponse, DeleteVolumeRequest,
    DeleteVolumeResponse, GetCapacityRequest, GetCapacityResponse, GetSnapshotRequest,
    GetSnapshotResponse, GetVolumeGroupSnapshotRequest, GetVolumeGroupSnapshotResponse,
    ListSnapshotsRequest, ListSnapshotsResponse, ListVolumesRequest, ListVolumesResponse,
    NodeExpandVolumeRequest, NodeExpandVolumeResponse, NodeGetInfoRequest, NodeGetInfoResponse,
    NodeGetStorageHealthRequest, NodeGetStorageHealthResponse, NodeGetVolumeHealthRequest,
    NodeGetVolumeHealthResponse, NodeGetVolumeStatsRequest, NodeGetVolumeStatsResponse,
    NodePublishVolumeRequest, NodePublishVolumeResponse, NodeStageVolumeRequest,
    NodeStageVolumeResponse, NodeUnpublishVolumeRequest, NodeUnpublishVolumeResponse,
    NodeUnstageVolumeRequest, NodeUnstageVolumeResponse, ValidateVolumeCapabilitiesRequest,
    ValidateVolumeCapabilitiesResponse,
};
use tonic::{Request, Response, Status};

use crate::Driver;

/// The Controller service over a shared [`Driver`].
#[derive(Debug, Clone)]
pub struct ControllerService(pub Arc<Driver>);

/// The Node service over a shared [`Driver`].
#[derive(Debug, Clone)]
pub struct NodeService(pub Arc<Driver>);

/// The GroupController service over a shared [`Driver`].
#[derive(Debug, Clone)]
pub struct GroupControllerService(pub Arc<Driver>);

#[csikit::csi_service]
impl csikit::v1::server::GroupController for GroupControllerService {
    async fn create_volume_group_snapshot(
        &self,
        request: Request<CreateVolumeGroupSnapshotRequest>,
    ) -> Result<Response<CreateVolumeGroupSnapshotResponse>, Status> {
        self.0
            .create_volume_group_snapshot(request.into_inner())
            .map(Response::new)
            .map_err(|e| crate::fault::status(self.0.config().fault, e))
    }

    async fn delete_volume_group_snapshot(
        &self,
        request: Request<DeleteVolumeGroupSnapshotRequest>,
    ) -> Result<Response<DeleteVolumeGroupSnapshotResponse>, Status> {
        self.0
            .delete_volume_group_snapshot(request.into_inner())
            .map(Response::new)
            .map_err(|e| crate::fault::status(self.0.config().fault, e))
    }

    async fn get_volume_group_snapshot(
        &self,
        request: Request<GetVolumeGroupSnapshotRequest>,
    ) -> Result<Response<GetVolumeGroupSnapshotResponse>, Status> {
        self.0
            .get_volume_group_snapshot(request.into_inner())
            .map(Response::new)
            .map_err(|e| crate::fault::status(self.0.config().fault, e))
    }
}

#[csikit::csi_service]
impl csikit::v1::server::Controller for ControllerService {
    async fn create_volume(
        &self,
        request: Request<CreateVolumeRequest>,
    ) -> Result<Response<CreateVolumeResponse>, Status> {
        self.0
            .create_volume(request.into_inner())
            .await
            .map(Response::new)
            .map_err(|e| crate::fault::status(self.0.config().fault, e))
    }

    async fn delete_volume(
        &self,
        request: Request<DeleteVolumeRequest>,
    ) -> Result<Response<DeleteVolumeResponse>, Status> {
        self.0
            .delete_volume(request.into_inner())
            .map(Response::new)
            .map_err(|e| crate::fault::status(self.0.config().fault, e))
    }

    async fn controller_publish_volume(
        &self,
        request: Request<ControllerPublishVolumeRequest>,
    ) -> Result<Response<ControllerPublishVolumeResponse>, Status> {
        self.0
            .controller_publish_volume(request.into_inner())
            .map(Response::new)
            .map_err(|e| crate::fault::status(self.0.config().fault, e))
    }

    async fn controller_unpublish_volume(
        &self,
        request: Request<ControllerUnpublishVolumeRequest>,
    ) -> Result<Response<ControllerUnpublishVolumeResponse>, Status> {
        self.0
            .controller_unpublish_volume(request.into_inner())
            .map(Response::new)
            .map_err(|e| crate::fault::status(self.0.config().fault, e))
    }

    async fn validate_volume_capabilities(
        &self,
        request: Request<ValidateVolumeCapabilitiesRequest>,
    ) -> Result<Response<ValidateVolumeCapabilitiesResponse>, Status> {
        self.0
            .validate_volume_capabilities(request.into_inner())
            .map(Response::new)
            .map_err(|e| crate::fault::status(self.0.config().fault, e))
    }

    async fn list_volumes(
        &self,
        request: Request<ListVolumesRequest>,
    ) -> Result<Response<ListVolumesResponse>, Status> {
        self.0
            .list_volumes(request.into_inner())
            .map(Response::new)
            .map_err(|e| crate::fault::status(self.0.config().fault, e))
    }

    async fn get_capacity(
        &self,
        request: Request<GetCapacityRequest>,
    ) -> Result<Response<GetCapacityResponse>, Status> {
        self.0
            .get_capacity(request.into_inner())
            .map(Response::new)
            .map_err(|e| crate::fault::status(self.0.config().fault, e))
    }

    async fn create_snapshot(
        &self,
        request: Request<CreateSnapshotRequest>,
    ) -> Result<Response<CreateSnapshotResponse>, Status> {
        self.0
            .create_snapshot(request.into_inner())
            .map(Response::new)
            .map_err(|e| crate::fault::status(self.0.config().fault, e))
    }

    async fn delete_snapshot(
        &self,
        request: Request<DeleteSnapshotRequest>,
    ) -> Result<Response<DeleteSnapshotResponse>, Status> {
        self.0
            .delete_snapshot(request.into_inner())
            .map(Response::new)
            .map_err(|e| crate::fault::status(self.0.config().fault, e))
    }

    async fn list_snapshots(
        &self,
        request: Request<ListSnapshotsRequest>,
    ) -> Result<Response<ListSnapshotsResponse>, Status> {
        self.0
            .list_snapshots(request.into_inner())
            .map(Response::new)
            .map_err(|e| crate::fault::status(self.0.config().fault, e))
    }

    async fn get_snapshot(
        &self,
        request: Request<GetSnapshotRequest>,
    ) -> Result<Response<GetSnapshotResponse>, Status> {
        self.0
            .get_snapshot(request.into_inner())
            .map(Response::new)
            .map_err(|e| crate::fault::status(self.0.config().fault, e))
    }

    async fn controller_expand_volume(
        &self,
        request: Request<ControllerExpandVolumeRequest>,
    ) -> Result<Response<ControllerExpandVolumeResponse>, Status> {
        self.0
            .controller_expand_volume(request.into_inner())
            .map(Response::new)
            .map_err(|e| crate::fault::status(self.0.config().fault, e))
    }

    async fn controller_get_volume(
        &self,
        request: Request<ControllerGetVolumeRequest>,
    ) -> Result<Response<ControllerGetVolumeResponse>, Status> {
        self.0
            .controller_get_volume(request.into_inner())
            .map(Response::new)
            .map_err(|e| crate::fault::status(self.0.config().fault, e))
    }

    async fn controller_list_volume_health(
        &self,
        request: Request<ControllerListVolumeHealthRequest>,
    ) -> Result<Response<ControllerListVolumeHealthResponse>, Status> {
        self.0
            .controller_list_volume_health(request.into_inner())
            .map(Response::new)
            .map_err(|e| crate::fault::status(self.0.config().fault, e))
    }

    async fn controller_get_volume_health(
        &self,
        request: Request<ControllerGetVolumeHealthRequest>,
    ) -> Result<Response<ControllerGetVolumeHealthResponse>, Status> {
        self.0
            .controller_get_volume_health(request.into_inner())
            .map(Response::new)
            .map_err(|e| crate::fault::status(self.0.config().fault, e))
    }

    async fn controller_modify_volume(
        &self,
        request: Request<ControllerModifyVolumeRequest>,
    ) -> Result<Response<ControllerModifyVolumeResponse>, Status> {
        self.0
            .controller_modify_volume(request.into_inner())
            .map(Response::new)
            .map_err(|e| crate::fault::status(self.0.config().fault, e))
    }
}

#[csikit::csi_service]
impl csikit::v1::server::Node for NodeService {
    async fn node_stage_volume(
        &self,
        request: Request<NodeStageVolumeRequest>,
    ) -> Result<Response<NodeStageVolumeResponse>, Status> {
        self.0
            .node_stage_volume(request.into_inner())
            .await
            .map(Response::new)
            .map_err(|e| crate::fault::status(self.0.config().fault, e))
    }

    async fn node_unstage_volume(
        &self,
        request: Request<NodeUnstageVolumeRequest>,
    ) -> Result<Response<NodeUnstageVolumeResponse>, Status> {
        self.0
            .node_unstage_volume(request.into_inner())
            .map(Response::new)
            .map_err(|e| crate::fault::status(self.0.config().fault, e))
    }

    async fn node_publish_volume(
        &self,
        request: Request<NodePublishVolumeRequest>,
    ) -> Result<Response<NodePublishVolumeResponse>, Status> {
        self.0
            .node_publish_volume(request.into_inner())
            .await
            .map(Response::new)
            .map_err(|e| crate::fault::status(self.0.config().fault, e))
    }

    async fn node_unpublish_volume(
        &self,
        request: Request<NodeUnpublishVolumeRequest>,
    ) -> Result<Response<NodeUnpublishVolumeResponse>, Status> {
        self.0
            .node_unpublish_volume(request.into_inner())
            .map(Response::new)
            .map_err(|e| crate::fault::status(self.0.config().fault, e))
    }

    async fn node_get_volume_stats(
        &self,
        request: Request<NodeGetVolumeStatsRequest>,
    ) -> Result<Response<NodeGetVolumeStatsResponse>, Status> {
        self.0
            .node_get_volume_stats(request.into_inner())
            .map(Response::new)
            .map_err(|e| crate::fault::status(self.0.config().fault, e))
    }

    async fn node_get_volume_health(
        &self,
        request: Request<NodeGetVolumeHealthRequest>,
    ) -> Result<Response<NodeGetVolumeHealthResponse>, Status> {
        self.0
            .node_get_volume_health(request.into_inner())
            .map(Response::new)
            .map_err(|e| crate::fault::status(self.0.config().fault, e))
    }

    async fn node_get_storage_health(
        &self,
        request: Request<NodeGetStorageHealthRequest>,
    ) -> Result<Response<NodeGetStorageHealthResponse>, Status> {
        self.0
            .node_get_storage_health(request.into_inner())
            .map(Response::new)
            .map_err(|e| crate::fault::status(self.0.config().fault, e))
    }

    async fn node_expand_volume(
        &self,
        request: Request<NodeExpandVolumeRequest>,
    ) -> Result<Response<NodeExpandVolumeResponse>, Status> {
        self.0
            .node_expand_volume(request.into_inner())
            .map(Response::new)
            .map_err(|e| crate::fault::status(self.0.config().fault, e))
    }

    async fn node_get_info(
        &self,
        request: Request<NodeGetInfoRequest>,
    ) -> Result<Response<NodeGetInfoResponse>, Status> {
        Ok(Response::new(self.0.node_get_info(request.into_inner())))
    }
}
