//! The written cases, one file per group, each a table of [`Case`] rows (identity, capabilities,
//! volume, expand, modify, list, publish, node, access, snapshot, group, health); the cases
//! built from the spec's facts ([`facts`]) and its capability implications
//! ([`capabilities::implications`]); and those built from its error tables ([`errors`]).

mod access;
pub(crate) mod capabilities;
pub(crate) mod errors;
pub(crate) mod expand;
pub(crate) mod facts;
pub(crate) mod group;
mod health;
mod identity;
mod list;
mod modify;
mod node;
mod publish;
pub(crate) mod snapshot;
mod volume;

use crate::case::Case;

/// Every written case, in the order run.
pub(crate) fn table() -> impl Iterator<Item = &'static Case> {
    [
        identity::CASES,
        capabilities::CASES,
        volume::CASES,
        expand::CASES,
        modify::CASES,
        list::CASES,
        publish::CASES,
        node::CASES,
        access::CASES,
        snapshot::CASES,
        group::CASES,
        health::CASES,
    ]
    .into_iter()
    .flatten()
}
