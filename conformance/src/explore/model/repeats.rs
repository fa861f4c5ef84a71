//! What the model remembers of refusals that may pass (UNKNOWN, INTERNAL and the transient
//! codes): per source and request shape, the last request refused and how many times in a row
//! it was refused with the same code; and the sources of creates answered OK, so that a source
//! refused every time is told from a plugin that creates nothing (see `judge/repeats`).

use std::collections::{BTreeMap, BTreeSet};

use super::super::call::Source;

/// The refusals in a row with one code that make a finding.
pub(crate) const TIMES: u8 = 3;

/// A create from a live source refused again and again with one code.
#[derive(Debug, Clone)]
pub(crate) struct Repeat {
    pub(crate) mib: u32,
    pub(crate) limit: u32,
    pub(crate) code: tonic::Code,
    pub(crate) times: u8,
}

/// The refusals in a row, by (source, request shape), and the sources created from with OK.
#[derive(Debug, Clone, Default)]
pub(crate) struct Repeats {
    pub(crate) refused: BTreeMap<(Source, &'static str), Repeat>,
    pub(crate) served: BTreeSet<Source>,
}
