//! The `#[csi_validate]` attributes that put the spec's rules on generated types.
//!
//! Each rule comes from a fact in the [`Model`]; rules the wire cannot carry are left out:
//! a REQUIRED bool or number other than an enum is indistinguishable from its zero value in
//! proto3, so it gets no `required`.

use csikit_spec::{Field, FieldType, Label, Model, Presence, SizeLimit};

/// Attributes to apply through prost-build, keyed by proto path (leading dot).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ValidationAttributes {
    /// `(path, attribute)` for messages: prost-build matches sub-paths, so the package's path
    /// reaches every message in it, nested ones included.
    pub messages: Vec<(String, String)>,
    /// `(path, attribute)` for oneof enums, each by its exact path.
    pub oneofs: Vec<(String, String)>,
    /// `(path, attribute)` for fields, oneof fields and oneof variants: `#[csi(...)]`.
    pub fields: Vec<(String, String)>,
}

fn is_signed(ty: &str) -> bool {
    matches!(
        ty,
        "int32" | "int64" | "sint32" | "sint64" | "sfixed32" | "sfixed64" | "double" | "float"
    )
}

/// The rules the validator of one field checks, from its facts: what `#[csi(...)]` says, and
/// what the server traits' docs list as checked before a driver's method runs.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct FieldRules {
    /// Set (a string or bytes not empty, a message present, an enum not zero, at least one
    /// element). A REQUIRED field the wire cannot tell from its zero value (a bool, a number)
    /// and a oneof member (the oneof carries the requirement) do not get it.
    pub required: bool,
    /// A string's largest size in bytes.
    pub max_bytes: Option<u32>,
    /// A map's (keys plus values) or a repeated field's (all values) largest size in bytes.
    pub max_total_bytes: Option<u32>,
    /// A signed number that MUST NOT be negative.
    pub non_negative: bool,
    /// A string without the spec's control characters.
    pub no_control_chars: bool,
    /// A secret map whose keys follow the spec's key rule.
    pub secret_keys: bool,
    /// The message type whose own rules apply to the field's values (it implements `Validate`).
    pub nested: Option<String>,
}

impl FieldRules {
    /// The rules as `#[csi(...)]` words.
    fn attribute_rules(&self) -> Vec<String> {
        let mut rules: Vec<String> = Vec::new();
        if self.required {
            rules.push("required".into());
        }
        if let Some(bytes) = self.max_bytes {
            rules.push(format!("max_bytes = {bytes}"));
        }
        if let Some(bytes) = self.max_total_bytes {
            rules.push(format!("max_total_bytes = {bytes}"));
        }
        if self.non_negative {
            rules.push("non_negative".into());
        }
        if self.no_control_chars {
            rules.push("no_control_chars".into());
        }
        if self.secret_keys {
            rules.push("secret_keys".into());
        }
        if self.nested.is_some() {
            rules.push("nested".into());
        }
        rules
    }
}

/// The rules of one field. `validated` names the message types that implement `Validate`.
pub fn field_rules(f: &Field, validated: &dyn Fn(&str) -> bool) -> FieldRules {
    let mut rules = FieldRules::default();
    let is_message = matches!(f.ty, FieldType::Message(_));
    let map_value = match &f.ty {
        FieldType::Map { value, .. } => Some(value.value_name()),
        _ => None,
    };
    if f.presence == Presence::Required && f.oneof.is_none() {
        rules.required = f.label != Label::Singular
            || f.ty.is_scalar("string")
            || f.ty.is_scalar("bytes")
            || is_message
            || matches!(f.ty, FieldType::Enum(_));
    }
    match (f.size_limit, f.label) {
        (SizeLimit::General { bytes } | SizeLimit::Max { bytes }, Label::Map) => {
            rules.max_total_bytes = Some(bytes);
        }
        (SizeLimit::General { bytes } | SizeLimit::Max { bytes }, _)
            if f.ty.is_scalar("string") =>
        {
            rules.max_bytes = Some(bytes);
        }
        (SizeLimit::MaxTotal { bytes }, Label::Repeated | Label::Map) => {
            rules.max_total_bytes = Some(bytes);
        }
        _ => {}
    }
    rules.non_negative = f.non_negative && is_signed(f.ty.value_name());
    rules.no_control_chars = f.no_control_chars && f.ty.is_scalar("string");
    rules.secret_keys = f.secret && f.label == Label::Map;
    let nested_type = if f.label == Label::Map {
        map_value
    } else if is_message {
        Some(f.ty.value_name())
    } else {
        None
    };
    rules.nested = nested_type.filter(|t| validated(t)).map(str::to_owned);
    rules
}

