//! What the plugin advertises: its services, its VolumeExpansion type, and the controller, group
//! controller and node capabilities, read from the capability answers (as numbers, so a v1.12
//! plugin's VOLUME_CONDITION, which v1.13.0 reserves, is read too). Plain data, so the cases
//! (what applies), the answer checks (the capability-conditional rules) and anything else that
//! talks to a plugin read it the same way.

use std::collections::HashSet;

use csikit::v1::controller_service_capability::rpc::Type as Ctl;
use csikit::v1::group_controller_service_capability::rpc::Type as GroupCap;
use csikit::v1::node_service_capability::rpc::Type as Nd;
use csikit::v1::plugin_capability::service::Type as Svc;
use csikit::v1::plugin_capability::volume_expansion::Type as Expansion;
use csikit::v1::{
    ControllerGetCapabilitiesResponse, GetPluginCapabilitiesResponse,
    GroupControllerGetCapabilitiesResponse, NodeGetCapabilitiesResponse,
    controller_service_capability, group_controller_service_capability, node_service_capability,
    plugin_capability,
};
use csikit::v1_12::controller_service_capability::rpc::Type as CtlV1_12;
use csikit::v1_12::node_service_capability::rpc::Type as NdV1_12;

/// What the plugin advertises (nothing until its capability answers are read).
#[derive(Debug, Clone, Default)]
pub(crate) struct Advertised {
    services: HashSet<i32>,
    /// The VOLUME_ACCESSIBILITY_CONSTRAINTS plugin capability.
    pub(crate) accessibility: bool,
    /// The VolumeExpansion type, if one is advertised.
    pub(crate) expansion: Option<Expansion>,
    ctl: HashSet<i32>,
    /// The group controller's capabilities (its service advertised and answering).
    group: HashSet<i32>,
    node: HashSet<i32>,
    /// The Node service answered NodeGetCapabilities.
    pub(crate) has_node: bool,
}

impl Advertised {
    /// What GetPluginCapabilities says: the services, VOLUME_ACCESSIBILITY_CONSTRAINTS and the
    /// expansion type.
    pub(crate) fn from_plugin(caps: &GetPluginCapabilitiesResponse) -> Advertised {
        let mut out = Advertised::default();
        for c in caps.capabilities.iter().filter_map(|c| c.r#type.as_ref()) {
            match c {
                plugin_capability::Type::Service(s) => {
                    out.services.insert(s.r#type);
                }
                plugin_capability::Type::VolumeExpansion(e) => {
                    out.expansion = Expansion::try_from(e.r#type).ok();
                }
            }
        }
        out.accessibility = out.services.contains(&(Svc::VolumeAccessibilityConstraints as i32));
        out
    }

    /// Takes the controller's RPC capabilities from ControllerGetCapabilities.
    pub(crate) fn read_controller(&mut self, r: &ControllerGetCapabilitiesResponse) {
        self.ctl = r
            .capabilities
            .iter()
            .filter_map(|c| match &c.r#type {
                Some(controller_service_capability::Type::Rpc(r)) => Some(r.r#type),
                _ => None,
            })
            .collect();
    }

    /// Takes the group controller's RPC capabilities from GroupControllerGetCapabilities.
    pub(crate) fn read_group(&mut self, r: &GroupControllerGetCapabilitiesResponse) {
        self.group = r
            .capabilities
            .iter()
            .filter_map(|c| match &c.r#type {
                Some(group_controller_service_capability::Type::Rpc(r)) => Some(r.r#type),
                _ => None,
            })
            .collect();
    }

    /// Takes the node's RPC capabilities from NodeGetCapabilities: the Node service answers.
    pub(crate) fn read_node(&mut self, r: &NodeGetCapabilitiesResponse) {
        self.has_node = true;
        self.node = r
            .capabilities
            .iter()
            .filter_map(|c| match &c.r#type {
                Some(node_service_capability::Type::Rpc(r)) => Some(r.r#type),
                _ => None,
            })
            .collect();
    }

    /// The plugin advertises the Controller service.
    pub(crate) fn controller(&self) -> bool {
        self.services.contains(&(Svc::ControllerService as i32))
    }

    /// The plugin advertises this controller capability.
    pub(crate) fn has(&self, c: Ctl) -> bool {
        self.controller() && self.ctl.contains(&(c as i32))
    }

    /// The plugin advertises the GroupController service.
    pub(crate) fn group_service(&self) -> bool {
        self.services.contains(&(Svc::GroupControllerService as i32))
    }

    /// The plugin serves the GroupController service with this capability.
    pub(crate) fn group_has(&self, c: GroupCap) -> bool {
        self.group.contains(&(c as i32))
    }

    /// The plugin advertises this node capability.
    pub(crate) fn node_has(&self, c: Nd) -> bool {
        self.has_node && self.node.contains(&(c as i32))
    }

    /// The plugin advertises this controller capability of CSI v1.12.0 (`csikit::v1_12`):
    /// VOLUME_CONDITION, whose number v1.13.0 reserves, is one only a v1.12 plugin advertises.
    pub(crate) fn has_v1_12(&self, c: CtlV1_12) -> bool {
        self.controller() && self.ctl.contains(&(c as i32))
    }

    /// The plugin advertises this node capability of CSI v1.12.0 (see [`Advertised::has_v1_12`]).
    pub(crate) fn node_has_v1_12(&self, c: NdV1_12) -> bool {
        self.has_node && self.node.contains(&(c as i32))
    }
}
