//! `csikit deploy`: Kubernetes manifests derived from what a plugin says it is.
//!
//! The plugin is asked (`plugin::query`: GetPluginInfo and every service's capabilities) or its
//! capabilities are read from a file; `derive` decides, from the sidecar table (`table`,
//! `cli/data/sidecars.toml`), what runs where and why, as a `plan`; `objects` builds the
//! Kubernetes objects as typed values and serialises each once; `render` lays them out as a
//! kustomize folder, one object kind per file. `image` checks the image reference; `explain`
//! writes the table for the docs page. Nothing is written unless all of it succeeded, and then
//! all at once.

pub mod derive;
pub mod explain;
pub mod image;
pub mod objects;
pub mod plan;
pub mod plugin;
pub mod render;
pub mod table;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;

use derive::{DeriveError, Lifecycle, Options};
use plan::Mode;
use plugin::PluginFacts;
use table::Table;

/// Flags of `csikit deploy`.
#[derive(clap::Args, Debug)]
#[command(group(clap::ArgGroup::new("source").required(true).args(["endpoint", "capabilities"])))]
pub struct DeployArgs {
    /// The running plugin to ask: unix:///path/csi.sock, an absolute socket path, or
    /// tcp://host:port.
    #[arg(long)]
    endpoint: Option<String>,
    /// A capabilities file (what `deploy` writes as capabilities.toml) instead of a plugin.
    #[arg(long)]
    capabilities: Option<PathBuf>,
    /// The plugin's container image, e.g. registry.example.com/driver:1.0.
    #[arg(long)]
    image: String,
    /// The namespace of the pods, ServiceAccounts and Roles.
    #[arg(long, default_value = "default")]
    namespace: String,
    /// The folder to write (replaced whole when it holds an earlier `csikit deploy` output).
    #[arg(long, default_value = "deploy")]
    out: PathBuf,
    /// The Kubernetes release the manifests are for.
    #[arg(long, default_value = "1.34")]
    kubernetes: String,
    /// `split`: Controller service in a Deployment, Node service in a DaemonSet;
    /// `distributed`: external-provisioner on every node, for node-local storage.
    #[arg(long, default_value = "split", value_parser = ["split", "distributed"])]
    mode: String,
    /// The prefix of object names (default: the plugin name's first label).
    #[arg(long)]
    name: Option<String>,
    /// The kubelet's root folder on the nodes.
    #[arg(long, default_value = "/var/lib/kubelet")]
    kubelet_dir: String,
    /// The environment variable the plugin reads its node id from.
    #[arg(long, default_value = "NODE_ID")]
    node_id_env: String,
    /// Volume lifecycle modes the plugin serves (repeatable): persistent, ephemeral.
    #[arg(long = "lifecycle", value_parser = ["persistent", "ephemeral"])]
    lifecycle: Vec<String>,
    /// The CSIDriver's fsGroupPolicy: None, File, ReadWriteOnceWithFSType (default: from
    /// VOLUME_MOUNT_GROUP).
    #[arg(long)]
    fs_group_policy: Option<String>,
    /// The plugin mounts with an SELinux context (-o context): seLinuxMount.
    #[arg(long)]
    selinux_mount: bool,
    /// The plugin wants NodePublishVolume called again periodically: requiresRepublish.
    #[arg(long)]
    requires_republish: bool,
    /// The plugin serves raw block volumes (the kubelet publishes them below its plugins folder).
    #[arg(long)]
    block: bool,
    /// Replicas of the controller Deployment.
    #[arg(long, default_value_t = 1)]
    replicas: i32,
    /// Seconds to wait for the plugin's answers.
    #[arg(long, default_value_t = 10)]
    timeout: u64,
    /// Replace --out even when it holds files `csikit deploy` did not write.
    #[arg(long)]
    force: bool,
}

impl DeployArgs {
    fn options(&self) -> Options {
        let mut options = Options::new(&self.image);
        options.namespace.clone_from(&self.namespace);
        options.kubernetes.clone_from(&self.kubernetes);
        options.mode = if self.mode == "distributed" { Mode::Distributed } else { Mode::Split };
        options.prefix.clone_from(&self.name);
        options.kubelet_dir.clone_from(&self.kubelet_dir);
        options.node_id_env.clone_from(&self.node_id_env);
        if !self.lifecycle.is_empty() {
            options.lifecycle = self
                .lifecycle
                .iter()
                .map(
                    |l| if l == "ephemeral" { Lifecycle::Ephemeral } else { Lifecycle::Persistent },
                )
                .collect::<BTreeSet<_>>();
        }
        options.fs_group_policy.clone_from(&self.fs_group_policy);
        options.selinux_mount = self.selinux_mount;
        options.requires_republish = self.requires_republish;
        options.block = self.block;
        options.replicas = self.replicas;
        options
    }
}

/// Why no manifests could be derived.
#[derive(Debug, thiserror::Error)]
pub enum DeployError {
    /// The command line asks for something that cannot be (exit code 2).
    #[error("{0}")]
    Usage(String),
    /// The plugin or its description cannot be deployed, or a bug (exit code 1).
    #[error("{0}")]
    Input(String),
}

