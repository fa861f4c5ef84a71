//! Running the memdriver binary for a test: a temporary socket, stderr captured to a file, and
//! the process killed if the test fails before it stops it; and the Python grpcio stubs the
//! interop tests (here and csi-view's `call` test, which includes this module) are built from.

#![allow(dead_code, reason = "each test binary uses a different part")]

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};

use csikit::facts::Presence;
use std::time::{Duration, Instant};

/// A running memdriver.
pub struct Server {
    child: Child,
    /// The unix socket it serves on.
    pub socket: PathBuf,
    /// Its captured stderr.
    pub log: PathBuf,
}

impl Server {
    /// Starts memdriver on `dir/csi.sock` with `env` set, in `dir` (so relative paths a CO
    /// sends resolve there), and waits until it listens.
    pub fn start(dir: &Path, env: &[(&str, &str)]) -> Server {
        let socket = dir.join("csi.sock");
        let log = dir.join("memdriver.log");
        // `option_env!`: csi-view's tests include this module too (for `grpcio_stubs`), and the
        // memdriver binary is only known to memdriver's own tests.
        let Some(binary) = option_env!("CARGO_BIN_EXE_memdriver") else {
            panic!("Server::start runs the memdriver binary: only memdriver's own tests have it");
        };
        let mut command = Command::new(binary);
        command
            .current_dir(dir)
            .env("CSI_ENDPOINT", format!("unix://{}", socket.display()))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(File::create(&log).expect("log file"));
        for (key, value) in env {
            command.env(key, value);
        }
        let child = command.spawn().expect("start memdriver");
        let mut server = Server { child, socket, log };
        server.wait_for_socket();
        server
    }

