//! The plain-data model of a CSI spec: what every other crate reads.
//!
//! Every node keeps a [`Span`] so that checks can point at the text the fact came from;
//! spans are not part of the JSON form, which is the stable contract in `DESIGN.md`.

#[cfg(feature = "json")]
use serde::Serialize;

use crate::provenance::{NotAvailable, SourceInfo};

/// A location in one of the input files, kept for diagnostics.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Span {
    /// Index into [`Model::files`].
    pub file: usize,
    /// Byte offset of the start.
    pub offset: usize,
    /// Length in bytes.
    pub len: usize,
}

/// Everything the toolkit knows about one spec release (or one csi-addons spec).
#[derive(Debug, Clone)]
#[cfg_attr(feature = "json", derive(Serialize))]
pub struct Model {
    /// The proto package, e.g. `csi.v1`.
    pub package: String,
    /// Language of the prose facts (`en`, `ja`, ...).
    pub lang: String,
    /// Services in declaration order.
    pub services: Vec<Service>,
    /// Every message, nested ones included, in declaration order; map entries are left out.
    pub messages: Vec<Message>,
    /// Every enum, nested ones included, in declaration order.
    pub enums: Vec<Enum>,
    /// The spec's general error table.
    pub general_errors: Vec<ErrorRow>,
    /// The spec's general size limits.
    pub size_limits: SizeLimits,
    /// Headings of the prose, in document order.
    pub sections: Vec<Section>,
    /// What one capability obliges a plugin to support besides ("The SP MUST also support
    /// PUBLISH_UNPUBLISH_VOLUME" on `LIST_VOLUMES_PUBLISHED_NODES`), as the capability enums'
    /// comments state it, in declaration order.
    pub implications: Vec<Implication>,
    /// What kind of source the model was read from and what that source cannot state.
    pub source: SourceInfo,
    /// The input files spans refer to.
    #[cfg_attr(feature = "json", serde(skip))]
    pub files: Vec<crate::diagnostic::SourceFile>,
}

/// A gRPC service.
#[derive(Debug, Clone)]
#[cfg_attr(feature = "json", derive(Serialize))]
pub struct Service {
    /// Simple name, e.g. `Controller`.
    pub name: String,
    /// Fully qualified name without a leading dot.
    pub full_name: String,
    /// Marked with an `alpha_*` option.
    pub alpha: bool,
    /// Marked with the standard `deprecated = true` option.
    pub deprecated: bool,
    /// The leading comment in the proto.
    pub comment: String,
    /// RPCs in declaration order.
    pub methods: Vec<Method>,
    #[cfg_attr(feature = "json", serde(skip))]
    /// Where it is declared.
    pub span: Span,
}

/// One RPC.
#[derive(Debug, Clone)]
#[cfg_attr(feature = "json", derive(Serialize))]
pub struct Method {
    /// Simple name, e.g. `CreateVolume`.
    pub name: String,
    /// Full name of the request message.
    pub input: String,
    /// Full name of the response message.
    pub output: String,
    /// Marked with an `alpha_*` option.
    pub alpha: bool,
    /// Marked with the standard `deprecated = true` option.
    pub deprecated: bool,
    /// Declared `stream` on the request.
    pub client_streaming: bool,
    /// Declared `stream` on the response.
    pub server_streaming: bool,
    /// The leading comment in the proto.
    pub comment: String,
    /// The RPC's own error table, in the spec's order.
    pub errors: Vec<ErrorRow>,
    /// Anchor of the prose section that documents this RPC, if any.
    pub section: Option<String>,
    /// What the section says a plugin MUST implement ("A Controller Plugin MUST implement this
    /// RPC call [if it has `X` capability]"); where it says nothing, what its service's line in
    /// "RPC Interface" says, or what a capability's comment says ("Indicates the SP supports the
    /// `X` RPC"); `None` where nothing does.
    pub obligation: Option<Obligation>,
    /// The older release `errors`, `section` and `obligation` were carried from, when this
    /// model's source states no prose and the RPC's schema is unchanged since that release
    /// (JSON: absent when not carried). A carried fact is the older release's word: check it
    /// against this release's own spec when that is available.
    #[cfg_attr(feature = "json", serde(skip_serializing_if = "Option::is_none"))]
    pub carried_from: Option<String>,
    #[cfg_attr(feature = "json", serde(skip))]
    /// Where it is declared.
    pub span: Span,
}

