//! The health answers' rules (CSI v1.13.0): a volume's health is the health of the volume asked
//! for, no (status, reason) of a volume twice, no storage backend (status, reason,
//! volume_capability) twice, ControllerListVolumeHealth within `max_entries`. Their REQUIRED
//! fields (`volume_health`, `volume_id`, `status`, `reason`; a `status` of 0 is unset) are the
//! facts' checks ([`crate::exchange`]).

use std::collections::BTreeSet;

use csikit::v1::*;

use super::{Found, rule};

/// A volume's health: no (status, reason) twice. (Its REQUIRED `volume_id`, `status` and
/// `reason`, a `status` of 0 being unset, are the facts' checks; [`crate::exchange`].)
fn health_entries(f: &mut Found<'_>, what: &str, h: &VolumeHealth) {
    let mut seen = BTreeSet::new();
    for e in &h.health_statuses {
        if !seen.insert((e.status, e.reason.as_str())) {
            f.broke(
                rule::HEALTH_ENTRY_ONCE,
                &format!("{what}.health_statuses: the same (status, reason) twice"),
                format!(
                    "{what} of volume {} holds ({}, '{}') more than once",
                    h.volume_id,
                    VolumeHealthErrorType::try_from(e.status)
                        .map_or_else(|_| e.status.to_string(), |t| t.as_str_name().to_owned()),
                    e.reason
                ),
            );
        }
    }
}

/// A volume's health answered for one volume: that volume's.
fn asked_health(f: &mut Found<'_>, what: &str, asked: &str, h: Option<&VolumeHealth>) {
    let Some(h) = h else { return };
    if !asked.is_empty() && h.volume_id != asked {
        f.broke(
            rule::HEALTH_VOLUME_ID,
            &format!("{what}.volume_id: another volume"),
            format!("the health of volume {asked} was answered for volume '{}'", h.volume_id),
        );
    }
    health_entries(f, what, h);
}

pub(super) fn get_health(
    f: &mut Found<'_>,
    q: &ControllerGetVolumeHealthRequest,
    a: &ControllerGetVolumeHealthResponse,
) {
    let what = "ControllerGetVolumeHealthResponse.volume_health";
    asked_health(f, what, &q.volume_id, a.volume_health.as_ref());
}

pub(super) fn node_health(
    f: &mut Found<'_>,
    q: &NodeGetVolumeHealthRequest,
    a: &NodeGetVolumeHealthResponse,
) {
    let what = "NodeGetVolumeHealthResponse.volume_health";
    asked_health(f, what, &q.volume_id, a.volume_health.as_ref());
}

pub(super) fn list_health(
    f: &mut Found<'_>,
    q: &ControllerListVolumeHealthRequest,
    a: &ControllerListVolumeHealthResponse,
) {
    if q.max_entries > 0 && a.entries.len() > q.max_entries as usize {
        f.broke(
            rule::LIST_HEALTH_MAX,
            "ControllerListVolumeHealthResponse.entries: more than max_entries",
            format!(
                "ControllerListVolumeHealth gave {} entries for max_entries {}",
                a.entries.len(),
                q.max_entries
            ),
        );
    }
    for h in &a.entries {
        health_entries(f, "ControllerListVolumeHealthResponse.entries", h);
    }
}

pub(super) fn storage_health(
    f: &mut Found<'_>,
    _: &NodeGetStorageHealthRequest,
    a: &NodeGetStorageHealthResponse,
) {
    let backends = &a.backend_health;
    for (i, b) in backends.iter().enumerate() {
        let again = backends[..i].iter().any(|earlier| {
            earlier.status == b.status
                && earlier.reason == b.reason
                && earlier.volume_capability == b.volume_capability
        });
        if again {
            f.broke(
                rule::STORAGE_ENTRY_ONCE,
                "NodeGetStorageHealthResponse.backend_health: the same (status, reason, volume_capability) twice",
                format!(
                    "NodeGetStorageHealth holds ({}, '{}', {}) more than once",
                    StorageHealthErrorType::try_from(b.status)
                        .map_or_else(|_| b.status.to_string(), |t| t.as_str_name().to_owned()),
                    b.reason,
                    if b.volume_capability.is_some() { "a volume_capability" } else { "no volume_capability" }
                ),
            );
        }
    }
}
