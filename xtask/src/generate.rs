//! `cargo xtask generate`: loads CSI (and csi-addons) specs, runs `csikit-codegen` and writes
//! the `csikit` crate atomically, or with `--check` reports what would change.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use csikit_codegen::{CrateOptions, Dependency, Package};
use csikit_spec::{CSI_GO_IMPORT, ImportMap, LoadOptions, Loaded, SourceFile};

/// The csi-addons specs bundled into `csikit::addons`.
pub(crate) const ADDONS: &[&str] = &["identity", "reclaimspace", "replication", "volumegroup"];

/// Flags of `cargo xtask generate`.
#[derive(clap::Args)]
pub struct GenerateArgs {
    /// A CSI release directory (spec.md and csi.proto, or csi.proto alone); default: the
    /// corpus's newest release.
    #[arg(long)]
    spec_dir: Option<PathBuf>,
    /// Write a standalone crate for this release here instead of rewriting `generated/`
    /// (csi-addons are left out: they follow the newest release).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Change nothing; fail, naming the command to run, if the output would differ.
    #[arg(long)]
    check: bool,
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

struct Input {
    loaded: Loaded,
    module: String,
    source: String,
    extern_paths: Vec<(String, String)>,
    /// The same spec read with the Japanese translation's error tables, when there is one.
    ja: Option<csikit_spec::Model>,
    /// The crate feature the module sits behind (an older release kept beside the current one).
    feature: Option<String>,
}

/// The release `generated/` follows when `--spec-dir` is not given: the corpus's newest (by
/// version, read from the corpus listing), and the release before it, which the crate keeps
/// behind a feature for COs talking to plugins still on it.
fn default_releases(
    corpus: &csikit_spec::corpus::Corpus,
) -> anyhow::Result<(PathBuf, Option<csikit_spec::corpus::Release>)> {
    let newest = corpus.latest_release().with_context(|| {
        format!(
            "the corpus at '{}' has no CSI release with a csi.proto; pass --spec-dir DIR or set {}=PATH to the corpus folder",
            corpus.root.display(),
            csikit_spec::CORPUS_ENV
        )
    })?;
    let before = corpus.releases.iter().rev().find(|r| r.version < newest.version).cloned();
    Ok((newest.dir.clone(), before))
}

/// The module (and feature) name of a kept release: `v1.12.0` -> `v1_12`.
fn kept_module(release: &csikit_spec::corpus::Release) -> String {
    let [major, minor, _] = release.version.numbers;
    format!("v{major}_{minor}")
}

/// The Japanese translation's error tables, read against the release folder that states `dir`'s
/// tables: `dir` itself when it has spec.md, else the release its prose facts are carried from
/// (the translation matches rows by code, RPC by RPC, so only carried tables get them).
fn japanese(corpus: &Path, dir: &Path, model: &csikit_spec::Model) -> Option<csikit_spec::Model> {
    let ja_spec = corpus.join("translations/ja/spec.md");
    if !ja_spec.is_file() {
        return None;
    }
    let base = match model.source.kind {
        csikit_spec::SourceKind::Spec => dir.to_path_buf(),
        _ => {
            model.source.carried.as_ref()?;
            csikit_spec::corpus::carry_source_of(dir)?.1
        }
    };
    let options =
        LoadOptions { translation: Some(("ja".to_owned(), ja_spec)), ..LoadOptions::default() };
    csikit_spec::load_dir(&base, &options).model
}

/// Loads any spec source through `csikit_spec::load_source`; errors are reported, and so is the
/// one notice of what a proto-only source cannot state.
fn load(dir: &Path, imports: ImportMap) -> anyhow::Result<Loaded> {
    let loaded = csikit_spec::load_source(dir, &LoadOptions { imports, ..LoadOptions::default() });
    let errors = csikit_spec::source::errors_and_source_notice(&loaded.diagnostics);
    if crate::report(&errors) || loaded.model.is_none() || loaded.compiled.is_none() {
        bail!("'{}' has errors; nothing was generated", dir.display());
    }
    Ok(loaded)
}

/// Runs `cargo xtask generate`.
///
/// # Errors
///
/// Missing or broken inputs, failed writes; a stale tree under `--check` is exit code 1.
pub fn generate(args: GenerateArgs) -> anyhow::Result<ExitCode> {
    let corpus = csikit_spec::corpus_dir();
    let (spec_dir, kept) = match &args.spec_dir {
        Some(dir) => (dir.clone(), None),
        None => {
            let listing = csikit_spec::corpus::Corpus::read(&corpus).map_err(|d| {
                anyhow::anyhow!(
                    "{}; pass --spec-dir DIR (a CSI release folder holding spec.md and csi.proto, or csi.proto alone) or set {}=PATH to the corpus folder",
                    d.message,
                    csikit_spec::CORPUS_ENV
                )
            })?;
            default_releases(&listing)?
        }
    };
    if !spec_dir.exists() {
        bail!(
            "no spec source at '{}'; pass --spec-dir DIR (a CSI release folder holding spec.md and csi.proto, or csi.proto alone) or set {}=PATH to the corpus folder",
            spec_dir.display(),
            csikit_spec::CORPUS_ENV
        );
    }
    let release =
        spec_dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mut inputs = Vec::new();
    let csi = load(&spec_dir, ImportMap::new())?;
    let package = csi.model.as_ref().map(|m| m.package.clone()).unwrap_or_default();
    let module = package.rsplit('.').next().unwrap_or("v1").to_owned();
    let csi_proto = spec_dir.join("csi.proto");
    // The error catalog carries Japanese rows where the corpus translation has that table.
    let ja = match (&args.out, &csi.model) {
        (None, Some(model)) => japanese(&corpus, &spec_dir, model),
        _ => None,
    };
    inputs.push(Input {
        loaded: csi,
        module: module.clone(),
        source: format!("csi-spec {release}"),
        extern_paths: Vec::new(),
        ja,
        feature: None,
    });
    // The release before, kept behind a feature, and the upgrade note from it.
    let mut upgrade = None;
    if let Some(kept) = kept.filter(|_| args.out.is_none()) {
        let loaded = load(&kept.dir, ImportMap::new())?;
        let name = kept_module(&kept);
        if let (Some(old), Some(new)) = (&loaded.model, &inputs[0].loaded.model) {
            match csikit_spec::upgrade::note(old, new, &kept.name, &release) {
                Ok(note) => upgrade = Some(note),
                Err(errors) => {
                    crate::report(&csikit_spec::Diagnostics(errors));
                    bail!(
                        "the upgrade note from {} to {release} has errors; nothing was generated",
                        kept.name
                    );
                }
            }
        }
        let ja = loaded.model.as_ref().and_then(|m| japanese(&corpus, &kept.dir, m));
        inputs.push(Input {
            loaded,
            module: name.clone(),
            source: format!("csi-spec {}", kept.name),
            extern_paths: Vec::new(),
            ja,
            feature: Some(name),
        });
    }

    if args.out.is_none() {
        let addons_dir = corpus.join("csi-addons");
        let commit = std::fs::read_to_string(addons_dir.join("COMMIT"))
            .map(|c| c.trim().chars().take(12).collect::<String>());
        let commit = commit.with_context(|| {
            format!(
                "reading '{}'; set {} to the corpus folder holding csi-addons/",
                addons_dir.join("COMMIT").display(),
                csikit_spec::CORPUS_ENV
            )
        })?;
        let text = std::fs::read_to_string(&csi_proto)
            .with_context(|| format!("reading '{}'", csi_proto.display()))?;
        for name in ADDONS {
            let mut imports = ImportMap::new();
            imports.insert(
                CSI_GO_IMPORT,
                SourceFile::new(csi_proto.display().to_string(), text.clone()),
            );
            let loaded = load(&addons_dir.join(name), imports)?;
            inputs.push(Input {
                loaded,
                module: format!("addons::{name}"),
                source: format!("csi-addons {name}@{commit}"),
                extern_paths: vec![(format!(".{package}"), format!("::csikit::{module}"))],
                ja: None,
                feature: None,
            });
        }
    }

    let packages: Vec<Package<'_>> = inputs
        .iter()
        .filter_map(|i| {
            let (model, compiled) = (i.loaded.model.as_ref()?, i.loaded.compiled.as_ref()?);
            Some(Package {
                model,
                descriptor_set: &compiled.encoded,
                proto_file: &compiled.name,
                module: i.module.clone(),
                source: i.source.clone(),
                extern_paths: i.extern_paths.clone(),
                translation: i.ja.as_ref(),
                feature: i.feature.clone(),
            })
        })
        .collect();
    let command = match (&args.out, &args.spec_dir) {
        (None, None) => "cargo xtask generate".to_owned(),
        (None, Some(d)) => format!("cargo xtask generate --spec-dir {}", d.display()),
        (Some(_), _) => format!("cargo xtask generate --spec-dir .../{release} --out DIR"),
    };
    let dependencies =
        if args.out.is_some() { standalone_dependencies()? } else { BTreeMap::new() };
    let options = CrateOptions {
        command: command.clone(),
        standalone: args.out.is_some(),
        dependencies,
        upgrade,
    };
    let files = csikit_codegen::generate_crate(&packages, &options)
        .context("generating the csikit crate")?;
    let files = format_rust(files)?;
    let out = args.out.clone().unwrap_or_else(|| workspace_root().join("generated"));

    // csikit-build resolves the csi-addons import of csi.proto to the release `csikit::v1`
    // was generated from: it carries that text.
    let csi_proto_rs = match args.out {
        None => Some((workspace_root().join(CSI_PROTO_RS), csi_proto_rs(&csi_proto, &release)?)),
        Some(_) => None,
    };

    if args.check {
        let mut stale = differences(&out, &files)?;
        if let Some((path, text)) = &csi_proto_rs
            && std::fs::read(path).ok().as_deref() != Some(text.as_bytes())
        {
            stale.push(format!("changed: {}", path.display()));
        }
        if stale.is_empty() {
            eprintln!("'{}' is up to date ({} files)", out.display(), files.len());
            return Ok(ExitCode::SUCCESS);
        }
        for s in &stale {
            eprintln!("  {s}");
        }
        eprintln!(
            "error: '{}' is stale ({} files differ); run `{command}` and commit the result",
            out.display(),
            stale.len()
        );
        return Ok(ExitCode::from(1));
    }
    write_tree(&out, &files)?;
    if let Some((path, text)) = &csi_proto_rs {
        csikit_runtime::fs::write_atomic(path, text.as_bytes())
            .with_context(|| format!("writing '{}'", path.display()))?;
    }
    eprintln!("wrote {} files to '{}'", files.len(), out.display());
    Ok(ExitCode::SUCCESS)
}

/// csikit-build's copy of the CSI proto, relative to the workspace root.
const CSI_PROTO_RS: &str = "build/src/csi_proto.rs";

/// The text of `build/src/csi_proto.rs`: the CSI proto `generated/` comes from, as a constant.
fn csi_proto_rs(path: &Path, release: &str) -> anyhow::Result<String> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading '{}'", path.display()))?;
    let mut hashes = String::from("#");
    while text.contains(&format!("\"{hashes}")) {
        hashes.push('#');
    }
    Ok(format!(
        "//! The CSI proto `csikit::v1` was generated from (@generated by cargo xtask generate from\n\
         //! csi-spec {release}. Do not edit): what the csi-addons import of csi.proto reads by default.\n\n\
         /// The CSI release of [`CSI_PROTO`].\npub const CSI_RELEASE: &str = {release:?};\n\n\
         /// The text of that release's `csi.proto`.\npub const CSI_PROTO: &str = r{hashes}\"{text}\"{hashes};\n"
    ))
}

