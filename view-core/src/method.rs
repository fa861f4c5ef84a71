//! Naming an RPC as a person types it: `CreateVolume`, `Controller/CreateVolume`,
//! `csi.v1.Controller/CreateVolume` (also with a leading `/`, or `.` before the method as grpcurl
//! writes it), resolved against the schema, so any source (built in, `--spec-dir`, `--proto`,
//! `--descriptor-set`) works. A short name two packages share is refused naming both; a near miss
//! gets a "did you mean".

use std::fmt;

use prost_reflect::MethodDescriptor;

use crate::schema::Schema;

/// Why a method name was not resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MethodError {
    /// No RPC has that name; the nearest names, best first (maybe none).
    Unknown {
        /// The name as given.
        name: String,
        /// Near names, as `Service/Method` (or full where the short form is ambiguous).
        suggestions: Vec<String>,
    },
    /// Several RPCs have that name.
    Ambiguous {
        /// The name as given.
        name: String,
        /// Their full names, `csi.v1.Controller/CreateVolume`.
        candidates: Vec<String>,
    },
}

impl fmt::Display for MethodError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MethodError::Unknown { name, suggestions } => {
                write!(f, "unknown method '{name}'")?;
                match suggestions.as_slice() {
                    [] => Ok(()),
                    [one] => write!(f, "; did you mean '{one}'?"),
                    many => write!(f, "; did you mean one of '{}'?", many.join("', '")),
                }
            }
            MethodError::Ambiguous { name, candidates } => write!(
                f,
                "method '{name}' is ambiguous: {}; name it with its service or package",
                candidates.join(", ")
            ),
        }
    }
}

impl std::error::Error for MethodError {}

/// The gRPC path of a method, `/csi.v1.Controller/CreateVolume`.
pub fn path(method: &MethodDescriptor) -> String {
    format!("/{}/{}", method.parent_service().full_name(), method.name())
}

/// An RPC as the sources' facts state it, before any descriptor pool is decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stated<'a> {
    /// `csi.v1.Controller`.
    service: &'a str,
    /// `CreateVolume`.
    name: &'a str,
}

impl Stated<'_> {
    /// `Controller`.
    fn service_name(&self) -> &str {
        self.service.rsplit('.').next().unwrap_or(self.service)
    }

    /// `csi.v1.Controller/CreateVolume`.
    fn full(&self) -> String {
        format!("{}/{}", self.service, self.name)
    }

    /// `Controller/CreateVolume`.
    fn short(&self) -> String {
        format!("{}/{}", self.service_name(), self.name)
    }
}

/// Every RPC the schema's sources state, each service once (the first source to state it
/// wins), in the order of the sources and their declarations; no pool is decoded, so resolving
/// a name costs only the one package the RPC is in.
fn stated(schema: &Schema) -> Vec<Stated<'_>> {
    let mut first_source: std::collections::HashMap<&str, usize> = Default::default();
    let mut out = Vec::new();
    for (i, table) in schema.facts_tables().enumerate() {
        for m in table.methods.iter() {
            let owner = *first_source.entry(&*m.service).or_insert(i);
            if owner == i && !m.service.starts_with("google.") {
                out.push(Stated { service: &m.service, name: &m.name });
            }
        }
    }
    out
}

/// Every RPC of the schema, as [`resolve`] finds them.
pub fn all(schema: &Schema) -> Vec<MethodDescriptor> {
    stated(schema).iter().filter_map(|m| schema.find_method(&format!("/{}", m.full()))).collect()
}

/// The names a person may type for the schema's RPCs, for shell completion: each RPC's simple
/// name where no other RPC has it, else its `Service/Method` form where that is unique, else
/// its full name.
pub fn names(schema: &Schema) -> Vec<String> {
    let methods = stated(schema);
    methods
        .iter()
        .map(|m| {
            let same_name: Vec<&Stated<'_>> = methods.iter().filter(|o| o.name == m.name).collect();
            let same_short: Vec<&Stated<'_>> =
                methods.iter().filter(|o| o.short() == m.short()).collect();
            let is = |chosen: Option<&Stated<'_>>| chosen.is_some_and(|c| c.full() == m.full());
            if same_name.len() == 1 || is(preferred(&same_name)) {
                m.name.to_owned()
            } else if same_short.len() == 1 || is(preferred(&same_short)) {
                m.short()
            } else {
                m.full()
            }
        })
        .collect()
}

/// Resolves `name` to one RPC of the schema.
///
/// # Errors
///
/// When no RPC has that name (with the nearest names), or several do (naming each).
pub fn resolve(schema: &Schema, name: &str) -> Result<MethodDescriptor, MethodError> {
    let methods = stated(schema);
    let wanted = name.trim().trim_start_matches('/');
    // `pkg.Service.Method` (grpcurl's form) reads as `pkg.Service/Method`.
    let wanted = if wanted.contains('/') {
        wanted.to_owned()
    } else {
        match wanted.rsplit_once('.') {
            Some((service, method)) => format!("{service}/{method}"),
            None => wanted.to_owned(),
        }
    };
    let found: Vec<&Stated<'_>> = match wanted.split_once('/') {
        None => methods.iter().filter(|m| m.name == wanted).collect(),
        Some((service, method)) => methods
            .iter()
            .filter(|m| m.name == method && (m.service == service || m.service_name() == service))
            .collect(),
    };
    match found.as_slice() {
        [one] => schema
            .find_method(&format!("/{}", one.full()))
            .ok_or_else(|| MethodError::Unknown { name: name.to_owned(), suggestions: Vec::new() }),
        [] => Err(MethodError::Unknown {
            name: name.to_owned(),
            suggestions: nearest(&methods, &wanted),
        }),
        many => match preferred(many) {
            Some(one) => schema.find_method(&format!("/{}", one.full())).ok_or_else(|| {
                MethodError::Unknown { name: name.to_owned(), suggestions: Vec::new() }
            }),
            None => Err(MethodError::Ambiguous {
                name: name.to_owned(),
                candidates: many.iter().map(|m| m.full()).collect(),
            }),
        },
    }
}

