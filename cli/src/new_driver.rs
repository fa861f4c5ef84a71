//! `csikit new-driver NAME --out DIR` (also `cargo xtask new-driver`): writes a CSI driver crate
//! built on csikit's server skeleton (rendered by [`scaffold`]) with its `deploy/` folder (derived
//! by `deploy` from the capabilities of the example's RPCs), all at once or not at all.

pub mod scaffold;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use scaffold::{CsikitSource, DriverOptions};

/// Flags of `csikit new-driver` (and `cargo xtask new-driver`).
#[derive(clap::Args)]
pub struct NewDriverArgs {
    /// The crate (and binary) name, e.g. `hostpath-driver`.
    name: String,
    /// The folder to create; refused when it exists and is not empty, unless --force.
    #[arg(long)]
    out: PathBuf,
    /// The name GetPluginInfo reports (domain-name notation, at most 63 characters);
    /// default NAME.csi.example.com.
    #[arg(long)]
    plugin_name: Option<String>,
    /// Depend on the csikit crate in this folder by path (e.g. this checkout's generated/)
    /// instead of the published csikit of this release.
    #[arg(long)]
    csikit_path: Option<PathBuf>,
    /// Write into a non-empty --out: the scaffold's files are replaced, other files are kept.
    #[arg(long)]
    force: bool,
    /// The image deploy/ names for the driver (default NAME:0.1.0, lowercased, for a cluster
    /// that has the image loaded, as kind's `kind load docker-image` does).
    #[arg(long)]
    image: Option<String>,
}

/// The version requirement a driver puts on csikit by default: this release's `MAJOR.MINOR`.
fn csikit_requirement() -> String {
    let version = env!("CARGO_PKG_VERSION");
    let mut parts = version.split('.');
    match (parts.next(), parts.next()) {
        (Some(major), Some(minor)) => format!("{major}.{minor}"),
        _ => version.to_owned(),
    }
}

/// Runs `csikit new-driver`.
///
/// A bad name, plugin name or csikit path, or a non-empty `--out` without `--force`, is a bad
/// command line: one line on stderr per problem, exit code 2, nothing written.
///
/// # Errors
///
/// When the files cannot be written.
pub fn new_driver(args: NewDriverArgs) -> anyhow::Result<ExitCode> {
    let mut problems = Vec::new();
    let crate_name = scaffold::check_crate_name(&args.name);
    let crate_ok = crate_name.is_ok();
    let plugin_name = match args.plugin_name {
        Some(name) => scaffold::check_plugin_name(&name).map(|()| name).map_err(|e| e.to_string()),
        // A plugin name derived from a bad crate name would only repeat its problem.
        None if crate_name.is_err() => Ok(String::new()),
        None => {
            let name = scaffold::default_plugin_name(&args.name);
            scaffold::check_plugin_name(&name)
                .map(|()| name)
                .map_err(|e| format!("{e}; pass --plugin-name"))
        }
    };
    if let Err(e) = crate_name {
        problems.push(e.to_string());
    }
    let plugin_name = plugin_name.unwrap_or_else(|problem| {
        problems.push(problem);
        String::new()
    });
    let csikit_path = match args.csikit_path.map(csikit_dir).transpose() {
        Ok(path) => path,
        Err(problem) => {
            problems.push(problem);
            None
        }
    };
    if let Err(problem) = check_out_dir(&args.out, args.force) {
        problems.push(problem);
    }
    // Image path components are lowercase, and a '_' beside a '-' is not a separator they take.
    let image = args
        .image
        .clone()
        .unwrap_or_else(|| format!("{}:0.1.0", args.name.to_ascii_lowercase().replace('_', "-")));
    // An image made from a bad crate name would only repeat its problem.
    let image_checked = args.image.is_some() || crate_ok;
    if let Err(why) = crate::deploy::image::check_image(&image)
        && image_checked
    {
        problems.push(format!("--image '{image}' is not an image reference: {why}"));
    }
    if !problems.is_empty() {
        for problem in &problems {
            eprintln!("error: {problem}");
        }
        return Ok(ExitCode::from(2));
    }
    let csikit = match csikit_path {
        Some(path) => {
            CsikitSource::Path(path.to_str().context("the csikit path is not UTF-8")?.to_owned())
        }
        None => CsikitSource::Version(csikit_requirement()),
    };
    let options =
        DriverOptions { name: args.name.clone(), plugin_name: plugin_name.clone(), csikit, image };
    let mut files = scaffold::generate_driver(&options).context("rendering the driver crate")?;
    let capabilities =
        scaffold::example_capabilities(&options).context("rendering the driver crate")?;
    let deploy = example_deploy(&capabilities, &options.image)?;
    files.extend(deploy.into_iter().map(|(path, text)| (Path::new("deploy").join(path), text)));
    write_scaffold(&args.out, &files)?;
    eprintln!(
        "created '{name}' (plugin name '{plugin_name}') in '{out}'; to run it: cd {out} && CSI_ENDPOINT=unix:///tmp/{name}.sock cargo run",
        name = args.name,
        out = args.out.display(),
    );
    Ok(ExitCode::SUCCESS)
}

