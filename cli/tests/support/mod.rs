//! What the cli's tests share: the `csikit` binary, scratch folders, a plugin served in process
//! on a unix socket, and kubernetes-validate.

#![allow(dead_code, reason = "each test file uses a part")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs the `csikit` binary.
pub fn csikit(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_csikit")).args(args).output().expect("run csikit")
}

/// A fresh folder under the target's temporary folder.
pub fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// A short folder for sockets (their paths are limited to about 100 bytes).
pub fn socket_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("csikit-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("socket dir");
    dir
}

/// The names in a folder, sorted.
pub fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("readable dir")
        .map(|e| e.expect("dir entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A plugin served on a unix socket by a runtime of its own, until dropped.
pub struct Served {
    /// The socket.
    pub socket: PathBuf,
    runtime: Option<tokio::runtime::Runtime>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Served {
    /// Serves `builder` at `socket`; returns once the socket answers.
    pub fn start(builder: csikit::server::Builder, socket: PathBuf) -> Served {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime");
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let endpoint = csikit::server::Endpoint::Unix(socket.clone());
        let server = runtime.block_on(builder.build()).expect("the plugin builds");
        runtime.spawn(async move {
            let _ = server
                .serve(&endpoint, async {
                    let _ = stopped.await;
                })
                .await;
        });
        // The socket exists once the server has bound it; connecting proves it listens.
        runtime.block_on(async {
            for _ in 0..500 {
                if tokio::net::UnixStream::connect(&socket).await.is_ok() {
                    return;
                }
                tokio::task::yield_now().await;
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            }
            panic!("nothing listens at '{}'", socket.display());
        });
        Served { socket, runtime: Some(runtime), stop: Some(stop) }
    }

    /// The endpoint, as `--endpoint` takes it.
    pub fn endpoint(&self) -> String {
        format!("unix://{}", self.socket.display())
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_timeout(std::time::Duration::from_secs(5));
        }
    }
}

/// memdriver as its binary serves it, with the GroupController service.
pub fn memdriver(socket: PathBuf) -> Served {
    let config = memdriver::Config { group_controller: true, ..memdriver::Config::default() };
    let driver = std::sync::Arc::new(memdriver::Driver::new(config));
    Served::start(memdriver::builder(driver), socket)
}

/// kubernetes-validate's verdict on every `.yaml` of `dir` against each Kubernetes release, or
/// `None` (after a loud skip) when it is not installed.
///
/// Returns the lines that are errors, per release.
pub fn kubernetes_validate(dir: &Path, releases: &[&str]) -> Option<Vec<(String, Vec<String>)>> {
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_owned());
    let probe = Command::new(&python).args(["-c", "import kubernetes_validate"]).output();
    if !probe.is_ok_and(|o| o.status.success()) {
        csikit_spec::skip_missing(
            "python3 with kubernetes-validate is missing; pip install -r .ci/requirements.txt",
        );
        return None;
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("readable dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    let mut verdicts = Vec::new();
    for release in releases {
        // kubernetes-validate names schemas by full version: 1.34 is 1.34.0.
        let out = Command::new(&python)
            .args(["-m", "kubernetes_validate", "--strict", "-k", &format!("{release}.0")])
            .args(&files)
            .output()
            .expect("run kubernetes-validate");
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        let errors: Vec<String> =
            text.lines().filter(|l| l.starts_with("ERROR")).map(str::to_owned).collect();
        // It says INFO for each object it checked: make sure it read them.
        assert!(
            text.lines().any(|l| l.starts_with("INFO")),
            "kubernetes-validate checked nothing in '{}':\n{text}",
            dir.display()
        );
        assert_eq!(
            out.status.success(),
            errors.is_empty(),
            "exit status and errors disagree:\n{text}"
        );
        verdicts.push(((*release).to_owned(), errors));
    }
    Some(verdicts)
}

/// The YAML of every file of a folder with the comment lines left out: what two derivations
/// compare on when their headers name different sources.
pub fn objects_of(dir: &Path) -> Vec<(String, String)> {
    listing(dir)
        .into_iter()
        .filter(|name| name.ends_with(".yaml"))
        .map(|name| {
            let text = std::fs::read_to_string(dir.join(&name)).expect("read");
            let body: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
            (name, body.join("\n"))
        })
        .collect()
}