/// Who MUST implement an RPC, and when, as its section says.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "json", derive(Serialize))]
pub struct Obligation {
    /// The plugin the sentence names: `Controller`, `Node`, `GroupController`, or `Plugin`
    /// ("A Plugin MUST implement", every plugin).
    pub plugin: String,
    /// The capabilities any one of which obliges it; empty: always.
    pub if_any: Vec<CapabilityRef>,
    /// Stated for the whole service, not in the RPC's section: the "RPC Interface" list says
    /// "The Node Plugin MUST implement this sets of RPCs", and the RPC's own section names no
    /// condition (so `if_any` is empty).
    pub service_wide: bool,
    /// Read from the comment on a capability in the proto ("Indicates the SP supports the
    /// `X` RPC": `X` when the plugin has that capability), not from the prose (JSON: absent
    /// when false). Such a comment names one condition; the prose, where it speaks, may name more
    /// and wins.
    #[cfg_attr(feature = "json", serde(skip_serializing_if = "std::ops::Not::not"))]
    pub from_comment: bool,
}

impl Obligation {
    /// Whether `other` obliges the same plugin under the same conditions, wherever either was
    /// read from.
    pub fn same_rule(&self, other: &Obligation) -> bool {
        self.plugin == other.plugin
            && self.if_any == other.if_any
            && self.service_wide == other.service_wide
    }

    /// [`Obligation::same_rule`] of two RPCs' obligations, either of which may be absent: the
    /// same when both are absent.
    pub fn same_rules(a: Option<&Obligation>, b: Option<&Obligation>) -> bool {
        match (a, b) {
            (Some(a), Some(b)) => a.same_rule(b),
            (a, b) => a.is_none() && b.is_none(),
        }
    }
}

/// A capability that obliges another: a plugin that advertises `capability` MUST also advertise
/// `requires`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "json", derive(Serialize))]
pub struct Implication {
    /// The capability that obliges.
    pub capability: CapabilityRef,
    /// The capability it obliges the plugin to have too.
    pub requires: CapabilityRef,
}

/// A capability of one service, by the value's name in its `*ServiceCapability` enum.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "json", derive(Serialize))]
pub struct CapabilityRef {
    /// `Controller`, `Node` or `GroupController`.
    pub service: String,
    /// The value's name, e.g. `CREATE_DELETE_VOLUME`.
    pub name: String,
}

/// A message type.
#[derive(Debug, Clone)]
#[cfg_attr(feature = "json", derive(Serialize))]
pub struct Message {
    /// Fully qualified name without a leading dot.
    pub full_name: String,
    /// Marked with an `alpha_*` option.
    pub alpha: bool,
    /// Marked with the standard `deprecated = true` option.
    pub deprecated: bool,
    /// The leading comment in the proto.
    pub comment: String,
    /// Fields in declaration order.
    pub fields: Vec<Field>,
    /// Real (not synthetic) oneofs in declaration order.
    pub oneofs: Vec<Oneof>,
    #[cfg_attr(feature = "json", serde(skip))]
    /// Where it is declared.
    pub span: Span,
}

/// A oneof; its requirement sits here, not on its member fields.
#[derive(Debug, Clone)]
#[cfg_attr(feature = "json", derive(Serialize))]
pub struct Oneof {
    /// Name of the oneof.
    pub name: String,
    /// The comment says one of the fields MUST be specified.
    pub required: bool,
    /// The leading comment in the proto.
    pub comment: String,
    #[cfg_attr(feature = "json", serde(skip))]
    /// Where it is declared.
    pub span: Span,
}

pub use csikit_runtime::facts::{Label, Presence, SizeLimit};

/// A field's type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum FieldType {
    /// A scalar, by its proto name: `string`, `bytes`, `bool`, `int64`, ...
    Scalar(String),
    /// A message, by full name without a leading dot.
    Message(String),
    /// An enum, by full name without a leading dot.
    Enum(String),
    /// `map<K, V>`: a scalar key type and the value's type (never itself a map).
    Map {
        /// The key's scalar type.
        key: String,
        /// The value's type.
        value: Box<FieldType>,
    },
}

impl FieldType {
    /// The type of one value: a map's value type, otherwise the type itself.
    pub fn value_type(&self) -> &FieldType {
        match self {
            FieldType::Map { value, .. } => value,
            other => other,
        }
    }

