//! How to run the suite.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use csikit::runtime::secrets::Secrets;

/// How to run the suite.
#[derive(Debug, Clone)]
pub struct Config {
    /// The deadline of every call.
    pub timeout: Duration,
    /// Secrets to send, per kind of call (csi-sanity's secrets file: `CreateVolumeSecret`, ...).
    pub secrets: Secrets,
    /// The driver's log: no secret value the suite sent may appear in it.
    pub driver_log: Option<PathBuf>,
    /// Only cases whose name contains this.
    pub filter: Option<String>,
    /// Notes (a sentence that binds the sender, a SHOULD) count as failures.
    pub strict: bool,
    /// `parameters` for every CreateVolume (csi-sanity's `--csi.testvolumeparameters`).
    pub volume_parameters: HashMap<String, String>,
    /// Mutable parameters the plugin accepts, for CreateVolume and ControllerModifyVolume
    /// (csi-sanity's `--csi.testvolumemutableparameters`); none: the mutable-parameter cases
    /// that need an accepted one are skipped.
    pub mutable_parameters: HashMap<String, String>,
    /// Where the suite makes its staging and target folders (csi-sanity's `--csi.stagingdir`
    /// and `--csi.mountdir`); none: a temporary folder.
    pub staging_dir: Option<PathBuf>,
    /// See `staging_dir`.
    pub mount_dir: Option<PathBuf>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            timeout: Duration::from_secs(10),
            secrets: Secrets::default(),
            driver_log: None,
            filter: None,
            strict: false,
            volume_parameters: HashMap::new(),
            mutable_parameters: HashMap::new(),
            staging_dir: None,
            mount_dir: None,
        }
    }
}
