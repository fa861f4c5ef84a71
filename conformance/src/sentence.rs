//! The spec sentence a case checks: where it stands, what it says, whom it binds and how strongly.
//! A case fails a plugin only for a sentence that binds the plugin with MUST (an error table's row
//! is one: "the plugin MUST return the specified gRPC error code"); a sentence that binds the
//! sender of a message, or a SHOULD or MAY, gives a note instead.

use std::fmt;

/// Whom a sentence binds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Binds {
    /// The plugin, as the one that answers (or as the sender of its responses).
    Plugin,
    /// Whoever sends the message: for a request, the CO (here the suite). A plugin that accepts
    /// such a request breaks nothing.
    Sender,
}

/// How strongly, in RFC 2119's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// MUST, SHALL, REQUIRED and their negations.
    Must,
    /// SHOULD, RECOMMENDED and their negations.
    Should,
    /// MAY, OPTIONAL.
    May,
}

/// One sentence of the spec, quoted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sentence {
    /// The section it stands in, e.g. `CreateVolume` or `CreateVolume Errors`.
    pub section: &'static str,
    /// The sentence (or the error table's row), as the spec words it.
    pub text: &'static str,
    /// Whom it binds.
    pub binds: Binds,
    /// How strongly.
    pub level: Level,
    /// The error table's row the sentence applies, as the Model holds it (the cases built from
    /// the error tables); `text` is then the table's preface.
    pub row: Option<&'static csikit::errors::ErrorInfo>,
}

/// The sentence every RPC's error table opens with, which makes each row a plugin's MUST.
pub const ROW_PREFACE: &str = "If the conditions defined below are encountered, the plugin MUST return the specified gRPC error code.";

impl Sentence {
    /// A sentence that binds the plugin with MUST.
    pub const fn must(section: &'static str, text: &'static str) -> Sentence {
        Sentence { section, text, binds: Binds::Plugin, level: Level::Must, row: None }
    }

    /// A row of `section`'s error table (`section` is the RPC), from the Model: the table's
    /// preface binds the plugin with MUST.
    pub const fn row(section: &'static str, row: &'static csikit::errors::ErrorInfo) -> Sentence {
        Sentence {
            section,
            text: ROW_PREFACE,
            binds: Binds::Plugin,
            level: Level::Must,
            row: Some(row),
        }
    }

    /// A sentence that binds the plugin with SHOULD.
    pub const fn should(section: &'static str, text: &'static str) -> Sentence {
        Sentence { section, text, binds: Binds::Plugin, level: Level::Should, row: None }
    }

    /// A sentence that binds the sender of a message with MUST (a limit on what it generates).
    pub const fn sender(section: &'static str, text: &'static str) -> Sentence {
        Sentence { section, text, binds: Binds::Sender, level: Level::Must, row: None }
    }

    /// True when breaking it fails the plugin: a plugin's MUST.
    pub fn fails_plugin(&self) -> bool {
        self.binds == Binds::Plugin && self.level == Level::Must
    }
}

impl fmt::Display for Binds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Binds::Plugin => "plugin",
            Binds::Sender => "sender",
        })
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Level::Must => "MUST",
            Level::Should => "SHOULD",
            Level::May => "MAY",
        })
    }
}

impl fmt::Display for Sentence {
    /// `§CreateVolume (plugin, MUST): "This operation MUST be idempotent."`; a row is
    /// `§CreateVolume Errors (plugin, MUST): "<preface>" row: Source does not exist | 5 NOT_FOUND | ...`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let table = if self.row.is_some() { " Errors" } else { "" };
        write!(f, "§{}{table} ({}, {}): \"{}\"", self.section, self.binds, self.level, self.text)?;
        if let Some(row) = self.row {
            write!(f, " row: {} | {} | {}", row.condition, row.code_as_written, row.description)?;
        }
        Ok(())
    }
}

/// The general sentences the generated cases check.
pub mod general {
    // Rows of one shape (a duplicate the tree's scan lists on purpose): each constant is a row
    // of the table of spec sentences, data rather than code.
    use super::Sentence;

