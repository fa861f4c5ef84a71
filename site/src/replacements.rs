//! What replaces what across a release that removes elements: the one table the "Upgrading to"
//! guide pages are made from (with the diff engine's findings and the new release's proto
//! comments), each row naming its sources.
//!
//! A row is data, not prose about the spec: the element that went, the elements that stand for
//! it, one sentence on how a driver moves from one to the other, who in Kubernetes reads it (as
//! KEP-1432 describes that reader), and where each of those is said. `tests/upgrade.rs` holds the
//! table to the corpus: every element it names exists in its release, every removal the diff
//! engine finds has a row, and every proto source's words are in that element's comment.

/// Where a row's claim is said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The comment on an element of the new release's proto (its full name), holding these words.
    Proto {
        /// The element's full name in the new release.
        element: &'static str,
        /// Words of its comment (whitespace aside) that say it.
        says: &'static str,
    },
    /// A section of KEP-1432, "Volume Health Monitor" ([`KEP_1432`]), by its heading.
    Kep1432 {
        /// The section's heading.
        section: &'static str,
    },
}

/// Kubernetes' enhancement proposal for the volume health monitor, which the CSI health fields
/// and RPCs are for.
pub const KEP_1432: &str = "https://github.com/kubernetes/enhancements/tree/master/keps/sig-storage/1432-volume-health-monitor";

/// Who in Kubernetes reads what a row's old element carried, as KEP-1432 describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reader {
    /// The component, e.g. `external-health-monitor-controller`.
    pub who: &'static str,
    /// What it does with it (markdown, English).
    pub does: &'static str,
    /// Where that is said.
    pub source: Source,
}

/// One element a release removed and what stands for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Replacement {
    /// The element that went: its full name in the release before.
    pub old: &'static str,
    /// What stands for it: full names in the new release.
    pub new: &'static [&'static str],
    /// How a driver moves from the one to the other (markdown, English; identifiers in
    /// backticks link to the new release's entries).
    pub how: &'static str,
    /// Who reads it in Kubernetes, if anyone the sources name.
    pub reader: Option<Reader>,
    /// Where `new` and `how` are said.
    pub sources: &'static [Source],
}

/// The replacements of one release pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Upgrade {
    /// The release before, e.g. `v1.12.0`.
    pub from: &'static str,
    /// The release that removed the elements, e.g. `v1.13.0`.
    pub to: &'static str,
    /// One row per removed element a driver author acts on.
    pub rows: &'static [Replacement],
}

/// Every upgrade the site has a guide for.
pub const UPGRADES: &[Upgrade] = &[Upgrade { from: "v1.12.0", to: "v1.13.0", rows: V1_13_0 }];

const HEALTH_STATUSES: Source = Source::Proto {
    element: "csi.v1.VolumeHealth.health_statuses",
    says: "An empty list means no adverse health condition is known by the Plugin.",
};

const EXTERNAL_CONTROLLER: Source = Source::Kep1432 { section: "External controller" };