    /// Waits until the socket takes a connection: its file exists from bind(2) on, but a
    /// connect before listen(2) is refused (a plugin descheduled in between, on a loaded
    /// machine, failed the suite's first call 1 run in 4).
    fn wait_for_socket(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::os::unix::net::UnixStream::connect(&self.socket).is_err() {
            if let Some(status) = self.exited() {
                panic!("memdriver exited with {status} before listening:\n{}", self.log_text());
            }
            assert!(
                Instant::now() < deadline,
                "memdriver did not listen on {} within 20 s",
                self.socket.display()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The exit status, if it has exited.
    pub fn exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().expect("wait for memdriver")
    }

    /// Everything it has logged so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Sends SIGTERM and waits for the exit status.
    pub fn terminate(&mut self, within: Duration) -> ExitStatus {
        let pid = self.pid().to_string();
        let kill = Command::new("kill").args(["-TERM", &pid]).status().expect("run kill");
        assert!(kill.success(), "kill -TERM {pid} failed");
        let deadline = Instant::now() + within;
        loop {
            if let Some(status) = self.exited() {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "memdriver did not stop within {within:?} of SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// A line of `/proc/<pid>/status` in KiB, e.g. `VmRSS`.
    pub fn status_kib(&self, field: &str) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid()))
            .expect("read /proc status");
        status
            .lines()
            .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or_else(|| panic!("no {field} in /proc/{}/status", self.pid()))
    }

    /// How many file descriptors it holds open.
    pub fn open_fds(&self) -> usize {
        std::fs::read_dir(format!("/proc/{}/fd", self.pid()))
            .map(|d| d.count())
            .expect("read /proc fd")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.exited().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The last `lines` lines of `text`.
pub fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

pub fn python() -> Command {
    Command::new(std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_owned()))
}

/// A value nobody else would log: 128 random bits from the kernel, in hex.
pub fn random_token(prefix: &str) -> String {
    let mut bytes = [0u8; 16];
    File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .expect("read /dev/urandom");
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("{prefix}{hex}")
}

/// Per message, its REQUIRED fields and required oneofs, from csikit's spec-facts table (which
/// the generator derived from the spec's comments), as JSON for the Python side.
pub fn required_fields_json() -> String {
    let mut out = serde_json::Map::new();
    for message in csikit::v1::facts::FACTS.messages.iter() {
        let fields: Vec<&str> = message
            .fields
            .iter()
            .filter(|f| f.presence == Presence::Required)
            .map(|f| &*f.name)
            .collect();
        let oneofs: Vec<&str> =
            message.oneofs.iter().filter(|o| o.required).map(|o| &*o.name).collect();
        if !fields.is_empty() || !oneofs.is_empty() {
            out.insert(
                message.full_name.to_string(),
                serde_json::json!({ "fields": fields, "oneofs": oneofs }),
            );
        }
    }
    serde_json::Value::Object(out).to_string()
}

/// Python stubs built by grpcio-tools from the corpus proto of the release csikit speaks
/// (`csikit::SPEC_RELEASE`) in `dir/stubs`; `None` (after a loud skip) when the corpus or the
/// Python packages are missing.
pub fn grpcio_stubs(dir: &Path) -> Option<PathBuf> {
    grpcio_stubs_of(dir, csikit::SPEC_RELEASE)
}

/// [`grpcio_stubs`] from the corpus proto of `release` (`v1.13.0` for the health RPCs).
pub fn grpcio_stubs_of(dir: &Path, release: &str) -> Option<PathBuf> {
    let corpus = csikit_spec::corpus_or_skip()?;
    let probe = python().args(["-c", "import grpc, grpc_tools.protoc, google.protobuf"]).output();
    if !probe.is_ok_and(|o| o.status.success()) {
        csikit_spec::skip_missing(
            "python3 with grpcio, grpcio-tools and protobuf is missing; pip install -r .ci/requirements.txt",
        );
        return None;
    }
    let proto_dir = corpus.join("csi-spec").join(release);
    let stubs = dir.join("stubs");
    std::fs::create_dir_all(&stubs).expect("stubs dir");
    // Stubs straight from the corpus proto; grpc_tools adds its bundled well-known types.
    let out = python()
        .args(["-m", "grpc_tools.protoc"])
        .arg(format!("-I{}", proto_dir.display()))
        .arg(format!("--python_out={}", stubs.display()))
        .arg(format!("--grpc_python_out={}", stubs.display()))
        .arg("csi.proto")
        .output()
        .expect("run grpc_tools.protoc");
    assert!(
        out.status.success(),
        "grpc_tools.protoc failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(stubs)
}

/// What `interop.py` drives memdriver with: the REQUIRED-fields table it checks, a node id, and a
/// required secret (and an extra one) nobody else would log.
pub struct Lifecycle {
    /// `required.json`, from [`required_fields_json`].
    pub required: PathBuf,
    /// The node id memdriver is started with.
    pub node_id: &'static str,
    /// The secret's key.
    pub secret_key: &'static str,
    /// The secret memdriver requires.
    pub secret_value: String,
    /// A secret sent beside it.
    pub extra_secret: String,
}

impl Lifecycle {
    /// Writes `dir/required.json` and draws the secrets.
    pub fn new(dir: &Path, node_id: &'static str) -> Self {
        let required = dir.join("required.json");
        std::fs::write(&required, required_fields_json()).expect("write required.json");
        Self {
            required,
            node_id,
            secret_key: "memdriver-key",
            secret_value: random_token("s3cr3t-"),
            extra_secret: random_token("x7ra-"),
        }
    }

    /// `MEMDRIVER_REQUIRE_SECRET`'s value.
    pub fn require(&self) -> String {
        format!("{}={}", self.secret_key, self.secret_value)
    }

    /// `interop.py` against `socket`, with the grpcio `stubs`, its scratch under `dir`.
    pub fn script(&self, stubs: &Path, socket: &Path, dir: &Path) -> Command {
        let mut c = python();
        c.arg(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/interop.py"))
            .arg(stubs)
            .arg(socket)
            .arg(&self.required)
            .arg(self.node_id)
            .env("MEMDRIVER_TEST_SECRET_KEY", self.secret_key)
            .env("MEMDRIVER_TEST_SECRET_VALUE", &self.secret_value)
            .env("MEMDRIVER_TEST_EXTRA_SECRET", &self.extra_secret)
            .env("MEMDRIVER_TEST_DIR", dir.join("kubelet"));
        c
    }
}
