//! The health RPCs (CSI v1.13.0, alpha): ControllerGetVolumeHealth, ControllerListVolumeHealth,
//! NodeGetVolumeHealth and NodeGetStorageHealth. A volume reports the condition it was created
//! with (the `CreateVolume` parameters [`HEALTH_KEY`] and [`HEALTH_REASON_KEY`]); the node's
//! storage reports `MEMDRIVER_STORAGE_HEALTH` ([`StorageCondition`]). Nothing here changes with
//! time: a test that wants a condition asks for it when it creates the volume.

use std::collections::HashMap;

use csikit::v1::node_get_storage_health_response::StorageBackendHealth;
use csikit::v1::volume_health::VolumeHealthEntry;
use csikit::v1::{
    ControllerGetVolumeHealthRequest, ControllerGetVolumeHealthResponse,
    ControllerListVolumeHealthRequest, ControllerListVolumeHealthResponse,
    NodeGetStorageHealthRequest, NodeGetStorageHealthResponse, NodeGetVolumeHealthRequest,
    NodeGetVolumeHealthResponse, StorageHealthErrorType, VolumeHealth, VolumeHealthErrorType,
};
use tonic::Status;

use super::{Driver, Volume, no_volume, page};
use crate::fault::Fault;

/// The `CreateVolume` parameter that gives a volume an adverse health condition: a
/// `VolumeHealthErrorType` name (`DEGRADED`, `INACCESSIBLE`, `DATA_LOSS`).
pub const HEALTH_KEY: &str = "memdriver.csikit.dev/health";

/// The `CreateVolume` parameter naming the condition's `reason` (CamelCase); without it, the
/// status in CamelCase (`DATA_LOSS`: `DataLoss`).
pub const HEALTH_REASON_KEY: &str = "memdriver.csikit.dev/health-reason";

/// The health RPCs' methods, served only with [`Config::health`](super::Config): the builder
/// leaves them out of what it derives the capabilities from otherwise.
pub const HEALTH_RPCS: [&str; 4] = [
    "controller_get_volume_health",
    "controller_list_volume_health",
    "node_get_volume_health",
    "node_get_storage_health",
];

/// What an entry's `message` says of where its condition comes from.
const VOLUME_MESSAGE: &str = "set by the CreateVolume parameter memdriver.csikit.dev/health";
const STORAGE_MESSAGE: &str = "set by MEMDRIVER_STORAGE_HEALTH";

/// An adverse condition of a volume: its status and reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VolumeCondition {
    /// What is wrong.
    pub status: VolumeHealthErrorType,
    /// Why, in CamelCase.
    pub reason: String,
}

/// The condition of the node's storage (`MEMDRIVER_STORAGE_HEALTH=<status>:<Reason>`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StorageCondition {
    /// What is wrong.
    pub status: StorageHealthErrorType,
    /// Why, in CamelCase.
    pub reason: String,
}

impl StorageCondition {
    /// Reads `MEMDRIVER_STORAGE_HEALTH`'s value: `<StorageHealthErrorType name>:<Reason>`.
    ///
    /// # Errors
    ///
    /// Anything else, with the allowed statuses.
    pub fn parse(value: &str) -> Result<StorageCondition, String> {
        let allowed =
            || names(|n| StorageHealthErrorType::try_from(n).ok().map(|t| t.as_str_name()));
        let (status, reason) = value.split_once(':').ok_or_else(|| {
            format!(
                "MEMDRIVER_STORAGE_HEALTH must be '<status>:<Reason>' with a status of {}; got '{value}'",
                allowed()
            )
        })?;
        let status = StorageHealthErrorType::from_str_name(status)
            .filter(|s| *s != StorageHealthErrorType::UnknownStorageHealthErrorType)
            .ok_or_else(|| {
                format!(
                    "MEMDRIVER_STORAGE_HEALTH: '{status}' is not a status; allowed: {}",
                    allowed()
                )
            })?;
        camel_case(reason).map_err(|why| format!("MEMDRIVER_STORAGE_HEALTH: the reason {why}"))?;
        Ok(StorageCondition { status, reason: reason.to_owned() })
    }
}

/// The names of an enum's values from 1 on (0 is "unknown", never a condition), joined.
fn names(name: impl Fn(i32) -> Option<&'static str>) -> String {
    (1..).map_while(name).collect::<Vec<_>>().join(", ")
}

