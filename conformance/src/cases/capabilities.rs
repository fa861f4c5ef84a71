//! What one advertised capability obliges of the others: a VolumeExpansion type comes with the
//! EXPAND_VOLUME capability it needs (written cases), and each capability the proto's comments
//! say implies another (LIST_VOLUMES_PUBLISHED_NODES ⇒ PUBLISH_UNPUBLISH_VOLUME,
//! LIST_VOLUME_HEALTH ⇒ GET_VOLUME_HEALTH) comes with it: one generated case per implication of
//! the Model (`csikit::v1::server::Spec::IMPLICATIONS`), so a release that adds one adds its
//! case. (A capability that obliges an RPC is the generated obligation cases'; one that obliges
//! what answers hold is [`crate::answers`]'.)

use std::time::Instant;

use csikit::server::PluginSpec as _;
use csikit::v1::controller_service_capability::rpc::Type as Ctl;
use csikit::v1::node_service_capability::rpc::Type as Nd;
use csikit::v1::plugin_capability::volume_expansion::Type as Expansion;

use crate::case::{Case, Need, body};
use crate::record::Recorder;
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

/// The generated implication cases' name, for `--list` and the audit.
pub(crate) const IMPLIED_FAMILY: &str =
    "capabilities: <capability> comes with <capability it implies>";

/// The sentences that state the implications, as the proto's comments word them (` / ` between
/// them); each case cites the one that names the capability it requires.
pub(crate) const IMPLIED: Sentence = Sentence::must(
    "ControllerServiceCapability.RPC.Type",
    "The SP MUST also support PUBLISH_UNPUBLISH_VOLUME. / A plugin which supports the LIST_VOLUME_HEALTH capability MUST also support the GET_VOLUME_HEALTH capability.",
);

/// The sentence of [`IMPLIED`] that names `requires`, or all of it.
fn implied_sentence(requires: &str) -> Sentence {
    let text = IMPLIED
        .text
        .split(" / ")
        .find(|part| {
            part.contains(&format!("support {requires}"))
                || part.contains(&format!("the {requires} capability"))
        })
        .unwrap_or(IMPLIED.text);
    Sentence { text, ..IMPLIED }
}

/// One case per implication of the Model: passed when the plugin advertises both capabilities,
/// failed when it advertises the first without the second, skipped (naming it) when it does not
/// advertise the first.
pub(crate) async fn implications(s: &mut Suite, rec: &mut Recorder<'_>) {
    for i in csikit::v1::server::Spec::IMPLICATIONS {
        let ((service, name, number), (r_service, r_name, r_number)) = (i.capability, i.requires);
        let case = format!("capabilities: {name} comes with {r_name}");
        if !rec.wants(&case) {
            continue;
        }
        let started = Instant::now();
        let (Some(has), Some(needs)) =
            (Need::numbered(service, number), Need::numbered(r_service, r_number))
        else {
            continue;
        };
        let outcome = if !has.met(s) {
            Outcome::Skipped(has.missing())
        } else if needs.met(s) {
            Outcome::Passed
        } else {
            Outcome::Failed(format!(
                "{name} is advertised without {r_name} (stated in {})",
                i.stated.words()
            ))
        };
        rec.record(s, case, implied_sentence(r_name), started, outcome);
    }
}
