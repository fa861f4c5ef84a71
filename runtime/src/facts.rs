//! The one family of spec-facts types: what a spec states about every field and RPC, as data for
//! validators, viewers, linters and the server skeleton.
//!
//! The same types hold a generated table (`csikit::v1::facts::FACTS`, `'static` data borrowed
//! from the binary) and the facts of a spec read at run time (`csikit_spec::Model::facts`, owned):
//! text and lists are [`Cow`]s. The spec crate's `Model` uses [`Presence`], [`Label`] and
//! [`SizeLimit`] from here, so a fact has one spelling everywhere.

use std::borrow::Cow;

/// Text in a facts table: borrowed by a generated table, owned when read at run time.
pub type Text = Cow<'static, str>;

/// What the spec says about whether a field must be set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize), serde(rename_all = "lowercase"))]
pub enum Presence {
    /// The comment says REQUIRED.
    Required,
    /// The comment says OPTIONAL.
    Optional,
    /// The comment says neither.
    Unspecified,
    /// The source has no comments to say it (a descriptor set without source info), or no
    /// facts are known for the field at all.
    Unknown,
}

impl Presence {
    /// The word the spec uses, `REQUIRED` / `OPTIONAL`, or `None` when it states none.
    pub const fn word(self) -> Option<&'static str> {
        match self {
            Presence::Required => Some("REQUIRED"),
            Presence::Optional => Some("OPTIONAL"),
            Presence::Unspecified | Presence::Unknown => None,
        }
    }
}

/// How a field is repeated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize), serde(rename_all = "lowercase"))]
pub enum Label {
    /// One value.
    Singular,
    /// `repeated`.
    Repeated,
    /// `map<K, V>`.
    Map,
}

/// A field's size rule, as the spec states it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize),
    serde(tag = "kind", rename_all = "snake_case")
)]
pub enum SizeLimit {
    /// No size rule applies (numbers, enums, messages, bytes).
    None,
    /// The general limit for the field's type (128 bytes per string, 4 KiB per map).
    General {
        /// The limit.
        bytes: u32,
    },
    /// The comment overrides the general limit with another maximum.
    Max {
        /// The limit.
        bytes: u32,
    },
    /// The comment caps the total size of a repeated field (all values together).
    MaxTotal {
        /// The limit.
        bytes: u32,
    },
    /// The comment lifts the general limit: receivers must accept at least this many bytes and
    /// no maximum is set.
    AtLeast {
        /// The minimum a receiver must accept.
        bytes: u32,
    },
}

impl SizeLimit {
    /// The largest size the spec allows, if it sets one.
    pub const fn max_bytes(self) -> Option<u32> {
        match self {
            SizeLimit::General { bytes }
            | SizeLimit::Max { bytes }
            | SizeLimit::MaxTotal { bytes } => Some(bytes),
            SizeLimit::None | SizeLimit::AtLeast { .. } => None,
        }
    }
}

/// The facts of one field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldFacts {
    /// Field name as in the proto.
    pub name: Text,
    /// Field number.
    pub number: u32,
    /// Scalar type, full message or enum name, or `map<K, V>`.
    pub type_name: Text,
    /// How it is repeated.
    pub label: Label,
    /// The (real) oneof it belongs to.
    pub oneof: Option<Text>,
    /// REQUIRED, OPTIONAL, not stated, or not knowable from the source.
    pub presence: Presence,
    /// Marked `csi_secret`: never log the value.
    pub secret: bool,
    /// Marked `alpha_field`.
    pub alpha: bool,
    /// The size rule.
    pub size_limit: SizeLimit,
    /// The comment says the value MUST NOT be negative.
    pub non_negative: bool,
    /// The comment bans control characters.
    pub no_control_chars: bool,
}

/// A oneof and whether one of its fields is REQUIRED.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OneofFacts {
    /// Name of the oneof.
    pub name: Text,
    /// One of its fields MUST be set.
    pub required: bool,
}

/// The facts of one message type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageFacts {
    /// Full proto name without a leading dot.
    pub full_name: Text,
    /// Marked `alpha_message`.
    pub alpha: bool,
    /// Fields in declaration order.
    pub fields: Cow<'static, [FieldFacts]>,
    /// Real oneofs in declaration order.
    pub oneofs: Cow<'static, [OneofFacts]>,
}