/// A reason is CamelCase: an upper-case letter, then letters and digits, at most 128 bytes
/// (the general size limit of a string).
fn camel_case(reason: &str) -> Result<(), String> {
    let ok = reason.len() <= 128
        && reason.starts_with(|c: char| c.is_ascii_uppercase())
        && reason.chars().all(|c| c.is_ascii_alphanumeric());
    if ok {
        Ok(())
    } else {
        Err(format!(
            "'{reason}' is not CamelCase (an upper-case letter, then letters and digits, at most 128 bytes)"
        ))
    }
}

/// The condition `CreateVolume`'s `parameters` ask for, if any.
///
/// # Errors
///
/// A status that is not a `VolumeHealthErrorType` name (or is the unknown one), a reason that is
/// not CamelCase, or a reason without a status: the message names the parameter and what it
/// allows.
pub fn requested_condition(
    parameters: &HashMap<String, String>,
) -> Result<Option<VolumeCondition>, String> {
    let reason = parameters.get(HEALTH_REASON_KEY);
    let Some(status) = parameters.get(HEALTH_KEY) else {
        return match reason {
            Some(_) => Err(format!("parameter '{HEALTH_REASON_KEY}' needs '{HEALTH_KEY}' too")),
            None => Ok(None),
        };
    };
    let status = VolumeHealthErrorType::from_str_name(status)
        .filter(|s| *s != VolumeHealthErrorType::UnknownVolumeHealthType)
        .ok_or_else(|| {
            format!(
                "parameter '{HEALTH_KEY}': '{status}' is not a volume health status; allowed: {}",
                names(|n| VolumeHealthErrorType::try_from(n).ok().map(|t| t.as_str_name()))
            )
        })?;
    let reason = match reason {
        Some(reason) => {
            camel_case(reason).map_err(|why| format!("parameter '{HEALTH_REASON_KEY}': {why}"))?;
            reason.clone()
        }
        None => status_camel_case(status.as_str_name()),
    };
    Ok(Some(VolumeCondition { status, reason }))
}

/// `DATA_LOSS` as `DataLoss`.
fn status_camel_case(name: &str) -> String {
    name.split('_')
        .map(|word| {
            let mut chars = word.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_string() + &chars.as_str().to_ascii_lowercase()
            })
        })
        .collect()
}

impl Volume {
    /// The condition the volume was created with (checked then, so it reads here).
    fn condition(&self) -> Option<VolumeCondition> {
        requested_condition(&self.parameters).ok().flatten()
    }
}

impl Driver {
    /// `UNIMPLEMENTED` unless the health RPCs are served (`MEMDRIVER_HEALTH`).
    fn health_served(&self) -> Result<(), Status> {
        if self.config.health {
            Ok(())
        } else {
            Err(Status::unimplemented("memdriver's health RPCs are off (MEMDRIVER_HEALTH=0)"))
        }
    }

    /// A volume's health as this plugin answers it, with the planted health bugs applied.
    /// `secrets` are the request's (a planted bug echoes them).
    fn volume_health(&self, volume: &Volume, secrets: &HashMap<String, String>) -> VolumeHealth {
        let mut entries: Vec<VolumeHealthEntry> = volume
            .condition()
            .map(|c| VolumeHealthEntry {
                status: c.status as i32,
                reason: c.reason,
                message: VOLUME_MESSAGE.to_owned(),
            })
            .into_iter()
            .collect();
        for e in &mut entries {
            if self.fault(Fault::HealthNoReason) {
                e.reason.clear();
            }
            if self.fault(Fault::HealthUnknownStatus) {
                e.status = VolumeHealthErrorType::UnknownVolumeHealthType as i32;
            }
            if self.fault(Fault::HealthSecretInMessage) {
                e.message = echo(&e.message, secrets);
            }
        }
        if self.fault(Fault::HealthDuplicateEntry) {
            entries.extend(entries.clone());
        }
        let volume_id = if self.fault(Fault::HealthOtherVolumeId) {
            format!("{}-other", volume.id)
        } else {
            volume.id.clone()
        };
        VolumeHealth { volume_id, health_statuses: entries }
    }