impl From<DeriveError> for DeployError {
    fn from(e: DeriveError) -> Self {
        match e {
            DeriveError::Kubernetes { .. } | DeriveError::Option(_) => {
                DeployError::Usage(e.to_string())
            }
            DeriveError::PluginName { .. } | DeriveError::Distributed(_) => {
                DeployError::Input(e.to_string())
            }
        }
    }
}

/// Every file of the kustomize folder for `facts`, and the warnings to show.
///
/// `source` says where the facts came from, for the files' headers.
///
/// # Errors
///
/// When the image is not an image reference, an option is refused, or the plugin cannot be
/// deployed as asked.
pub fn manifests(
    facts: &PluginFacts,
    options: &Options,
    source: &str,
) -> Result<(BTreeMap<PathBuf, String>, Vec<String>), DeployError> {
    image::check_image(&options.image).map_err(|why| {
        DeployError::Usage(format!("--image '{}' is not an image reference: {why}", options.image))
    })?;
    let table = Table::builtin().map_err(DeployError::Input)?;
    let plan = derive::derive(facts, options, &table)?;
    let docs = objects::build(&plan).map_err(|e| DeployError::Input(e.to_string()))?;
    let files = render::render(&plan, facts, &docs, source)
        .map_err(|e| DeployError::Input(e.to_string()))?;
    Ok((files, plan.warnings))
}

/// Runs `csikit deploy`: exit code 0 when the folder is written, 1 when the plugin cannot be
/// reached or deployed (or its file is bad), 2 for a bad command line. Nothing is written unless
/// everything succeeded.
///
/// # Errors
///
/// When the files cannot be written.
pub fn deploy(args: DeployArgs) -> anyhow::Result<ExitCode> {
    let options = args.options();
    // Everything the command line alone decides is checked before the plugin is asked.
    let early = image::check_image(&options.image)
        .map_err(|why| format!("--image '{}' is not an image reference: {why}", options.image))
        .and_then(|()| check_out(&args.out, args.force));
    if let Err(problem) = early {
        eprintln!("error: {problem}");
        return Ok(ExitCode::from(2));
    }
    let (facts, mut warnings, source) = match read_facts(&args) {
        Ok(read) => read,
        Err(problem) => {
            eprintln!("error: {problem}");
            return Ok(ExitCode::from(1));
        }
    };
    let (files, more) = match manifests(&facts, &options, &source) {
        Ok(done) => done,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(ExitCode::from(match e {
                DeployError::Usage(_) => 2,
                DeployError::Input(_) => 1,
            }));
        }
    };
    warnings.extend(more);
    write(&args.out, &files)?;
    for warning in &warnings {
        eprintln!("warning: {warning}");
    }
    eprintln!(
        "wrote {} files for {} {} to '{}'; apply them with kubectl apply -k {}",
        files.len(),
        facts.name,
        facts.vendor_version,
        args.out.display(),
        args.out.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// The plugin's facts, warnings about them, and where they came from.
fn read_facts(args: &DeployArgs) -> Result<(PluginFacts, Vec<String>, String), String> {
    match (&args.endpoint, &args.capabilities) {
        (_, Some(path)) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("reading '{}': {e}", path.display()))?;
            let facts = PluginFacts::from_toml(&path.display().to_string(), &text)
                .map_err(|e| e.to_string())?;
            let source = format!("the capabilities file {}", file_name(path));
            Ok((facts, Vec::new(), source))
        }
        (Some(endpoint), None) => {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| format!("starting the runtime: {e}"))?;
            let timeout = Duration::from_secs(args.timeout.max(1));
            let (facts, warnings) =
                runtime.block_on(plugin::query(endpoint, timeout)).map_err(|e| e.to_string())?;
            Ok((facts, warnings, "what the running plugin reported".to_owned()))
        }
        // clap requires one of the two.
        (None, None) => Err("give --endpoint or --capabilities".into()),
    }
}

fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into())
}

/// The first line of every kustomization.yaml `deploy` writes: how an earlier output is known.
const MARK: &str = "# The Kubernetes objects of the CSI plugin ";

/// `--out` may be missing, empty, or an earlier output of this command; anything else needs
/// `--force`.
fn check_out(out: &Path, force: bool) -> Result<(), String> {
    match std::fs::read_dir(out).map(|mut entries| entries.next().is_none()) {
        Ok(true) => Ok(()),
        Ok(false) if force => Ok(()),
        Ok(false) => {
            let ours = std::fs::read_to_string(out.join("kustomization.yaml"))
                .is_ok_and(|text| text.starts_with(MARK));
            if ours {
                Ok(())
            } else {
                Err(format!(
                    "'{}' holds files `csikit deploy` did not write; choose another --out or pass \
                     --force (which replaces the folder)",
                    out.display()
                ))
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(_) if out.exists() => Err(format!("'{}' exists and is not a folder", out.display())),
        Err(e) => Err(format!("'{}': {e}", out.display())),
    }
}

/// Writes the folder whole: staged beside it, then swapped in.
fn write(out: &Path, files: &BTreeMap<PathBuf, String>) -> anyhow::Result<()> {
    let tmp = crate::tree::stage(out, files)?;
    crate::tree::swap_in(out, &tmp).with_context(|| format!("writing '{}'", out.display()))
}