/// How a standalone crate names its dependencies: the versions of the workspace manifest's
/// `[workspace.dependencies]`, and this checkout's runtime and macros crates by path (with
/// their version, so the crate also builds once they are published).
fn standalone_dependencies() -> anyhow::Result<BTreeMap<String, Dependency>> {
    let path = workspace_root().join("Cargo.toml");
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading '{}'", path.display()))?;
    let manifest: toml::Table =
        text.parse().with_context(|| format!("parsing '{}'", path.display()))?;
    let deps = manifest
        .get("workspace")
        .and_then(|w| w.get("dependencies"))
        .and_then(toml::Value::as_table)
        .with_context(|| format!("'{}' has no [workspace.dependencies]", path.display()))?;
    let mut out = BTreeMap::new();
    for name in [
        "csikit-runtime",
        "csikit-macros",
        "prost",
        "prost-types",
        "prost-reflect",
        "tonic",
        "tonic-prost",
    ] {
        let spec = deps.get(name).with_context(|| {
            format!("'{}' has no workspace dependency '{name}'", path.display())
        })?;
        let version = match spec {
            toml::Value::String(v) => Some(v.clone()),
            toml::Value::Table(t) => {
                t.get("version").and_then(toml::Value::as_str).map(str::to_owned)
            }
            _ => None,
        };
        let local =
            spec.get("path").and_then(toml::Value::as_str).map(|p| workspace_root().join(p));
        let local = local.map(|p| p.canonicalize().unwrap_or(p).display().to_string());
        out.insert(name.to_owned(), Dependency { version, path: local });
    }
    Ok(out)
}