    /// The REQUIRED `volume_health` of a Get answer: the volume's, or none under the planted bug
    /// [`Fault::HealthNoVolumeHealth`].
    fn answered_health(
        &self,
        volume: &Volume,
        secrets: &HashMap<String, String>,
    ) -> Option<VolumeHealth> {
        (!self.fault(Fault::HealthNoVolumeHealth)).then(|| self.volume_health(volume, secrets))
    }

    /// `ControllerGetVolumeHealth`: the volume's condition, none when it is healthy.
    ///
    /// # Errors
    ///
    /// `UNIMPLEMENTED` without `MEMDRIVER_HEALTH` (as every health RPC);
    /// `UNAUTHENTICATED` without the required secret; `NOT_FOUND` for an unknown volume (the
    /// RPC has no error table in v1.13.0; NOT_FOUND is what ControllerGetVolume answers).
    pub fn controller_get_volume_health(
        &self,
        request: ControllerGetVolumeHealthRequest,
    ) -> Result<ControllerGetVolumeHealthResponse, Status> {
        self.health_served()?;
        self.authenticate(&request.secrets)?;
        let state = self.state();
        let volume = state
            .volumes
            .get(&request.volume_id)
            .ok_or_else(|| Status::not_found(no_volume(&request.volume_id)))?;
        Ok(ControllerGetVolumeHealthResponse {
            volume_health: self.answered_health(volume, &request.secrets),
        })
    }

    /// `ControllerListVolumeHealth`: the volumes with an adverse condition, in id order, paged
    /// as `ListVolumes` pages (a token is the last volume id of the page before).
    ///
    /// # Errors
    ///
    /// `UNAUTHENTICATED` without the required secret; `ABORTED` for a `starting_token` this
    /// plugin did not issue, as ListVolumes' table says of its own.
    pub fn controller_list_volume_health(
        &self,
        request: ControllerListVolumeHealthRequest,
    ) -> Result<ControllerListVolumeHealthResponse, Status> {
        self.health_served()?;
        self.authenticate(&request.secrets)?;
        let state = self.state();
        let max_entries =
            if self.fault(Fault::HealthIgnoreMaxEntries) { 0 } else { request.max_entries };
        let (listed, mut next_token) =
            page(&state.volumes, "vol", &request.starting_token, max_entries, |v: &Volume| {
                v.condition().is_some()
            })
            .map_err(|()| {
                Status::aborted(format!(
                    "starting_token '{}' is not one this plugin issued",
                    request.starting_token
                ))
            })?;
        if self.fault(Fault::HealthTokenNeverEnds) && next_token.is_empty() {
            // The planted bug: a last page that still points on, to where it started (or, with
            // nothing listed from the start, to before the first volume).
            next_token = listed.last().map_or_else(
                || {
                    if request.starting_token.is_empty() {
                        "vol-0000000000".to_owned()
                    } else {
                        request.starting_token.clone()
                    }
                },
                |v| v.id.clone(),
            );
        }
        let entries = listed.into_iter().map(|v| self.volume_health(v, &request.secrets)).collect();
        Ok(ControllerListVolumeHealthResponse { entries, next_token })
    }

    /// `NodeGetVolumeHealth`: the volume's condition as this node sees it (the same as the
    /// controller's: one process plays both). The kubelet sends the publish path of a volume it
    /// published; a path given must be where the volume is published or staged.
    ///
    /// # Errors
    ///
    /// `NOT_FOUND` for an unknown volume, or one neither published at `volume_publish_path` nor
    /// staged at `staging_target_path` when they are given.
    pub fn node_get_volume_health(
        &self,
        request: NodeGetVolumeHealthRequest,
    ) -> Result<NodeGetVolumeHealthResponse, Status> {
        self.health_served()?;
        let state = self.state();
        let volume = state
            .volumes
            .get(&request.volume_id)
            .ok_or_else(|| Status::not_found(no_volume(&request.volume_id)))?;
        let publish = &request.volume_publish_path;
        if !publish.is_empty() && !volume.published.contains_key(publish) {
            return Err(Status::not_found(format!(
                "volume '{}' is not published at '{publish}'",
                volume.id
            )));
        }
        let staging = &request.staging_target_path;
        if !staging.is_empty() && !volume.staged.contains_key(staging) {
            return Err(Status::not_found(format!(
                "volume '{}' is not staged at '{staging}'",
                volume.id
            )));
        }
        Ok(NodeGetVolumeHealthResponse {
            volume_health: self.answered_health(volume, &HashMap::new()),
        })
    }