    /// The name of one value's type: a scalar's proto name or a message's or enum's full name
    /// (a map's value's).
    pub fn value_name(&self) -> &str {
        match self.value_type() {
            FieldType::Scalar(n) | FieldType::Message(n) | FieldType::Enum(n) => n,
            // A map's value is never a map (the proto grammar has no nested maps).
            FieldType::Map { key, .. } => key,
        }
    }

    /// Whether this is the scalar `name` (`string`, `bytes`, ...).
    pub fn is_scalar(&self, name: &str) -> bool {
        matches!(self, FieldType::Scalar(s) if s == name)
    }

    /// The full name of the message or enum this names (a map's value's, for a map).
    pub fn full_name(&self) -> Option<&str> {
        match self.value_type() {
            FieldType::Message(n) | FieldType::Enum(n) => Some(n),
            _ => None,
        }
    }

    /// Whether this is `map<string, string>`.
    pub fn is_string_map(&self) -> bool {
        matches!(self, FieldType::Map { key, value } if key == "string" && value.is_scalar("string"))
    }
}

/// As the proto writes it: `string`, `csi.v1.VolumeCapability`, `map<string, string>`.
impl std::fmt::Display for FieldType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FieldType::Scalar(n) | FieldType::Message(n) | FieldType::Enum(n) => f.write_str(n),
            FieldType::Map { key, value } => write!(f, "map<{key}, {value}>"),
        }
    }
}

/// The JSON contract's `type` string (see `Display`).
#[cfg(feature = "json")]
impl Serialize for FieldType {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// A field of a message.
#[derive(Debug, Clone)]
pub struct Field {
    /// Field name.
    pub name: String,
    /// Field number.
    pub number: u32,
    /// Its type (JSON: the proto spelling, e.g. `map<string, string>`).
    pub ty: FieldType,
    /// How it is repeated.
    pub label: Label,
    /// The oneof it belongs to, if any (synthetic proto3 `optional` oneofs are not named).
    pub oneof: Option<String>,
    /// Declared with proto3 `optional`.
    pub proto3_optional: bool,
    /// REQUIRED / OPTIONAL / unspecified.
    pub presence: Presence,
    /// Marked with a `*_secret` option.
    pub secret: bool,
    /// Marked with an `alpha_*` option.
    pub alpha: bool,
    /// Marked with the standard `deprecated = true` option.
    pub deprecated: bool,
    /// The size rule and where it comes from.
    pub size_limit: SizeLimit,
    /// The comment says the value MUST NOT be negative.
    pub non_negative: bool,
    /// The comment bans the spec's control characters (U+0000-U+0008, ...).
    pub no_control_chars: bool,
    /// The comment says the plugin generates the value for the CO to hand back later (an id
    /// "generated by the plugin", a page token, an opaque context; see `comment::plugin_generated`).
    pub plugin_generated: bool,
    /// The leading comment, with the trailing comment appended.
    pub comment: String,
    /// Where it is declared.
    pub span: Span,
}

impl Field {
    /// The largest size the spec allows (strings: per value; maps: keys plus values), derived
    /// from [`Field::size_limit`].
    pub fn max_bytes(&self) -> Option<u32> {
        self.size_limit.max_bytes()
    }
}

/// The JSON contract's keys, in order; `max_bytes` is derived from the size limit.
#[cfg(feature = "json")]
impl Serialize for Field {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct as _;
        let mut s = serializer.serialize_struct("Field", 15)?;
        s.serialize_field("name", &self.name)?;
        s.serialize_field("number", &self.number)?;
        s.serialize_field("type", &self.ty)?;
        s.serialize_field("label", &self.label)?;
        s.serialize_field("oneof", &self.oneof)?;
        s.serialize_field("proto3_optional", &self.proto3_optional)?;
        s.serialize_field("presence", &self.presence)?;
        s.serialize_field("secret", &self.secret)?;
        s.serialize_field("alpha", &self.alpha)?;
        s.serialize_field("deprecated", &self.deprecated)?;
        s.serialize_field("max_bytes", &self.max_bytes())?;
        s.serialize_field("size_limit", &self.size_limit)?;
        s.serialize_field("non_negative", &self.non_negative)?;
        s.serialize_field("no_control_chars", &self.no_control_chars)?;
        s.serialize_field("plugin_generated", &self.plugin_generated)?;
        s.serialize_field("comment", &self.comment)?;
        s.end()
    }
}

