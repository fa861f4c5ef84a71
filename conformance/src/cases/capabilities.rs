//! What one advertised capability obliges of the others: a VolumeExpansion type comes with the
//! EXPAND_VOLUME capability it needs, LIST_VOLUMES_PUBLISHED_NODES with PUBLISH_UNPUBLISH_VOLUME.
//! (A capability that obliges an RPC is the generated obligation cases'; one that obliges what
//! answers hold is [`crate::answers`]'.)

use csikit::v1::controller_service_capability::rpc::Type as Ctl;
use csikit::v1::node_service_capability::rpc::Type as Nd;
use csikit::v1::plugin_capability::volume_expansion::Type as Expansion;

use crate::case::{Case, Need, body};
use crate::report::Outcome;
use crate::sentence::Sentence;
use crate::suite::Suite;

pub(crate) const CASES: &[Case] = &[
    Case {
        name: "capabilities: ONLINE expansion comes with controller or node EXPAND_VOLUME",
        needs: &[Need::Online],
        sentence: Sentence::must(
            "PluginCapability.VolumeExpansion.Type.ONLINE",
            "When a Plugin implements this capability it MUST implement either the EXPAND_VOLUME controller capability or the EXPAND_VOLUME node capability or both.",
        ),
        body: body!(online),
    },
    Case {
        name: "capabilities: OFFLINE expansion comes with controller EXPAND_VOLUME",
        needs: &[],
        sentence: Sentence::must(
            "PluginCapability.VolumeExpansion.Type.OFFLINE",
            "When a plugin supports OFFLINE volume expansion it MUST implement either the EXPAND_VOLUME controller capability or both the EXPAND_VOLUME controller capability and the EXPAND_VOLUME node capability.",
        ),
        body: body!(offline),
    },
    Case {
        name: "capabilities: LIST_VOLUMES_PUBLISHED_NODES comes with PUBLISH_UNPUBLISH_VOLUME",
        needs: &[Need::Ctl(Ctl::ListVolumesPublishedNodes)],
        sentence: Sentence::must(
            "ControllerServiceCapability.RPC.Type.LIST_VOLUMES_PUBLISHED_NODES",
            "The SP MUST also support PUBLISH_UNPUBLISH_VOLUME.",
        ),
        body: body!(published_nodes),
    },
];

async fn online(s: &mut Suite) -> Outcome {
    if s.plugin.has(Ctl::ExpandVolume) || s.plugin.node_has(Nd::ExpandVolume) {
        Outcome::Passed
    } else {
        Outcome::Failed(
            "ONLINE volume expansion is advertised, and neither controller nor node EXPAND_VOLUME"
                .into(),
        )
    }
}

async fn offline(s: &mut Suite) -> Outcome {
    match s.plugin.expansion {
        Some(Expansion::Offline) if !s.plugin.has(Ctl::ExpandVolume) => Outcome::Failed(
            "OFFLINE volume expansion is advertised without controller EXPAND_VOLUME".into(),
        ),
        Some(Expansion::Offline) => Outcome::Passed,
        _ => Outcome::Skipped("no OFFLINE volume expansion".into()),
    }
}

async fn published_nodes(s: &mut Suite) -> Outcome {
    if s.plugin.has(Ctl::PublishUnpublishVolume) {
        Outcome::Passed
    } else {
        Outcome::Failed(
            "LIST_VOLUMES_PUBLISHED_NODES is advertised without PUBLISH_UNPUBLISH_VOLUME".into(),
        )
    }
}