/// v1.13.0 takes volume health out of the volume and stats answers (the alpha `VolumeCondition`)
/// into four alpha RPCs of their own, each behind a capability.
const V1_13_0: &[Replacement] = &[
    Replacement {
        old: "csi.v1.VolumeCondition",
        new: &["csi.v1.VolumeHealth", "csi.v1.VolumeHealth.VolumeHealthEntry"],
        how: "A volume's health is a list of entries rather than one flag and text: no entry \
              means no adverse condition is known; each entry names one condition by `status` \
              and `reason`.",
        reader: None,
        sources: &[HEALTH_STATUSES],
    },
    Replacement {
        old: "csi.v1.VolumeCondition.abnormal",
        new: &["csi.v1.VolumeHealth.VolumeHealthEntry.status", "csi.v1.VolumeHealthErrorType"],
        how: "`abnormal = true` becomes an entry per condition whose `status` says which: \
              `DEGRADED`, `INACCESSIBLE` or `DATA_LOSS`; `abnormal = false` becomes an empty \
              `health_statuses`.",
        reader: None,
        sources: &[
            HEALTH_STATUSES,
            Source::Proto {
                element: "csi.v1.VolumeHealthErrorType.DEGRADED",
                says: "The volume is usable but is not operating optimally.",
            },
        ],
    },
    Replacement {
        old: "csi.v1.VolumeCondition.message",
        new: &[
            "csi.v1.VolumeHealth.VolumeHealthEntry.message",
            "csi.v1.VolumeHealth.VolumeHealthEntry.reason",
        ],
        how: "The text for people goes to each entry's `message`, now OPTIONAL; each entry also \
              needs a REQUIRED CamelCase `reason`, never twice with the same `status` for one \
              volume.",
        reader: None,
        sources: &[Source::Proto {
            element: "csi.v1.VolumeHealth.VolumeHealthEntry.reason",
            says: "The Plugin MUST NOT return multiple VolumeHealthEntry messages for the same \
                   volume with the same (status, reason) combination.",
        }],
    },
    Replacement {
        old: "csi.v1.ListVolumesResponse.VolumeStatus.volume_condition",
        new: &[
            "csi.v1.Controller.ControllerListVolumeHealth",
            "csi.v1.ControllerListVolumeHealthResponse.entries",
        ],
        how: "`ListVolumes` no longer says how volumes are: `ControllerListVolumeHealth` lists \
              the volumes with an adverse condition, one `VolumeHealth` each, in pages as \
              `ListVolumes` does (`max_entries`, `starting_token`, `next_token`).",
        reader: Some(Reader {
            who: "external-health-monitor-controller",
            does: "A sidecar beside the Controller Plugin. At an interval it asks the plugin \
                   how its volumes are, with the list call where the plugin has it, and \
                   reports an abnormal volume as an event on its PVC.",
            source: EXTERNAL_CONTROLLER,
        }),
        sources: &[Source::Proto {
            element: "csi.v1.ControllerListVolumeHealthResponse.entries",
            says: "List of abnormal volume health entries.",
        }],
    },
    Replacement {
        old: "csi.v1.ControllerGetVolumeResponse.VolumeStatus.volume_condition",
        new: &[
            "csi.v1.Controller.ControllerGetVolumeHealth",
            "csi.v1.ControllerGetVolumeHealthResponse.volume_health",
        ],
        how: "One volume's health comes from `ControllerGetVolumeHealth` (its `volume_id`, \
              `secrets` if the plugin needs them), whose `volume_health` is REQUIRED.",
        reader: Some(Reader {
            who: "external-health-monitor-controller",
            does: "Where the plugin cannot list volumes, it asks volume by volume, at the same \
                   interval, and reports the same events.",
            source: EXTERNAL_CONTROLLER,
        }),
        sources: &[Source::Proto {
            element: "csi.v1.ControllerGetVolumeHealthResponse.volume_health",
            says: "The health information for the requested volume. This field is REQUIRED.",
        }],
    },
    Replacement {
        old: "csi.v1.NodeGetVolumeStatsResponse.volume_condition",
        new: &[
            "csi.v1.Node.NodeGetVolumeHealth",
            "csi.v1.NodeGetVolumeHealthResponse.volume_health",
        ],
        how: "The node's view of a volume's health leaves `NodeGetVolumeStats` for \
              `NodeGetVolumeHealth`, which takes the `volume_id` and, where the CO has them, the \
              `volume_publish_path` and `staging_target_path`.",
        reader: Some(Reader {
            who: "kubelet",
            does: "With the `CSIVolumeHealth` feature gate on, it reads the node's view of a \
                   volume's condition in the same call it gathers the volume's stats with, and \
                   reports an abnormal volume as an event on every Pod using it.",
            source: Source::Kep1432 { section: "Kubelet" },
        }),
        sources: &[Source::Proto {
            element: "csi.v1.NodeGetVolumeHealthResponse.volume_health",
            says: "The health information for the requested volume.",
        }],
    },
    Replacement {
        old: "csi.v1.ControllerServiceCapability.RPC.Type.VOLUME_CONDITION",
        new: &[
            "csi.v1.ControllerServiceCapability.RPC.Type.GET_VOLUME_HEALTH",
            "csi.v1.ControllerServiceCapability.RPC.Type.LIST_VOLUME_HEALTH",
        ],
        how: "Advertise `GET_VOLUME_HEALTH` for `ControllerGetVolumeHealth`, and also \
              `LIST_VOLUME_HEALTH` for `ControllerListVolumeHealth`, which requires the first.",
        reader: None,
        sources: &[
            Source::Proto {
                element: "csi.v1.ControllerServiceCapability.RPC.Type.GET_VOLUME_HEALTH",
                says: "Indicates the SP supports the ControllerGetVolumeHealth RPC.",
            },
            Source::Proto {
                element: "csi.v1.ControllerServiceCapability.RPC.Type.LIST_VOLUME_HEALTH",
                says: "A plugin which supports the LIST_VOLUME_HEALTH capability MUST also \
                       support the GET_VOLUME_HEALTH capability.",
            },
        ],
    },
    Replacement {
        old: "csi.v1.NodeServiceCapability.RPC.Type.VOLUME_CONDITION",
        new: &["csi.v1.NodeServiceCapability.RPC.Type.GET_VOLUME_HEALTH"],
        how: "Advertise the Node service's `GET_VOLUME_HEALTH` for `NodeGetVolumeHealth`.",
        reader: None,
        sources: &[Source::Proto {
            element: "csi.v1.NodeServiceCapability.RPC.Type.GET_VOLUME_HEALTH",
            says: "Indicates the SP supports the NodeGetVolumeHealth RPC.",
        }],
    },
];
