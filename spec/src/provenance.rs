//! Where a Model's facts come from: the kind of source it was read from, what that source cannot
//! state, and what was carried in from an older release. Plain data that `model` holds and
//! `source` and `carry` fill, so neither of those is imported by the model.

#[cfg(feature = "json")]
use serde::Serialize;

/// What a model was read from (JSON: `"spec"`, `"proto"`, `"descriptor_set"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "json", derive(Serialize))]
#[cfg_attr(feature = "json", serde(rename_all = "snake_case"))]
pub enum SourceKind {
    /// A spec's markdown (`spec.md`, or a csi-addons `README.md`) with its `.proto`.
    Spec,
    /// A `.proto` file alone (with its imports).
    Proto,
    /// An encoded `FileDescriptorSet`.
    DescriptorSet,
}

/// A part of the model a source cannot state (JSON: the snake_case name).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "json", derive(Serialize))]
#[cfg_attr(feature = "json", serde(rename_all = "snake_case"))]
pub enum NotAvailable {
    /// The RPCs' error tables (`methods[].errors` is empty).
    Errors,
    /// The general error table (`general_errors` is empty).
    GeneralErrors,
    /// The prose's headings (`sections` is empty, `methods[].section` is null).
    Sections,
    /// What the prose says a plugin MUST implement (`methods[].obligation` is null).
    Obligations,
    /// The release's own general size-limit table: `size_limits` holds the CSI defaults (128
    /// bytes per string, 4 KiB per map), which no CSI release has changed.
    SizeLimitTable,
    /// Comments (every `comment` is empty).
    Comments,
    /// REQUIRED / OPTIONAL, read from comments (every field's `presence` is `unknown`).
    Presence,
    /// Per-field size limits, read from comments (every `size_limit` is `none`).
    SizeLimits,
    /// Value rules read from comments (`non_negative`, `no_control_chars` are false).
    ValueRules,
    /// Whether a oneof is required, read from its comment (`oneofs[].required` is false).
    OneofRequired,
}

impl NotAvailable {
    /// The JSON spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            NotAvailable::Errors => "errors",
            NotAvailable::GeneralErrors => "general_errors",
            NotAvailable::Sections => "sections",
            NotAvailable::Obligations => "obligations",
            NotAvailable::SizeLimitTable => "size_limit_table",
            NotAvailable::Comments => "comments",
            NotAvailable::Presence => "presence",
            NotAvailable::SizeLimits => "size_limits",
            NotAvailable::ValueRules => "value_rules",
            NotAvailable::OneofRequired => "oneof_required",
        }
    }

    /// What only the markdown states: missing from every proto-only or descriptor-set source.
    pub const PROSE: [NotAvailable; 5] = [
        NotAvailable::Errors,
        NotAvailable::GeneralErrors,
        NotAvailable::Sections,
        NotAvailable::Obligations,
        NotAvailable::SizeLimitTable,
    ];

    /// What only comments state: missing from a descriptor set without source info.
    pub const COMMENTS: [NotAvailable; 5] = [
        NotAvailable::Comments,
        NotAvailable::Presence,
        NotAvailable::SizeLimits,
        NotAvailable::ValueRules,
        NotAvailable::OneofRequired,
    ];
}

/// The model's `source`: its kind, what it cannot state, and what was carried in from an older
/// release to stand for some of that.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "json", derive(Serialize))]
pub struct SourceInfo {
    /// What the model was read from.
    pub kind: SourceKind,
    /// What that source cannot state, sorted; empty for a spec folder. A part carried from an
    /// older release stays listed here: the source itself still does not state it.
    pub not_available: Vec<NotAvailable>,
    /// The older release prose facts were carried from, if any (JSON: `carried_from` and
    /// `carried`, absent when nothing was carried).
    #[cfg_attr(feature = "json", serde(flatten, skip_serializing_if = "Option::is_none"))]
    pub carried: Option<Carried>,
}

/// Where a model's carried facts come from (see `crate::carry`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "json", derive(Serialize))]
pub struct Carried {
    /// The release they come from, e.g. `v1.12.0` (its folder's name).
    #[cfg_attr(feature = "json", serde(rename = "carried_from"))]
    pub from: String,
    /// What was carried, sorted: the document-level parts (`general_errors`, `sections`,
    /// `size_limit_table`) whole, and `errors` and `obligations` for the RPCs whose schema is
    /// unchanged, each of which says `carried_from` itself.
    #[cfg_attr(feature = "json", serde(rename = "carried"))]
    pub parts: Vec<NotAvailable>,
    /// The index in `Model::files` of that release's markdown, which carried sections' lines and
    /// error rows' spans point into.
    #[cfg_attr(feature = "json", serde(skip))]
    pub markdown: usize,
}

impl SourceInfo {
    /// A spec folder: everything available.
    pub fn spec() -> SourceInfo {
        SourceInfo { kind: SourceKind::Spec, not_available: Vec::new(), carried: None }
    }

    /// What a source of `kind` cannot state: `missing`, sorted; nothing carried.
    pub fn lacking(
        kind: SourceKind,
        missing: impl IntoIterator<Item = NotAvailable>,
    ) -> SourceInfo {
        let mut not_available: Vec<NotAvailable> = missing.into_iter().collect();
        not_available.sort();
        not_available.dedup();
        SourceInfo { kind, not_available, carried: None }
    }

    /// Whether the source states `what`.
    pub fn states(&self, what: NotAvailable) -> bool {
        !self.not_available.contains(&what)
    }
}
