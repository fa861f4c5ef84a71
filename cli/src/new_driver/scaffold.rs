//! The driver crate `csikit new-driver` writes: the files in `cli/templates/new-driver/`
//! with their `{{ name }}` placeholders filled with the crate's name, the plugin's name and
//! where csikit is.

use std::collections::BTreeMap;
use std::path::PathBuf;

/// What a new driver crate is called and what it builds against.
#[derive(Debug, Clone)]
pub struct DriverOptions {
    /// The package (and binary) name, checked by [`check_crate_name`].
    pub name: String,
    /// The name `GetPluginInfo` reports, checked by [`check_plugin_name`].
    pub plugin_name: String,
    /// Where the driver gets the `csikit` crate.
    pub csikit: CsikitSource,
    /// The image its `deploy/` names, which its README repeats.
    pub image: String,
}

/// How a driver crate names its `csikit` dependency.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CsikitSource {
    /// A version requirement on the published crate, e.g. `0.1`.
    Version(String),
    /// A local folder holding the `csikit` crate (a checkout's `generated/`).
    Path(String),
}

/// Why a driver crate cannot be written.
#[derive(Debug, thiserror::Error)]
pub enum ScaffoldError {
    /// The name cannot be a Cargo package.
    #[error("'{name}' is not a valid crate name: {reason}")]
    CrateName {
        /// The name given.
        name: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The name breaks the spec's rule for `GetPluginInfo`'s name.
    #[error("'{name}' is not a valid plugin name: {reason}")]
    PluginName {
        /// The name given or derived.
        name: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A template names a placeholder that has no value.
    #[error("rendering '{file}': no value for the placeholder '{placeholder}'")]
    Render {
        /// The file being rendered.
        file: &'static str,
        /// The placeholder's text, braces included.
        placeholder: String,
    },
}

/// Rust keywords, reserved words included; Cargo refuses them as package names.
const KEYWORDS: &[&str] = &[
    "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "crate",
    "do", "dyn", "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if", "impl",
    "in", "let", "loop", "macro", "match", "mod", "move", "mut", "override", "priv", "pub", "ref",
    "return", "self", "static", "struct", "super", "trait", "true", "try", "type", "typeof",
    "unsafe", "unsized", "use", "virtual", "where", "while", "yield",
];

/// Names Cargo refuses for a binary: the standard library's crates and its own output folders.
const RESERVED: &[&str] =
    &["alloc", "core", "proc_macro", "std", "test", "build", "deps", "examples", "incremental"];

/// The crates the scaffold depends on; a package of the same name would shadow one.
const DEPENDENCIES: &[&str] =
    &["csikit", "csikit_conformance", "tokio", "tonic", "tracing", "tracing_subscriber"];

/// The longest package name crates.io takes.
const MAX_CRATE_NAME: usize = 64;

/// The spec's limit on `GetPluginInfo`'s name.
const MAX_PLUGIN_NAME: usize = 63;

/// Checks that `name` can be a Cargo package and binary: ASCII letters, digits, `-` and `_`,
/// starting with a letter and ending with a letter or digit, at most 64 characters, neither a
/// Rust keyword nor a name Cargo or the scaffold's dependencies reserve.
///
/// # Errors
///
/// [`ScaffoldError::CrateName`] saying which rule `name` breaks.
pub fn check_crate_name(name: &str) -> Result<(), ScaffoldError> {
    let fail = |reason: String| Err(ScaffoldError::CrateName { name: name.to_owned(), reason });
    let ident = name.replace('-', "_");
    if name.is_empty() {
        return fail("it is empty".into());
    }
    if let Some(c) = name.chars().find(|c| !(c.is_ascii_alphanumeric() || *c == '-' || *c == '_')) {
        return fail(format!("{c:?} is not allowed; use ASCII letters, digits, '-' and '_'"));
    }
    if !name.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return fail("it must start with a letter".into());
    }
    if !name.ends_with(|c: char| c.is_ascii_alphanumeric()) {
        return fail("it must end with a letter or digit".into());
    }
    if name.len() > MAX_CRATE_NAME {
        return fail(format!(
            "it is {} characters long; the limit is {MAX_CRATE_NAME}",
            name.len()
        ));
    }
    if KEYWORDS.contains(&name) {
        return fail("it is a Rust keyword".into());
    }
    if RESERVED.contains(&ident.as_str()) {
        return fail("Cargo reserves it".into());
    }
    if DEPENDENCIES.contains(&ident.as_str()) {
        return fail("the driver depends on a crate of that name".into());
    }
    Ok(())
}

/// Checks `name` against the spec's rule for `GetPluginInfo`'s name: domain-name notation, at
/// most 63 characters, alphanumerics, `-` and `.` only, each dot-separated label beginning and
/// ending with an alphanumeric.
///
/// # Errors
///
/// [`ScaffoldError::PluginName`] saying which rule `name` breaks.
pub fn check_plugin_name(name: &str) -> Result<(), ScaffoldError> {
    let fail = |reason: String| Err(ScaffoldError::PluginName { name: name.to_owned(), reason });
    if name.is_empty() {
        return fail("it is empty".into());
    }
    if name.len() > MAX_PLUGIN_NAME {
        return fail(format!(
            "it is {} characters long; the spec allows {MAX_PLUGIN_NAME}",
            name.len()
        ));
    }
    if let Some(c) = name.chars().find(|c| !(c.is_ascii_alphanumeric() || *c == '-' || *c == '.')) {
        return fail(format!("{c:?} is not allowed; use ASCII letters, digits, '-' and '.'"));
    }
    let edges_ok = |label: &str| {
        label.starts_with(|c: char| c.is_ascii_alphanumeric())
            && label.ends_with(|c: char| c.is_ascii_alphanumeric())
    };
    if !name.split('.').all(edges_ok) {
        return fail("each dot-separated label must begin and end with a letter or digit".into());
    }
    Ok(())
}

/// The plugin name a crate gets when none is given: `NAME.csi.example.com`, lowercased, with
/// `_` made `-` (example.com is reserved for examples, so the name says it is a placeholder).
pub fn default_plugin_name(crate_name: &str) -> String {
    format!("{}.csi.example.com", crate_name.to_ascii_lowercase().replace('_', "-"))
}

/// The templates, named by the file they become.
const CARGO_TOML: &str = include_str!("../../templates/new-driver/Cargo.toml.in");
const MAIN_RS: &str = include_str!("../../templates/new-driver/main.rs.in");
const README_MD: &str = include_str!("../../templates/new-driver/README.md.in");
const GITIGNORE: &str = include_str!("../../templates/new-driver/gitignore.in");
const CAPABILITIES_TOML: &str = include_str!("../../templates/new-driver/capabilities.toml.in");

/// `template` with each `{{ key }}` replaced by its value, as `(file, text)`.
///
/// # Errors
///
/// [`ScaffoldError::Render`] when a placeholder is left that `values` has no value for.
fn fill(
    file: &'static str,
    template: &str,
    values: &[(&str, &str)],
) -> Result<(PathBuf, String), ScaffoldError> {
    let mut text = String::with_capacity(template.len() + 256);
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        let Some(len) = rest[start..].find("}}").map(|end| end + 2) else { break };
        let placeholder = &rest[start..start + len];
        let key = placeholder[2..len - 2].trim();
        let Some((_, value)) = values.iter().find(|(k, _)| *k == key) else {
            return Err(ScaffoldError::Render { file, placeholder: placeholder.to_owned() });
        };
        text.push_str(&rest[..start]);
        text.push_str(value);
        rest = &rest[start + len..];
    }
    if let Some(start) = rest.find("{{") {
        let placeholder = rest[start..].lines().next().unwrap_or_default().to_owned();
        return Err(ScaffoldError::Render { file, placeholder });
    }
    text.push_str(rest);
    Ok((PathBuf::from(file), text))
}

