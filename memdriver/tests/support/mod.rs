//! Running the memdriver binary for a test: a temporary socket, stderr captured to a file, and
//! the process killed if the test fails before it stops it.

#![allow(dead_code, reason = "each test binary uses a different part")]

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
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
    /// Starts memdriver on `dir/csi.sock` with `env` set, and waits until it listens.
    pub fn start(dir: &Path, env: &[(&str, &str)]) -> Server {
        let socket = dir.join("csi.sock");
        let log = dir.join("memdriver.log");
        let mut command = Command::new(env!("CARGO_BIN_EXE_memdriver"));
        command
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

    fn wait_for_socket(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while !self.socket.exists() {
            if let Some(status) = self.exited() {
                panic!("memdriver exited with {status} before listening:\n{}", self.log_text());
            }
            assert!(
                Instant::now() < deadline,
                "memdriver did not create {} within 20 s",
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