    /// The general error table's first row.
    pub const MISSING_REQUIRED: Sentence = Sentence::must(
        "Error Scheme",
        "Missing required field | 3 INVALID_ARGUMENT | Indicates that a required field is missing from the request.",
    );
    /// Size limits bind whoever generates a message.
    pub const SIZE_LIMITS: Sentence = Sentence::sender(
        "Size Limits",
        "Unless otherwise specified, fields SHALL NOT exceed the limits documented here. These limits apply for messages generated by both COs and plugins.",
    );
    /// The secret key charset binds whoever makes the secrets.
    pub const SECRET_KEYS: Sentence = Sentence::sender(
        "Secrets Requirements",
        "Each key MUST consist of alphanumeric characters, '-', '_' or '.'.",
    );
    /// Banned characters in names bind the sender: "Any Unicode string ... is allowed except".
    pub const CONTROL_CHARS: Sentence = Sentence::sender(
        "CreateVolume",
        "Any Unicode string that conforms to the length limit is allowed except those containing the following banned characters: U+0000-U+0008, U+000B, U+000C, U+000E-U+001F, U+007F-U+009F.",
    );
    /// An RPC the plugin is obliged to implement.
    pub const OBLIGED: Sentence = Sentence::must(
        "Controller Service RPC / Node Service RPC",
        "A Controller Plugin MUST implement this RPC call if it has <capability> controller capability.",
    );
    /// A response's REQUIRED field unset.
    pub const REQUIRED: Sentence = Sentence::must(
        "REQUIRED vs. OPTIONAL",
        "A field noted as `REQUIRED` MUST be specified, subject to any per-RPC caveats; caveats SHOULD be rare.",
    );
    /// A response over a size limit: the plugin generated it, so the limit binds the plugin.
    pub const RESPONSE_SIZE: Sentence = Sentence::must(
        "Size Limits",
        "Unless otherwise specified, fields SHALL NOT exceed the limits documented here. / These limits apply for messages generated by both COs and plugins.",
    );
    /// A negative number where the field's comment forbids one.
    pub const NON_NEGATIVE: Sentence =
        Sentence::must("the field's comment", "The value of this field MUST NOT be negative.");
    /// A response's secret key outside the charset (the plugin generated it).
    pub const RESPONSE_SECRET_KEYS: Sentence = Sentence::must(
        "Secrets Requirements",
        "Each key MUST consist of alphanumeric characters, '-', '_' or '.'.",
    );
    /// A response's name with a banned character (the plugin generated it).
    pub const RESPONSE_CONTROL_CHARS: Sentence = Sentence::must(
        "CreateVolume",
        "Any Unicode string that conforms to the length limit is allowed except those containing the following banned characters: U+0000-U+0008, U+000B, U+000C, U+000E-U+001F, U+007F-U+009F.",
    );
    /// An answer that is not the RPC's response message at all.
    pub const RESPONSE_DECODES: Sentence = Sentence::must(
        "Error Scheme",
        "All CSI API calls defined in this spec MUST return a standard gRPC status.",
    );
    /// An enum value the spec does not declare: csi.proto lists the values, but no sentence
    /// says MUST of it, so it is a note.
    pub const DECLARED_ENUM: Sentence = Sentence::should(
        "csi.proto",
        "(an enum field holds one of the values its enum declares; no sentence states this with MUST)",
    );
    /// Secrets in anything the plugin says back, or in its log: the `csi_secret` option binds
    /// whoever holds the field (the CO's own sentence in Secrets Requirements ends "by the CO").
    pub const SECRETS: Sentence = Sentence::must(
        "csi_secret",
        "Indicates that a field MAY contain information that is sensitive and MUST be treated as such (e.g. not logged).",
    );
    /// Clean-up: the suite's own bookkeeping, checked through the plugin's idempotent deletes.
    pub const DELETE_IDEMPOTENT: Sentence = Sentence::must(
        "DeleteVolume",
        "If a volume corresponding to the specified `volume_id` does not exist or the artifacts associated with the volume do not exist anymore, the Plugin MUST reply `0 OK`.",
    );
    /// ListVolumes lists what the plugin knows.
    pub const LIST_ALL: Sentence = Sentence::must(
        "ListVolumes",
        "The Plugin SHALL return the information about all the volumes that it knows about.",
    );
}