/// `s` as a TOML basic string, quotes included.
fn toml_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Every file of the driver crate, keyed by path relative to its root: `Cargo.toml`,
/// `src/main.rs`, `README.md`, `.gitignore`.
///
/// # Errors
///
/// When the crate name or the plugin name is invalid, or a template fails to render.
pub fn generate_driver(
    options: &DriverOptions,
) -> Result<BTreeMap<PathBuf, String>, ScaffoldError> {
    check_crate_name(&options.name)?;
    check_plugin_name(&options.plugin_name)?;
    let (name, plugin_name) = (options.name.as_str(), options.plugin_name.as_str());
    let (csikit_source, csikit_from, conformance_source) = match &options.csikit {
        CsikitSource::Version(v) => (
            format!("version = {}", toml_string(v)),
            format!("csikit {v} from crates.io"),
            format!("version = {}", toml_string(v)),
        ),
        // A checkout's `generated/` has the conformance crate beside it, in `conformance/`.
        CsikitSource::Path(p) => {
            let conformance = std::path::Path::new(p).join("..").join("conformance");
            (
                format!("path = {}", toml_string(p)),
                format!("csikit by path from `{p}`"),
                format!("path = {}", toml_string(&conformance.to_string_lossy())),
            )
        }
    };
    Ok(BTreeMap::from([
        fill(
            "Cargo.toml",
            CARGO_TOML,
            &[
                ("name", name),
                ("csikit_source", &csikit_source),
                ("conformance_source", &conformance_source),
            ],
        )?,
        fill("src/main.rs", MAIN_RS, &[("name", name), ("plugin_name", plugin_name)])?,
        fill(
            "README.md",
            README_MD,
            &[
                ("name", name),
                ("plugin_name", plugin_name),
                ("csikit_from", &csikit_from),
                ("image", &options.image),
            ],
        )?,
        fill(".gitignore", GITIGNORE, &[])?,
    ]))
}

