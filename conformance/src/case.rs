//! A written case as data: its name, what the plugin must advertise for it to apply, the spec
//! sentence it checks, and its body. Applicability and the skip reason come from `needs` alone.

use std::future::Future;
use std::pin::Pin;

use csikit::v1::controller_service_capability::rpc::Type as Ctl;
use csikit::v1::group_controller_service_capability::rpc::Type as GroupCap;
use csikit::v1::node_service_capability::rpc::Type as Nd;
use csikit::v1::plugin_capability::volume_expansion::Type as Expansion;

use crate::report::Outcome;
use crate::sentence::Sentence;
use crate::suite::Suite;

/// A case's body: runs against the suite, ends with an outcome.
pub(crate) type Body = for<'a> fn(&'a mut Suite) -> Pin<Box<dyn Future<Output = Outcome> + 'a>>;

/// What a case needs the plugin to advertise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Need {
    /// The Controller service.
    Controller,
    /// The Node service.
    Node,
    /// A controller capability.
    Ctl(Ctl),
    /// A node capability.
    Nd(Nd),
    /// A group controller capability (the GroupController service advertised and answering).
    Group(GroupCap),
    /// The VOLUME_ACCESSIBILITY_CONSTRAINTS plugin capability.
    Accessibility,
    /// ONLINE volume expansion.
    Online,
    /// OFFLINE volume expansion.
    Offline,
    /// Mutable parameters the plugin accepts (`--mutable-parameters`).
    MutableParameters,
}

impl Need {
    /// Whether the plugin advertises it.
    pub(crate) fn met(self, s: &Suite) -> bool {
        match self {
            Need::Controller => s.plugin.controller(),
            Need::Node => s.plugin.has_node,
            Need::Ctl(c) => s.plugin.has(c),
            Need::Nd(n) => s.plugin.node_has(n),
            Need::Group(g) => s.plugin.group_has(g),
            Need::Accessibility => s.plugin.accessibility,
            Need::Online => s.plugin.expansion == Some(Expansion::Online),
            Need::Offline => s.plugin.expansion == Some(Expansion::Offline),
            Need::MutableParameters => !s.cfg.mutable_parameters.is_empty(),
        }
    }

    /// The capability numbered `number` of `service` (`Controller`, `Node`, `GroupController`),
    /// as the generated obligation and implication tables name one; `None` for another service.
    pub(crate) fn numbered(service: &str, number: i32) -> Option<Need> {
        match service {
            "Controller" => Some(Need::Ctl(Ctl::try_from(number).unwrap_or(Ctl::Unknown))),
            "Node" => Some(Need::Nd(Nd::try_from(number).unwrap_or(Nd::Unknown))),
            "GroupController" => {
                Some(Need::Group(GroupCap::try_from(number).unwrap_or(GroupCap::Unknown)))
            }
            _ => None,
        }
    }

    /// Why a case that needs it is skipped: `no CREATE_DELETE_VOLUME`.
    pub(crate) fn missing(self) -> String {
        match self {
            Need::Controller => "no Controller service".into(),
            Need::Node => "no Node service".into(),
            Need::Ctl(c) => format!("no {}", c.as_str_name()),
            Need::Nd(n) => format!("no node {}", n.as_str_name()),
            Need::Group(g) => format!("no group controller {}", g.as_str_name()),
            Need::Accessibility => "no VOLUME_ACCESSIBILITY_CONSTRAINTS".into(),
            Need::Online => "no ONLINE volume expansion".into(),
            Need::Offline => "no OFFLINE volume expansion".into(),
            Need::MutableParameters => {
                "no mutable parameter the plugin accepts was given (--mutable-parameters)".into()
            }
        }
    }
}

/// One written case.
pub(crate) struct Case {
    /// `group: what`.
    pub(crate) name: &'static str,
    /// Every one of these must be advertised for the case to run.
    pub(crate) needs: &'static [Need],
    /// The sentence it checks.
    pub(crate) sentence: Sentence,
    /// What it does.
    pub(crate) body: Body,
}

impl Case {
    /// `None` when the case applies; else why not.
    pub(crate) fn skip_reason(&self, s: &Suite) -> Option<String> {
        self.needs.iter().find(|n| !n.met(s)).map(|n| n.missing())
    }
}

/// A [`Body`] from an `async fn(&mut Suite) -> Outcome`.
macro_rules! body {
    ($f:path) => {{
        fn body(
            s: &mut $crate::suite::Suite,
        ) -> std::pin::Pin<Box<dyn std::future::Future<Output = $crate::report::Outcome> + '_>>
        {
            Box::pin($f(s))
        }
        body
    }};
}
pub(crate) use body;