    /// `NodeGetStorageHealth`: `MEMDRIVER_STORAGE_HEALTH`'s condition, or no entry (healthy).
    ///
    /// # Errors
    ///
    /// `UNAUTHENTICATED` without the required secret.
    pub fn node_get_storage_health(
        &self,
        request: NodeGetStorageHealthRequest,
    ) -> Result<NodeGetStorageHealthResponse, Status> {
        self.health_served()?;
        self.authenticate(&request.secrets)?;
        let mut backend_health: Vec<StorageBackendHealth> = self
            .config
            .storage_health
            .iter()
            .map(|c| StorageBackendHealth {
                status: c.status as i32,
                reason: c.reason.clone(),
                message: STORAGE_MESSAGE.to_owned(),
                volume_capability: None,
            })
            .collect();
        for b in &mut backend_health {
            if self.fault(Fault::HealthSecretInMessage) {
                b.message = echo(&b.message, &request.secrets);
            }
        }
        if self.fault(Fault::StorageDuplicateBackend) {
            backend_health.extend(backend_health.clone());
        }
        Ok(NodeGetStorageHealthResponse { backend_health })
    }
}

/// The planted bug of [`Fault::HealthSecretInMessage`]: a message with the request's secret
/// values in it, as a driver that formats its whole request into the message would.
fn echo(message: &str, secrets: &HashMap<String, String>) -> String {
    let mut values: Vec<&str> = secrets.values().map(String::as_str).collect();
    values.sort_unstable();
    format!("{message} (request secrets: {})", values.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
    }

    #[test]
    fn the_parameters_give_a_condition_or_a_message_naming_them() {
        assert_eq!(requested_condition(&params(&[])), Ok(None));
        assert_eq!(
            requested_condition(&params(&[(HEALTH_KEY, "DATA_LOSS")])),
            Ok(Some(VolumeCondition {
                status: VolumeHealthErrorType::DataLoss,
                reason: "DataLoss".into()
            }))
        );
        assert_eq!(
            requested_condition(&params(&[
                (HEALTH_KEY, "DEGRADED"),
                (HEALTH_REASON_KEY, "PathDown2")
            ])),
            Ok(Some(VolumeCondition {
                status: VolumeHealthErrorType::Degraded,
                reason: "PathDown2".into()
            }))
        );
        let bad = requested_condition(&params(&[(HEALTH_KEY, "SICK")])).expect_err("refused");
        assert!(
            bad.contains(HEALTH_KEY) && bad.contains("DEGRADED, INACCESSIBLE, DATA_LOSS"),
            "{bad}"
        );
        let unknown = requested_condition(&params(&[(HEALTH_KEY, "UNKNOWN_VOLUME_HEALTH_TYPE")]))
            .expect_err("refused");
        assert!(unknown.contains("allowed"), "{unknown}");
        for reason in ["pathDown", "Path Down", "", "Path-Down"] {
            let e = requested_condition(&params(&[
                (HEALTH_KEY, "DEGRADED"),
                (HEALTH_REASON_KEY, reason),
            ]))
            .expect_err("refused");
            assert!(e.contains(HEALTH_REASON_KEY) && e.contains("CamelCase"), "{reason}: {e}");
        }
        let alone =
            requested_condition(&params(&[(HEALTH_REASON_KEY, "PathDown")])).expect_err("refused");
        assert!(alone.contains(HEALTH_KEY), "{alone}");
    }

    #[test]
    fn the_storage_condition_reads_status_and_reason() {
        assert_eq!(
            StorageCondition::parse("STORAGE_UNREACHABLE:FabricDown"),
            Ok(StorageCondition {
                status: StorageHealthErrorType::StorageUnreachable,
                reason: "FabricDown".into()
            })
        );
        for bad in [
            "STORAGE_DEGRADED",
            "DEGRADED:Slow",
            "UNKNOWN_STORAGE_HEALTH_ERROR_TYPE:X",
            "STORAGE_DEGRADED:slow",
        ] {
            let e = StorageCondition::parse(bad).expect_err("refused");
            assert!(e.starts_with("MEMDRIVER_STORAGE_HEALTH"), "{bad}: {e}");
        }
        assert!(
            StorageCondition::parse("x")
                .expect_err("refused")
                .contains("STORAGE_DEGRADED, STORAGE_UNREACHABLE")
        );
    }
}