/// The rules of every message of `model`. `validated` names the message types, in this model
/// or another (the CSI types an addon uses), that implement `Validate`.
pub fn validation_attributes(
    model: &Model,
    validated: &dyn Fn(&str) -> bool,
) -> ValidationAttributes {
    let mut out = ValidationAttributes::default();
    out.messages.push((format!(".{}", model.package), "#[::csikit::csi_validate]".to_owned()));
    for m in &model.messages {
        for o in &m.oneofs {
            let path = format!(".{}.{}", m.full_name, o.name);
            out.oneofs.push((path.clone(), "#[::csikit::csi_validate]".to_owned()));
            // `csi_oneof`, not `csi(oneof)`: prost-build copies the oneof field's attributes onto
            // its variants, and the macro ignores `csi_oneof` there.
            let attr = if o.required { "#[csi_oneof(required)]" } else { "#[csi_oneof]" };
            out.fields.push((path, attr.to_owned()));
        }
        for f in &m.fields {
            let rules = field_rules(f, validated).attribute_rules();
            if !rules.is_empty() {
                // prost-build names a oneof variant's path after the oneof.
                let path = match &f.oneof {
                    Some(o) => format!(".{}.{o}.{}", m.full_name, f.name),
                    None => format!(".{}.{}", m.full_name, f.name),
                };
                out.fields.push((path, format!("#[csi({})]", rules.join(", "))));
            }
        }
    }
    out
}

/// `csikit::validate_encoded`: decodes bytes as the named message of any package and validates it.
pub fn validate_encoded_rs(packages: &[crate::Package<'_>]) -> String {
    use std::fmt::Write as _;
    let mut out = String::from(
        "//! Validation of encoded messages by type name, for tools that hold bytes, not types.\n\n\
         use crate::validate::ValidateEncodedError;\n\n\
         fn check<M: prost::Message + Default + crate::Validate>(bytes: &[u8]) -> Result<(), ValidateEncodedError> {\n    \
         M::decode(bytes).map_err(ValidateEncodedError::Decode)?.validate().map_err(ValidateEncodedError::Invalid)\n}\n\n\
         /// Decodes `bytes` as the message `full_name` (e.g. `csi.v1.CreateVolumeRequest`) and runs the\n\
         /// spec's rules on it.\n///\n/// # Errors\n///\n\
         /// An unknown type name, bytes that do not decode as that type, or the violations found.\n\
         pub fn validate_encoded(full_name: &str, bytes: &[u8]) -> Result<(), ValidateEncodedError> {\n    \
         match full_name {\n",
    );
    // A release kept behind a feature shares the current one's names: dispatch is the current's.
    for p in packages.iter().filter(|p| p.feature.is_none()) {
        for m in &p.model.messages {
            let Some(rel) = crate::names::relative_type_path(&p.model.package, &m.full_name) else {
                continue;
            };
            let _ = writeln!(
                out,
                "        {:?} => check::<crate::{}::{rel}>(bytes),",
                m.full_name, p.module
            );
        }
    }
    out.push_str(
        "        _ => Err(ValidateEncodedError::UnknownType(full_name.to_owned())),\n    }\n}\n",
    );
    out
}

/// Whether values of `ty` (a full message name) implement `Validate` in the generated crate:
/// messages of this package, and of packages reached through extern paths.
pub fn is_validated(ty: &str, model: &Model, extern_paths: &[(String, String)]) -> bool {
    model.message(ty).is_some()
        || extern_paths.iter().any(|(proto, _)| format!(".{ty}").starts_with(&format!("{proto}.")))
}
