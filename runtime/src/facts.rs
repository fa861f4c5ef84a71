//! The shapes of the spec-facts tables (`csikit::v1::facts::FACTS`, one per package): what the
//! spec states about every field and RPC, as data for validators, viewers and linters.

/// What the spec says about whether a field must be set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Presence {
    /// The comment says REQUIRED.
    Required,
    /// The comment says OPTIONAL.
    Optional,
    /// The comment says neither.
    Unspecified,
}

/// How a field is repeated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
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
    /// The comment caps the total size of a repeated field.
    MaxTotal {
        /// The limit.
        bytes: u32,
    },
    /// No maximum; receivers must accept at least this many bytes.
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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldFacts {
    /// Field name as in the proto.
    pub name: &'static str,
    /// Field number.
    pub number: u32,
    /// Scalar type, full message or enum name, or `map<K, V>`.
    pub type_name: &'static str,
    /// How it is repeated.
    pub label: Label,
    /// The (real) oneof it belongs to.
    pub oneof: Option<&'static str>,
    /// REQUIRED, OPTIONAL or not stated.
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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OneofFacts {
    /// Name of the oneof.
    pub name: &'static str,
    /// One of its fields MUST be set.
    pub required: bool,
}

/// The facts of one message type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageFacts {
    /// Full proto name without a leading dot.
    pub full_name: &'static str,
    /// Marked `alpha_message`.
    pub alpha: bool,
    /// Fields in declaration order.
    pub fields: &'static [FieldFacts],
    /// Real oneofs in declaration order.
    pub oneofs: &'static [OneofFacts],
}

impl MessageFacts {
    /// A field by proto name.
    pub fn field(&self, name: &str) -> Option<&'static FieldFacts> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// A field by number.
    pub fn field_by_number(&self, number: u32) -> Option<&'static FieldFacts> {
        self.fields.iter().find(|f| f.number == number)
    }
}

/// The facts of one RPC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MethodFacts {
    /// Full name of the service.
    pub service: &'static str,
    /// RPC name.
    pub name: &'static str,
    /// The gRPC path, `/csi.v1.Controller/CreateVolume`.
    pub path: &'static str,
    /// Full name of the request message.
    pub input: &'static str,
    /// Full name of the response message.
    pub output: &'static str,
    /// The RPC or its service is marked alpha.
    pub alpha: bool,
}

/// Everything one spec states, per message and per RPC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PackageFacts {
    /// The proto package, `csi.v1`.
    pub package: &'static str,
    /// The input it was generated from.
    pub release: &'static str,
    /// Every message, nested ones included, map entries left out.
    pub messages: &'static [MessageFacts],
    /// Every RPC.
    pub methods: &'static [MethodFacts],
}

impl PackageFacts {
    /// A message by full name (no leading dot).
    ///
    /// ```
    /// let m = csikit::v1::facts::FACTS.message("csi.v1.CreateVolumeRequest").unwrap();
    /// assert!(m.field("secrets").unwrap().secret);
    /// ```
    pub fn message(&self, full_name: &str) -> Option<&'static MessageFacts> {
        self.messages.iter().find(|m| m.full_name == full_name)
    }

    /// An RPC by gRPC path, `/csi.v1.Controller/CreateVolume`.
    pub fn method_by_path(&self, path: &str) -> Option<&'static MethodFacts> {
        self.methods.iter().find(|m| m.path == path)
    }
}