impl MessageFacts {
    /// A field by proto name.
    pub fn field(&self, name: &str) -> Option<&FieldFacts> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// A field by number.
    pub fn field_by_number(&self, number: u32) -> Option<&FieldFacts> {
        self.fields.iter().find(|f| f.number == number)
    }
}

/// The id a call works on, by which calls on the same object are serialised: `name` for the
/// `Create*` RPCs, else the request's first REQUIRED top-level `*_id` string other than
/// `node_id`. Streaming RPCs have none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyFacts {
    /// What the id names, for messages: `volume`, `volume name`, `snapshot`, `group snapshot`.
    pub kind: Text,
    /// The request field holding it, e.g. `volume_id`.
    pub field: Text,
    /// That field's number, for readers of the wire form.
    pub number: u32,
}

/// The facts of one RPC.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MethodFacts {
    /// Full name of the service.
    pub service: Text,
    /// RPC name.
    pub name: Text,
    /// The gRPC path, `/csi.v1.Controller/CreateVolume`.
    pub path: Text,
    /// Full name of the request message.
    pub input: Text,
    /// Full name of the response message.
    pub output: Text,
    /// The RPC or its service is marked alpha.
    pub alpha: bool,
    /// The id calls are serialised on, if the request names one.
    pub key: Option<KeyFacts>,
}

/// Everything one spec states, per message and per RPC.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageFacts {
    /// The proto package, `csi.v1`.
    pub package: Text,
    /// The input it was read from.
    pub release: Text,
    /// Every message, nested ones included, map entries left out.
    pub messages: Cow<'static, [MessageFacts]>,
    /// Every RPC.
    pub methods: Cow<'static, [MethodFacts]>,
}

impl PackageFacts {
    /// A message by full name (no leading dot).
    ///
    /// ```
    /// let m = csikit::v1::facts::FACTS.message("csi.v1.CreateVolumeRequest").unwrap();
    /// assert!(m.field("secrets").unwrap().secret);
    /// ```
    pub fn message(&self, full_name: &str) -> Option<&MessageFacts> {
        self.messages.iter().find(|m| m.full_name == full_name)
    }

    /// An RPC by gRPC path, `/csi.v1.Controller/CreateVolume`.
    ///
    /// ```
    /// let m = csikit::v1::facts::FACTS.method_by_path("/csi.v1.Node/NodePublishVolume").unwrap();
    /// assert_eq!(m.key.as_ref().map(|k| &*k.field), Some("volume_id"));
    /// ```
    pub fn method_by_path(&self, path: &str) -> Option<&MethodFacts> {
        self.methods.iter().find(|m| m.path == path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static TABLE: PackageFacts = PackageFacts {
        package: Cow::Borrowed("p"),
        release: Cow::Borrowed("test"),
        messages: Cow::Borrowed(&[MessageFacts {
            full_name: Cow::Borrowed("p.M"),
            alpha: false,
            fields: Cow::Borrowed(&[FieldFacts {
                name: Cow::Borrowed("volume_id"),
                number: 1,
                type_name: Cow::Borrowed("string"),
                label: Label::Singular,
                oneof: None,
                presence: Presence::Required,
                secret: false,
                alpha: false,
                size_limit: SizeLimit::General { bytes: 128 },
                non_negative: false,
                no_control_chars: false,
            }]),
            oneofs: Cow::Borrowed(&[]),
        }]),
        methods: Cow::Borrowed(&[]),
    };

    #[test]
    fn a_table_read_at_run_time_equals_the_static_one() {
        let mut owned = TABLE.clone();
        owned.messages.to_mut()[0].fields.to_mut()[0].name = Cow::Owned("volume_id".to_owned());
        assert!(matches!(owned.messages, Cow::Owned(_)));
        assert_eq!(owned, TABLE);
        assert_eq!(
            owned.message("p.M").and_then(|m| m.field_by_number(1)).map(|f| f.number),
            Some(1)
        );
        assert_eq!(TABLE.message("p.M").and_then(|m| m.field("nope")), None);
    }

    #[test]
    fn only_required_and_optional_have_a_word() {
        assert_eq!(Presence::Required.word(), Some("REQUIRED"));
        assert_eq!(Presence::Optional.word(), Some("OPTIONAL"));
        assert_eq!(Presence::Unspecified.word(), None);
        assert_eq!(Presence::Unknown.word(), None);
    }
}
