//! Every call the suite makes goes through here, typed ([`Suite::ask`]) or built by reflection
//! ([`Suite::raw`]): the request is sent as bytes on its method's path (the path from the spec's
//! facts), and what comes back is checked the same way for both: the answer against the facts
//! (REQUIRED fields, limits, non-negative numbers, declared enums), for the secret values the
//! suite sent, against the request that produced it and what the plugin advertises
//! ([`crate::answers`]), and an error's status against the Error Scheme.

use std::any::Any;

use csikit::facts::MethodFacts;
use csikit::v1::*;
use prost::Message;
use tonic::{Code, Status};

use crate::client::raw_call;
use crate::sentence::general;
use crate::suite::Suite;

/// A request type the suite sends, with its answer's type and its RPC's name.
pub(crate) trait Rpc: Message + Default + Clone + Send + Sync + 'static {
    /// The answer's type.
    type Response: Message + Default + Send + Sync + 'static;
    /// The RPC, as the facts name it: `CreateVolume`.
    const NAME: &'static str;
}

/// The table of RPCs: `Name: Request => Response`. It makes the [`Rpc`] impls and the decoding
/// of an encoded exchange for [`crate::answers`].
macro_rules! rpcs {
    ($($name:ident: $req:ident => $resp:ident),* $(,)?) => {
        $(impl Rpc for $req {
            type Response = $resp;
            const NAME: &'static str = stringify!($name);
        })*

        /// An encoded request and answer of the RPC `name`, decoded (`None`: an RPC the table
        /// does not hold, or bytes that do not decode).
        fn decode_exchange(
            name: &str,
            request: &[u8],
            answer: &[u8],
        ) -> Option<(Box<dyn Any>, Box<dyn Any>)> {
            match name {
                $(stringify!($name) => Some((
                    Box::new($req::decode(request).ok()?),
                    Box::new($resp::decode(answer).ok()?),
                )),)*
                _ => None,
            }
        }
    };
}

rpcs! {
    GetPluginInfo: GetPluginInfoRequest => GetPluginInfoResponse,
    GetPluginCapabilities: GetPluginCapabilitiesRequest => GetPluginCapabilitiesResponse,
    Probe: ProbeRequest => ProbeResponse,
    CreateVolume: CreateVolumeRequest => CreateVolumeResponse,
    DeleteVolume: DeleteVolumeRequest => DeleteVolumeResponse,
    ControllerPublishVolume: ControllerPublishVolumeRequest => ControllerPublishVolumeResponse,
    ControllerUnpublishVolume: ControllerUnpublishVolumeRequest => ControllerUnpublishVolumeResponse,
    ValidateVolumeCapabilities: ValidateVolumeCapabilitiesRequest => ValidateVolumeCapabilitiesResponse,
    ListVolumes: ListVolumesRequest => ListVolumesResponse,
    GetCapacity: GetCapacityRequest => GetCapacityResponse,
    ControllerGetCapabilities: ControllerGetCapabilitiesRequest => ControllerGetCapabilitiesResponse,
    CreateSnapshot: CreateSnapshotRequest => CreateSnapshotResponse,
    DeleteSnapshot: DeleteSnapshotRequest => DeleteSnapshotResponse,
    ListSnapshots: ListSnapshotsRequest => ListSnapshotsResponse,
    GetSnapshot: GetSnapshotRequest => GetSnapshotResponse,
    ControllerExpandVolume: ControllerExpandVolumeRequest => ControllerExpandVolumeResponse,
    ControllerGetVolume: ControllerGetVolumeRequest => ControllerGetVolumeResponse,
    ControllerModifyVolume: ControllerModifyVolumeRequest => ControllerModifyVolumeResponse,
    GroupControllerGetCapabilities: GroupControllerGetCapabilitiesRequest => GroupControllerGetCapabilitiesResponse,
    CreateVolumeGroupSnapshot: CreateVolumeGroupSnapshotRequest => CreateVolumeGroupSnapshotResponse,
    DeleteVolumeGroupSnapshot: DeleteVolumeGroupSnapshotRequest => DeleteVolumeGroupSnapshotResponse,
    GetVolumeGroupSnapshot: GetVolumeGroupSnapshotRequest => GetVolumeGroupSnapshotResponse,
    NodeStageVolume: NodeStageVolumeRequest => NodeStageVolumeResponse,
    NodeUnstageVolume: NodeUnstageVolumeRequest => NodeUnstageVolumeResponse,
    NodePublishVolume: NodePublishVolumeRequest => NodePublishVolumeResponse,
    NodeUnpublishVolume: NodeUnpublishVolumeRequest => NodeUnpublishVolumeResponse,
    NodeGetVolumeStats: NodeGetVolumeStatsRequest => NodeGetVolumeStatsResponse,
    NodeGetCapabilities: NodeGetCapabilitiesRequest => NodeGetCapabilitiesResponse,
    NodeGetInfo: NodeGetInfoRequest => NodeGetInfoResponse,
    NodeExpandVolume: NodeExpandVolumeRequest => NodeExpandVolumeResponse,
}