/// Every generated `.rs` file through rustfmt with the workspace's `rustfmt.toml`, as
/// rust-analyzer's codegen does, so `generated/` is what `cargo fmt` would leave.
fn format_rust(files: BTreeMap<PathBuf, String>) -> anyhow::Result<BTreeMap<PathBuf, String>> {
    use std::io::Write as _;
    let config = workspace_root().join("rustfmt.toml");
    let mut out = BTreeMap::new();
    for (path, text) in files {
        if path.extension().is_none_or(|e| e != "rs") {
            out.insert(path, text);
            continue;
        }
        let mut child = std::process::Command::new("rustfmt")
            .args(["--edition", "2024", "--emit", "stdout", "--quiet", "--config-path"])
            .arg(&config)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .context("running rustfmt (install it with `rustup component add rustfmt`)")?;
        let mut stdin = child.stdin.take().context("rustfmt's stdin")?;
        // Write from another thread so a large file cannot fill both pipes at once.
        let writer = std::thread::spawn(move || stdin.write_all(text.as_bytes()));
        let output = child.wait_with_output().context("waiting for rustfmt")?;
        writer
            .join()
            .map_err(|_| anyhow::anyhow!("writing to rustfmt panicked"))?
            .context("writing to rustfmt")?;
        if !output.status.success() {
            bail!(
                "rustfmt refused the generated '{}' (a generator bug): {}",
                path.display(),
                String::from_utf8_lossy(&output.stderr)
            );
        }
        let formatted =
            String::from_utf8(output.stdout).context("rustfmt printed text that is not UTF-8")?;
        out.insert(path, formatted);
    }
    Ok(out)
}

