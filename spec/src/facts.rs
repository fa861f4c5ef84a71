//! The Model's facts in the one facts family (`csikit_runtime::facts`): what generated tables
//! print, what the viewer and the proxy read for a spec loaded at run time, and where an RPC's
//! serialisation key is derived.

use std::borrow::Cow;

pub use csikit_runtime::facts::*;

use crate::model::{Method, Model};

impl Model {
    /// Every fact of the model as a facts table; `release` names the input it was read from.
    ///
    /// The generated `facts::FACTS` tables are this, printed; so a spec read at run time and a
    /// generated table compare equal field by field.
    pub fn facts(&self, release: &str) -> PackageFacts {
        let messages = self
            .messages
            .iter()
            .map(|m| MessageFacts {
                full_name: Cow::Owned(m.full_name.clone()),
                alpha: m.alpha,
                fields: m
                    .fields
                    .iter()
                    .map(|f| FieldFacts {
                        name: Cow::Owned(f.name.clone()),
                        number: f.number,
                        type_name: Cow::Owned(f.ty.to_string()),
                        label: f.label,
                        oneof: f.oneof.clone().map(Cow::Owned),
                        presence: f.presence,
                        secret: f.secret,
                        alpha: f.alpha,
                        size_limit: f.size_limit,
                        non_negative: f.non_negative,
                        no_control_chars: f.no_control_chars,
                        plugin_generated: f.plugin_generated,
                    })
                    .collect(),
                oneofs: m
                    .oneofs
                    .iter()
                    .map(|o| OneofFacts { name: Cow::Owned(o.name.clone()), required: o.required })
                    .collect(),
            })
            .collect();
        let methods = self
            .services
            .iter()
            .flat_map(|s| s.methods.iter().map(move |m| (s, m)))
            .map(|(s, m)| MethodFacts {
                service: Cow::Owned(s.full_name.clone()),
                name: Cow::Owned(m.name.clone()),
                path: Cow::Owned(format!("/{}/{}", s.full_name, m.name)),
                input: Cow::Owned(m.input.clone()),
                output: Cow::Owned(m.output.clone()),
                alpha: m.alpha || s.alpha,
                key: self.serialisation_key(m),
            })
            .collect();
        PackageFacts {
            package: Cow::Owned(self.package.clone()),
            release: Cow::Owned(release.to_owned()),
            messages,
            methods,
        }
    }

    /// The id calls of `method` are serialised on: `Create*` RPCs are keyed by the `name` of
    /// what they create; others by their request's first REQUIRED top-level `*_id` string other
    /// than `node_id` (which names the node, not an object two calls could race on). Streaming
    /// RPCs only read and have none. The one place this is decided: the server skeleton's
    /// generated `rpc` records and the proxy's overlap check both read it from the facts.
    pub fn serialisation_key(&self, method: &Method) -> Option<KeyFacts> {
        if method.server_streaming || method.client_streaming {
            return None;
        }
        let input = self.message(&method.input)?;
        let top_level_string = |f: &&crate::model::Field| {
            f.ty.is_scalar("string") && f.label == Label::Singular && f.oneof.is_none()
        };
        let name = input.fields.iter().find(|f| f.name == "name");
        let (kind, field) = match (method.name.strip_prefix("Create"), name) {
            (Some(object), Some(f)) if top_level_string(&f) => {
                (format!("{} name", words(object)), f)
            }
            _ => {
                let f = input.fields.iter().filter(top_level_string).find(|f| {
                    f.presence == Presence::Required
                        && f.name.ends_with("_id")
                        && f.name != "node_id"
                })?;
                (f.name.trim_end_matches("_id").replace('_', " "), f)
            }
        };
        Some(KeyFacts {
            kind: Cow::Owned(kind),
            field: Cow::Owned(field.name.clone()),
            number: field.number,
        })
    }
}

/// `VolumeGroupSnapshot` as `volume group snapshot`.
fn words(camel_name: &str) -> String {
    let mut out = String::new();
    for (i, c) in camel_name.char_indices() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push(' ');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn words_split_at_capitals() {
        assert_eq!(super::words("VolumeGroupSnapshot"), "volume group snapshot");
        assert_eq!(super::words("Volume"), "volume");
    }
}