/// An enum type.
#[derive(Debug, Clone)]
#[cfg_attr(feature = "json", derive(Serialize))]
pub struct Enum {
    /// Fully qualified name without a leading dot.
    pub full_name: String,
    /// Marked with an `alpha_*` option.
    pub alpha: bool,
    /// Marked with the standard `deprecated = true` option.
    pub deprecated: bool,
    /// The leading comment in the proto.
    pub comment: String,
    /// Values in declaration order.
    pub values: Vec<EnumValue>,
    #[cfg_attr(feature = "json", serde(skip))]
    /// Where it is declared.
    pub span: Span,
}

/// A value of an enum.
#[derive(Debug, Clone)]
#[cfg_attr(feature = "json", derive(Serialize))]
pub struct EnumValue {
    /// Value name.
    pub name: String,
    /// Value number.
    pub number: i32,
    /// Marked with an `alpha_*` option.
    pub alpha: bool,
    /// Marked with the standard `deprecated = true` option.
    pub deprecated: bool,
    /// The leading comment in the proto.
    pub comment: String,
}

/// One row of an error table.
#[derive(Debug, Clone)]
#[cfg_attr(feature = "json", derive(Serialize))]
pub struct ErrorRow {
    /// The condition, as the spec words it.
    pub condition: String,
    /// The gRPC code name as the spec writes it.
    pub code: String,
    /// The gRPC code number as the spec writes it.
    pub code_number: i32,
    /// What the error indicates.
    pub description: String,
    /// What the caller should do (empty where the table has no such column).
    pub recovery: String,
    /// Language of the prose in this row.
    pub lang: String,
    #[cfg_attr(feature = "json", serde(skip))]
    /// Where the row is.
    pub span: Span,
}

/// The spec's general size limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "json", derive(Serialize))]
pub struct SizeLimits {
    /// Bytes per string value.
    pub string: u32,
    /// Bytes per map (keys plus values).
    pub map: u32,
}

/// A heading of the prose.
#[derive(Debug, Clone)]
#[cfg_attr(feature = "json", derive(Serialize))]
pub struct Section {
    /// Heading level, 1 to 6.
    pub level: u8,
    /// The heading's text, markup removed.
    pub title: String,
    /// GitHub-style anchor, unique in the document.
    pub anchor: String,
    /// 1-based line of the heading.
    pub line: u32,
}

impl Model {
    /// Looks up a message by full name.
    pub fn message(&self, full_name: &str) -> Option<&Message> {
        self.messages.iter().find(|m| m.full_name == full_name)
    }

    /// Looks up an enum by full name.
    pub fn enum_type(&self, full_name: &str) -> Option<&Enum> {
        self.enums.iter().find(|e| e.full_name == full_name)
    }

    /// A full name relative to the model's package (`csi.v1.Volume` → `Volume`), so elements
    /// compare across a package rename; a name of another package is returned whole.
    pub fn relative<'n>(&self, full: &'n str) -> &'n str {
        full.strip_prefix(self.package.as_str()).and_then(|r| r.strip_prefix('.')).unwrap_or(full)
    }

    /// Whether the model states `method`'s error table: its source states error tables, or the
    /// table was carried from an older release (`Method::carried_from`). Where it does not, an
    /// empty `errors` means "unknown", not "none".
    pub fn states_errors(&self, method: &Method) -> bool {
        self.source.states(NotAvailable::Errors) || method.carried_from.is_some()
    }

    /// Whether the model states what the prose obliges of `method`: its source states
    /// obligations, or they were carried. An obligation read from a capability's comment alone
    /// (`from_comment` in a model without prose) is the proto's word, not the prose's.
    pub fn states_obligation(&self, method: &Method) -> bool {
        self.source.states(NotAvailable::Obligations) || method.carried_from.is_some()
    }

    /// Looks up an RPC by simple name across all services.
    pub fn method(&self, name: &str) -> Option<(&Service, &Method)> {
        self.services.iter().find_map(|s| s.methods.iter().find(|m| m.name == name).map(|m| (s, m)))
    }

    /// The model as pretty JSON with the keys in `DESIGN.md`.
    #[cfg(feature = "json")]
    pub fn to_json(&self) -> String {
        // Serialising plain data with string keys cannot fail.
        let mut out = serde_json::to_string_pretty(self).unwrap_or_default();
        out.push('\n');
        out
    }
}