/// Of several RPCs a name matches, the one of the CSI spec itself (a `csi.*` package), when
/// exactly one is: csi-addons' identity service repeats `Identity/Probe`, `GetPluginInfo` and
/// `GetPluginCapabilities`, and a user typing `Probe` means CSI's; the add-on's RPC is named
/// with its package. Anything else stays ambiguous.
fn preferred<'a, 'b>(many: &[&'a Stated<'b>]) -> Option<&'a Stated<'b>> {
    match many.iter().filter(|m| m.service.starts_with("csi.")).collect::<Vec<_>>().as_slice() {
        [one] => Some(**one),
        _ => None,
    }
}

/// The names nearest to `wanted`, best first: those within a few edits of a method's name, or
/// that equal it but for case.
fn nearest(methods: &[Stated<'_>], wanted: &str) -> Vec<String> {
    let typed_method = wanted.rsplit('/').next().unwrap_or(wanted);
    let lower = typed_method.to_ascii_lowercase();
    let mut scored: Vec<(f64, String)> = methods
        .iter()
        .filter_map(|m| {
            let candidate = m.name.to_ascii_lowercase();
            let score = strsim::jaro_winkler(&lower, &candidate);
            let close = score >= 0.9
                || strsim::levenshtein(&lower, &candidate) <= (typed_method.len() / 4).max(1);
            let unique = methods.iter().filter(|o| o.name == m.name).count() == 1;
            close.then(|| (score, if unique { m.short() } else { m.full() }))
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    scored.dedup_by(|a, b| a.1 == b.1);
    scored.into_iter().take(3).map(|(_, s)| s).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema() -> Schema {
        Schema::builtin().expect("built in")
    }

    #[test]
    fn every_written_form_names_the_same_rpc() {
        let s = schema();
        for name in [
            "CreateVolume",
            "Controller/CreateVolume",
            "csi.v1.Controller/CreateVolume",
            "/csi.v1.Controller/CreateVolume",
            "csi.v1.Controller.CreateVolume",
        ] {
            let m = resolve(&s, name).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(path(&m), "/csi.v1.Controller/CreateVolume", "{name}");
        }
    }

    #[test]
    fn near_misses_get_a_did_you_mean() {
        let s = schema();
        for (typed, meant) in [
            ("CreateVolum", "Controller/CreateVolume"),
            ("createvolume", "Controller/CreateVolume"),
            ("NodePublishVolumes", "Node/NodePublishVolume"),
            ("Controller/DeleteVolme", "Controller/DeleteVolume"),
        ] {
            let e = resolve(&s, typed).expect_err(typed);
            let MethodError::Unknown { suggestions, .. } = &e else { panic!("{e}") };
            assert_eq!(suggestions.first().map(String::as_str), Some(meant), "{typed}: {e}");
            assert!(e.to_string().contains("did you mean"), "{e}");
        }
        let e = resolve(&s, "Frobnicate").expect_err("unknown");
        assert_eq!(e.to_string(), "unknown method 'Frobnicate'");
    }

    #[test]
    fn a_name_the_csi_spec_shares_with_an_addon_is_the_csi_spec_s() {
        // csi-addons' identity service repeats csi.v1's Identity/Probe: the short forms mean
        // CSI's, the add-on's is named with its package.
        let s = schema();
        for name in ["Probe", "Identity/Probe", "GetPluginInfo"] {
            let m = resolve(&s, name).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(path(&m).starts_with("/csi.v1.Identity/"), "{name}: {}", path(&m));
        }
        let m = resolve(&s, "identity.Identity/Probe").expect("full name");
        assert_eq!(path(&m), "/identity.Identity/Probe");
    }

    #[test]
    fn a_name_two_addons_share_is_refused_naming_both() {
        let methods = [
            Stated { service: "replication.Controller", name: "Enable" },
            Stated { service: "other.Controller", name: "Enable" },
        ];
        let many: Vec<&Stated<'_>> = methods.iter().collect();
        assert!(preferred(&many).is_none());
        let with_csi = [
            Stated { service: "csi.v1.Identity", name: "Probe" },
            Stated { service: "identity.Identity", name: "Probe" },
        ];
        let many: Vec<&Stated<'_>> = with_csi.iter().collect();
        assert_eq!(preferred(&many).map(|m| m.full()).as_deref(), Some("csi.v1.Identity/Probe"));
    }

    #[test]
    fn completion_names_resolve_back() {
        let s = schema();
        let names = names(&s);
        assert!(names.contains(&"CreateVolume".to_owned()), "{names:?}");
        for n in &names {
            assert!(resolve(&s, n).is_ok(), "{n}");
        }
        assert_eq!(names.len(), all(&s).len());
    }
}