/// The facts of the RPC named `name`.
pub(crate) fn method(name: &str) -> Option<&'static MethodFacts> {
    csikit::v1::facts::FACTS.methods.iter().find(|m| m.name == name)
}

impl Suite {
    /// A typed call: `request` sent to its RPC within the deadline, the answer decoded and
    /// checked (see the module's words). A deadline passed is DEADLINE_EXCEEDED, whatever the
    /// plugin does.
    pub(crate) async fn ask<Q: Rpc>(&self, request: Q) -> Result<Q::Response, Status> {
        let Some(method) = method(Q::NAME) else {
            return Err(Status::internal(format!(
                "no facts for the RPC {} (a suite bug)",
                Q::NAME
            )));
        };
        let bytes = self.send(method, request.encode_to_vec()).await?;
        let answer = Q::Response::decode(bytes.as_slice()).map_err(|e| {
            Status::new(
                Code::Unknown,
                format!("the answer does not decode as {}: {e}", method.output),
            )
        })?;
        crate::answers::check(self, &request, &answer);
        Ok(answer)
    }

    /// A call of `method` with encoded `request` (built by reflection), its answer checked as
    /// [`Suite::ask`] checks one.
    pub(crate) async fn raw(
        &self,
        method: &MethodFacts,
        request: Vec<u8>,
    ) -> Result<Vec<u8>, Status> {
        let answer = self.send(method, request.clone()).await?;
        if let Some((q, a)) = decode_exchange(&method.name, &request, &answer) {
            crate::answers::check(self, q.as_ref(), a.as_ref());
        }
        Ok(answer)
    }

    /// Sends the bytes and checks what comes back against the facts, for secrets, and an
    /// error's status against the Error Scheme.
    async fn send(&self, method: &MethodFacts, request: Vec<u8>) -> Result<Vec<u8>, Status> {
        let answer = raw_call(&self.ch, &method.path, request, self.t).await;
        let name = method.output.rsplit('.').next().unwrap_or(&method.output);
        match &answer {
            Ok(bytes) => {
                match csikit::validate_encoded(&method.output, bytes) {
                    Ok(()) => {}
                    Err(csikit::ValidateEncodedError::Invalid(v)) => self.violations(name, &v),
                    Err(e) => {
                        self.problem(
                            format!("{name}: does not decode"),
                            e.to_string(),
                            general::RESPONSE_DECODES,
                        );
                    }
                }
                self.enums(&method.output, name, bytes);
                self.scan(name, bytes);
            }
            Err(s) => {
                let what = status_of(name);
                self.scan(&what, s.message().as_bytes());
                crate::answers::check_status(self, &what, s);
            }
        }
        answer
    }
}

/// Where a status message answering a call whose answer would be `name` stands.
fn status_of(name: &str) -> String {
    format!("the status message of {}", name.strip_suffix("Response").unwrap_or(name))
}