/// Every file on disk under `dir` (skipping `target/`), relative to `dir`.
fn files_on_disk(dir: &Path) -> anyhow::Result<BTreeMap<PathBuf, Vec<u8>>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = match std::fs::read_dir(&d) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e).with_context(|| format!("reading '{}'", d.display())),
        };
        for entry in entries {
            let path = entry?.path();
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n != "target") {
                    stack.push(path);
                }
            } else {
                let rel = path.strip_prefix(dir).unwrap_or(&path).to_path_buf();
                out.insert(
                    rel,
                    std::fs::read(&path)
                        .with_context(|| format!("reading '{}'", path.display()))?,
                );
            }
        }
    }
    Ok(out)
}

fn differences(dir: &Path, files: &BTreeMap<PathBuf, String>) -> anyhow::Result<Vec<String>> {
    let disk = files_on_disk(dir)?;
    let mut out = Vec::new();
    for (path, text) in files {
        match disk.get(path) {
            None => out.push(format!("missing: {}", path.display())),
            Some(bytes) if bytes != text.as_bytes() => {
                out.push(format!("changed: {}", path.display()))
            }
            Some(_) => {}
        }
    }
    for path in disk.keys().filter(|p| !files.contains_key(*p)) {
        out.push(format!("not generated: {}", path.display()));
    }
    Ok(out)
}

/// Writes the whole tree beside `dir`, then swaps it in, so `dir` is never half-written.
fn write_tree(dir: &Path, files: &BTreeMap<PathBuf, String>) -> anyhow::Result<()> {
    let tmp = csikit_cli::tree::stage(dir, files)?;
    // Keep a `target/` a standalone crate may have built.
    csikit_cli::tree::keep_folder(dir, &tmp, "target")?;
    csikit_cli::tree::swap_in(dir, &tmp)
}