/// The example's `deploy/`: derived, as `csikit deploy --capabilities` would, from the
/// capabilities the scaffold's RPCs make.
fn example_deploy(capabilities: &str, image: &str) -> anyhow::Result<BTreeMap<PathBuf, String>> {
    let facts = crate::deploy::plugin::PluginFacts::from_toml("capabilities.toml", capabilities)
        .map_err(|e| anyhow::anyhow!("the scaffold's capabilities: {e}"))?;
    let options = crate::deploy::derive::Options::new(image);
    let (deploy, _warnings) = crate::deploy::manifests(
        &facts,
        &options,
        "the capabilities of the example in src/main.rs",
    )
    .map_err(|e| anyhow::anyhow!("deriving deploy/: {e}"))?;
    Ok(deploy)
}

/// The csikit crate's folder as an absolute path, checked to hold the `csikit` package.
fn csikit_dir(path: PathBuf) -> Result<PathBuf, String> {
    let manifest = path.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest)
        .map_err(|e| format!("--csikit-path: cannot read '{}': {e}", manifest.display()))?;
    if !text.lines().any(|l| l.trim() == "name = \"csikit\"") {
        return Err(format!(
            "--csikit-path: '{}' is not the csikit crate's manifest",
            manifest.display()
        ));
    }
    std::fs::canonicalize(&path).map_err(|e| format!("--csikit-path: '{}': {e}", path.display()))
}

/// `--out` may be missing or an empty folder; a non-empty one needs `--force`.
fn check_out_dir(out: &Path, force: bool) -> Result<(), String> {
    match std::fs::read_dir(out).map(|mut entries| entries.next().is_none()) {
        Ok(false) if !force => Err(format!(
            "'{}' exists and is not empty; choose another --out or pass --force",
            out.display()
        )),
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(_) if out.exists() => Err(format!("'{}' exists and is not a folder", out.display())),
        Err(e) => Err(format!("'{}': {e}", out.display())),
    }
}

/// Writes the files into a temporary sibling of `out`, then moves them into place: the folder
/// as a whole when `out` is missing or empty, else file by file (each rename replaces one file,
/// and files that are not the scaffold's stay).
fn write_scaffold(out: &Path, files: &BTreeMap<PathBuf, String>) -> anyhow::Result<()> {
    let tmp = crate::tree::stage(out, files)?;
    let empty = std::fs::read_dir(out).map(|mut entries| entries.next().is_none());
    match empty {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => crate::tree::swap_in(out, &tmp)?,
        Ok(true) => crate::tree::swap_in(out, &tmp)?,
        Ok(false) => crate::tree::move_files_in(out, &tmp, files.keys())?,
        Err(e) => return Err(e).with_context(|| format!("reading '{}'", out.display())),
    }
    Ok(())
}