/// What the example plugin of `src/main.rs` says it is, as a capabilities file (the form
/// `csikit deploy --capabilities` reads): the scaffold's `deploy/` is derived from it.
///
/// # Errors
///
/// When the names are invalid or the template fails to render.
pub fn example_capabilities(options: &DriverOptions) -> Result<String, ScaffoldError> {
    check_crate_name(&options.name)?;
    check_plugin_name(&options.plugin_name)?;
    let values = [("name", options.name.as_str()), ("plugin_name", options.plugin_name.as_str())];
    Ok(fill("capabilities.toml", CAPABILITIES_TOML, &values)?.1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crate_names() {
        for good in ["hostpath", "my-driver", "my_driver2", "a", "csikit-driver", "tokio-csi"] {
            assert!(check_crate_name(good).is_ok(), "{good}");
        }
        let long = "a".repeat(65);
        for (bad, why) in [
            ("", "empty"),
            ("1driver", "start with a letter"),
            ("_driver", "start with a letter"),
            ("driver-", "end with"),
            ("my driver", "' ' is not allowed"),
            ("drïver", "'ï' is not allowed"),
            ("fn", "keyword"),
            ("test", "Cargo reserves"),
            ("proc-macro", "Cargo reserves"),
            ("tracing-subscriber", "depends on"),
            ("csikit", "depends on"),
            (long.as_str(), "65 characters"),
        ] {
            let err = check_crate_name(bad).expect_err(bad).to_string();
            assert!(
                err.starts_with(&format!("'{bad}' is not a valid crate name: "))
                    && err.contains(why),
                "{bad}: {err}"
            );
        }
    }

    #[test]
    fn plugin_names() {
        let longest = "a".repeat(63);
        for good in
            ["hostpath.csi.k8s.io", "a", "x-1.example.com", "EBS.CSI.aws.com", longest.as_str()]
        {
            assert!(check_plugin_name(good).is_ok(), "{good}");
        }
        let too_long = "a".repeat(64);
        for (bad, why) in [
            ("", "empty"),
            ("-a.b", "begin and end"),
            ("a.b-", "begin and end"),
            ("a..b", "begin and end"),
            ("a-.b", "begin and end"),
            ("a_b.c", "'_' is not allowed"),
            (too_long.as_str(), "64 characters"),
        ] {
            let err = check_plugin_name(bad).expect_err(bad).to_string();
            assert!(err.contains(why), "{bad}: {err}");
        }
        assert_eq!(default_plugin_name("My_Driver"), "my-driver.csi.example.com");
        // The longest crate name gives a plugin name over the limit: the caller asks for one.
        assert!(check_plugin_name(&default_plugin_name(&"a".repeat(64))).is_err());
    }

    #[test]
    fn renders_every_file_with_the_names() {
        let options = DriverOptions {
            name: "demo-driver".into(),
            plugin_name: "demo.csi.example.com".into(),
            csikit: CsikitSource::Path("/src/csi\"kit/generated".into()),
            image: "demo-driver:0.1.0".into(),
        };
        let files = generate_driver(&options).expect("renders");
        let paths: Vec<_> = files.keys().map(|p| p.display().to_string()).collect();
        assert_eq!(paths, [".gitignore", "Cargo.toml", "README.md", "src/main.rs"]);
        let cargo = &files[&PathBuf::from("Cargo.toml")];
        assert!(cargo.contains("name = \"demo-driver\""), "{cargo}");
        assert!(
            cargo.contains(
                r#"csikit = { path = "/src/csi\"kit/generated", features = ["server"] }"#
            ),
            "{cargo}"
        );
        assert!(
            cargo.contains(
                r#"csikit-conformance = { path = "/src/csi\"kit/generated/../conformance" }"#
            ),
            "{cargo}"
        );
        assert!(
            files[&PathBuf::from("src/main.rs")]
                .contains("const PLUGIN_NAME: &str = \"demo.csi.example.com\";")
        );
        assert!(files[&PathBuf::from("README.md")].starts_with("# demo-driver\n"));
        // Same input, same bytes.
        assert_eq!(files, generate_driver(&options).expect("renders"));
        let published =
            DriverOptions { csikit: CsikitSource::Version("0.1".into()), ..options.clone() };
        let cargo = &generate_driver(&published).expect("renders")[&PathBuf::from("Cargo.toml")];
        assert!(
            cargo.contains(r#"csikit = { version = "0.1", features = ["server"] }"#)
                && cargo.contains(r#"csikit-conformance = { version = "0.1" }"#),
            "{cargo}"
        );
        // Bad names are refused before anything renders.
        let bad = DriverOptions { name: "9".into(), ..options };
        assert!(matches!(generate_driver(&bad), Err(ScaffoldError::CrateName { .. })));
    }

    #[test]
    fn placeholders_fill_or_fail() {
        let (path, text) = fill("a", "x {{ k }} y {{k}}\n", &[("k", "v")]).expect("fills");
        assert_eq!((path, text.as_str()), (PathBuf::from("a"), "x v y v\n"));
        // A value is not read again for placeholders.
        assert_eq!(fill("a", "{{ k }}", &[("k", "{{ k }}")]).expect("fills").1, "{{ k }}");
        let err = fill("a", "x {{ other }}", &[("k", "v")]).expect_err("unknown key");
        assert_eq!(err.to_string(), "rendering 'a': no value for the placeholder '{{ other }}'");
        assert!(fill("a", "x {{ open", &[]).is_err());
        // Every template's placeholders have values: no `{{` is left in what is written.
        let options = DriverOptions {
            name: "d".into(),
            plugin_name: "d.example.com".into(),
            csikit: CsikitSource::Version("0.1".into()),
            image: "d:0.1.0".into(),
        };
        for (path, text) in generate_driver(&options).expect("renders") {
            assert!(!text.contains("{{"), "{}", path.display());
        }
    }

    #[test]
    fn toml_strings_escape() {
        assert_eq!(toml_string(r"C:\a\b"), r#""C:\\a\\b""#);
        assert_eq!(toml_string("a\"b\n"), r#""a\"b\u000A""#);
    }
}
