//! The written cases, one file per group, each a table of [`Case`] rows (identity, volume, modify,
//! list, publish, node, access, snapshot); the cases built from the spec's facts ([`facts`]); and
//! those built from its error tables ([`errors`]).

mod access;
pub(crate) mod errors;
pub(crate) mod facts;
mod identity;
mod list;
mod modify;
mod node;
mod publish;
mod snapshot;
mod volume;

use crate::case::Case;

/// Every written case, in the order run.
pub(crate) fn table() -> impl Iterator<Item = &'static Case> {
    [
        identity::CASES,
        volume::CASES,
        modify::CASES,
        list::CASES,
        publish::CASES,
        node::CASES,
        access::CASES,
        snapshot::CASES,
    ]
    .into_iter()
    .flatten()
}
