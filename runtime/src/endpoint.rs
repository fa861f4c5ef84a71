//! Where a plugin listens: the one reader of `CSI_ENDPOINT` and every other endpoint a csikit
//! tool is given (the server skeleton, the client channel, csi-conformance's `--endpoint`, the
//! proxy's `--listen` and `--upstream`), so they all accept the same forms and refuse the rest with
//! the same words.
//!
//! The spec (section "CSI_ENDPOINT") names one form, `unix:///path/to/unix/socket.sock`, and points
//! at gRPC's naming document for the rest. gRPC writes a unix socket as `unix:path` (relative or
//! absolute) or `unix://absolute_path`; the sidecars (`--csi-address=/csi/csi.sock`) and
//! csi-sanity take a bare absolute path. The forms read here, each with why (the whole table,
//! with the refused forms and their messages, is [`FORMS`], which every reader is tested on):
//!
//! | form | reads as | why |
//! |---|---|---|
//! | `unix:///abs/csi.sock` | the socket `/abs/csi.sock` | the spec's form |
//! | `unix:/abs/csi.sock` | the socket `/abs/csi.sock` | gRPC's `unix:path`, absolute |
//! | `unix:rel/csi.sock` | the socket `rel/csi.sock`, relative to the working directory | gRPC's `unix:path`, relative |
//! | `/abs/csi.sock` | the socket `/abs/csi.sock` | what the sidecars and csi-sanity are given; a leading `/` cannot be a scheme |
//! | `tcp://host:port` | TCP | outside the spec ("Only UNIX Domain Sockets MAY be used"), for development; `[::1]:port` for IPv6 |
//! | `unix://rel/csi.sock` | refused | in a URI the part after `//` is the host: gRPC reads `rel` as an authority and refuses it; `unix:rel/csi.sock` or `unix:///abs/csi.sock` is what was meant |
//! | `rel/csi.sock`, `host:port` | refused | without a scheme a relative path cannot be told from a host name |
//! | `dns:`, `http:`, `unix-abstract:`, ... | refused | not a socket path or a TCP address this toolkit dials or binds |
//!
//! A unix path is taken literally (no percent-decoding), as gRPC's C core does.
//!
//! The spec adds "All UNIX endpoints SHALL end with `.sock`". That sentence binds whoever names the
//! endpoint (the Plugin Supervisor), and real deployments name sockets otherwise (the sidecars'
//! default `--csi-address` is `/run/csi/socket`); refusing such a path would stop a plugin, a
//! conformance run or a proxy for a name none of them chose. So it is read, and
//! [`Endpoint::spec_note`] says what the spec would have wanted, for the server to log.
//!
//! Which endpoint a tool uses, its flag's or `CSI_ENDPOINT`, is [`optional`] and [`required`]:
//! one rule for the server skeleton and every command that talks to a plugin.
//!
//! With feature `listen`, the pieces every process that listens on an endpoint needs, once:
//! [`bind_unix`] (replacing a stale socket file, never a live socket or a file that is not a
//! socket) and [`shutdown_signal`] (SIGTERM or SIGINT).

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

mod given;
#[cfg(feature = "listen")]
mod signal;
#[cfg(feature = "listen")]
mod socket;

/// Held by a test while it starts a process, and by a test while a listener it dropped must be
/// gone: a process forked in between holds the listener's descriptor until it execs, so a
/// probe connecting then would find the socket live.
#[cfg(test)]
static FORK_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

pub use given::{CSI_ENDPOINT, Flag, Given, GivenError, Origin, optional, required};
#[cfg(feature = "listen")]
pub use signal::{Signal, shutdown_signal};
#[cfg(feature = "listen")]
pub use socket::{BindError, bind_unix};

/// A parsed endpoint.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Endpoint {
    /// A unix socket at this path (absolute, or relative to the working directory).
    Unix(PathBuf),
    /// `host:port` over TCP (outside the spec, for development and tests).
    Tcp(String),
}

/// Why an endpoint was refused. Its text is the same whichever tool read the endpoint:
/// `endpoint 'unix://csi.sock': ...`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndpointError {
    endpoint: String,
    reason: &'static str,
}

impl EndpointError {
    /// `CSI_ENDPOINT` holds bytes that are not UTF-8.
    pub fn not_utf8() -> Self {
        Self { endpoint: "<not UTF-8>".to_owned(), reason: "not valid UTF-8" }
    }

    /// The endpoint as given.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// What is wrong with it.
    pub fn reason(&self) -> &'static str {
        self.reason
    }
}

impl fmt::Display for EndpointError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "endpoint '{}': {}", self.endpoint, self.reason)
    }
}

impl std::error::Error for EndpointError {}

/// The reasons, each written once (the [`FORMS`] table names them too).
const EMPTY: &str = "empty; expected unix:///path/to/csi.sock or tcp://host:port";
const UNIX_HOST: &str = "a unix endpoint has no host; write unix:///absolute/path.sock or \
                         unix:relative/path.sock";
const UNIX_EMPTY: &str = "the socket path is empty";
const UNIX_DIR: &str = "the socket path names a directory";
const TCP_FORM: &str = "a tcp endpoint is tcp://host:port with a port number";
const NO_SCHEME: &str = "expected unix:///path/to/csi.sock, unix:relative/path.sock, an \
                         absolute socket path or tcp://host:port";

impl FromStr for Endpoint {
    type Err = EndpointError;

    fn from_str(endpoint: &str) -> Result<Self, EndpointError> {
        read(endpoint).map_err(|reason| EndpointError { endpoint: endpoint.to_owned(), reason })
    }
}

fn read(endpoint: &str) -> Result<Endpoint, &'static str> {
    if endpoint.is_empty() {
        return Err(EMPTY);
    }
    if let Some(rest) = endpoint.strip_prefix("unix:") {
        let path = match rest.strip_prefix("//") {
            Some(abs) if abs.starts_with('/') => abs,
            Some("") => return Err(UNIX_EMPTY),
            Some(_) => return Err(UNIX_HOST),
            None => rest,
        };
        return unix_path(path);
    }
    if let Some(rest) = endpoint.strip_prefix("tcp://") {
        return match rest.rsplit_once(':') {
            Some((host, port))
                if !host.is_empty()
                    && !rest.contains('/')
                    && port.bytes().all(|b| b.is_ascii_digit())
                    && port.parse::<u16>().is_ok() =>
            {
                Ok(Endpoint::Tcp(rest.to_owned()))
            }
            _ => Err(TCP_FORM),
        };
    }
    if endpoint.starts_with('/') {
        return unix_path(endpoint);
    }
    Err(NO_SCHEME)
}

fn unix_path(path: &str) -> Result<Endpoint, &'static str> {
    if path.is_empty() {
        return Err(UNIX_EMPTY);
    }
    if path.ends_with('/') {
        return Err(UNIX_DIR);
    }
    Ok(Endpoint::Unix(PathBuf::from(path)))
}

impl fmt::Display for Endpoint {
    /// The endpoint as the spec writes it: `unix:///abs/path`, `unix:rel/path`, `tcp://host:port`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unix(path) if path.is_absolute() => write!(f, "unix://{}", path.display()),
            Self::Unix(path) => write!(f, "unix:{}", path.display()),
            Self::Tcp(addr) => write!(f, "tcp://{addr}"),
        }
    }
}

impl Endpoint {
    /// Where the spec would have wanted something else, though the endpoint is usable: a unix
    /// path without `.sock`, or TCP (see the module's documentation for why these are read).
    pub fn spec_note(&self) -> Option<&'static str> {
        match self {
            Self::Unix(path) if path.extension().is_some_and(|e| e == "sock") => None,
            Self::Unix(_) => Some("the spec says unix endpoints SHALL end with .sock"),
            Self::Tcp(_) => Some("the spec allows only unix sockets; tcp is for development"),
        }
    }

    /// The socket path of a unix endpoint.
    pub fn unix_path(&self) -> Option<&std::path::Path> {
        match self {
            Self::Unix(path) => Some(path),
            Self::Tcp(_) => None,
        }
    }
}

/// One row of [`FORMS`]: an endpoint as a user writes it, and how every reader must take it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Form {
    /// The endpoint as written.
    pub written: &'static str,
    /// `Ok`: accepted, and this is its [`Endpoint`]'s `Display`; `Err`: refused, for this reason
    /// (the error's text is `endpoint '<written>': <reason>`).
    pub reads_as: Result<&'static str, &'static str>,
}

const fn ok(written: &'static str, endpoint: &'static str) -> Form {
    Form { written, reads_as: Ok(endpoint) }
}

const fn refused(written: &'static str, reason: &'static str) -> Form {
    Form { written, reads_as: Err(reason) }
}

/// Every form this module decides, accepted and refused: the table [`check_reader`] holds each
/// endpoint reader to. A new form is a new row here.
pub const FORMS: &[Form] = &[
    // The spec's form, and gRPC's `unix:path`.
    ok("unix:///abs/csi.sock", "unix:///abs/csi.sock"),
    ok(
        "unix:///var/lib/kubelet/plugins/csi.example.com/csi.sock",
        "unix:///var/lib/kubelet/plugins/csi.example.com/csi.sock",
    ),
    ok("unix:/abs/csi.sock", "unix:///abs/csi.sock"),
    ok("unix:rel/csi.sock", "unix:rel/csi.sock"),
    ok("unix:csi.sock", "unix:csi.sock"),
    // Without `.sock`: read, with a note (see the module's documentation).
    ok("unix:/abs/x", "unix:///abs/x"),
    ok("unix:///run/csi/socket", "unix:///run/csi/socket"),
    // A bare absolute path, as the sidecars and csi-sanity take it.
    ok("/abs/csi.sock", "unix:///abs/csi.sock"),
    // A path is taken literally.
    ok("unix:///tmp/dir with spaces/csi.sock", "unix:///tmp/dir with spaces/csi.sock"),
    ok("unix:///tmp/a%20b.sock", "unix:///tmp/a%20b.sock"),
    // TCP, for development.
    ok("tcp://localhost:1", "tcp://localhost:1"),
    ok("tcp://127.0.0.1:1", "tcp://127.0.0.1:1"),
    ok("tcp://[::1]:1", "tcp://[::1]:1"),
    // Refused.
    refused("", EMPTY),
    refused("unix://rel", UNIX_HOST),
    refused("unix://host/csi.sock", UNIX_HOST),
    refused("unix://", UNIX_EMPTY),
    refused("unix:", UNIX_EMPTY),
    refused("unix:///", UNIX_DIR),
    refused("unix:///abs/dir/", UNIX_DIR),
    refused("tcp://127.0.0.1", TCP_FORM),
    refused("tcp://:10000", TCP_FORM),
    refused("tcp://h:99999", TCP_FORM),
    refused("tcp://h:+1", TCP_FORM),
    refused("tcp://h:1/path", TCP_FORM),
    refused("tcp://", TCP_FORM),
    refused("csi.sock", NO_SCHEME),
    refused("rel/csi.sock", NO_SCHEME),
    refused("127.0.0.1:10000", NO_SCHEME),
    refused("dns:///plugin:10000", NO_SCHEME),
    refused("http://plugin:10000", NO_SCHEME),
    refused("unix-abstract:csi", NO_SCHEME),
    refused("UNIX:///abs/csi.sock", NO_SCHEME),
];

/// Holds an endpoint reader to [`FORMS`]: `read` takes an endpoint as written and returns the
/// [`Endpoint`] it understood, or its error message, which must contain this module's text for
/// that endpoint (a tool may add context around it, as `--endpoint: ...`).
///
/// For the tests of every tool that reads endpoints: they call this with their own entry point.
///
/// # Errors
///
/// Every row the reader disagrees on, one line each.
pub fn check_reader(mut read: impl FnMut(&str) -> Result<Endpoint, String>) -> Result<(), String> {
    let mut wrong = Vec::new();
    for form in FORMS {
        let got = read(form.written);
        match (form.reads_as, &got) {
            (Ok(want), Ok(endpoint)) if endpoint.to_string() == want => {}
            (Err(reason), Err(message)) => {
                let want = EndpointError { endpoint: form.written.to_owned(), reason }.to_string();
                if !message.contains(&want) {
                    wrong.push(format!("'{}': said {message:?}, not {want:?}", form.written));
                }
            }
            (want, got) => wrong.push(format!("'{}': read as {got:?}, not {want:?}", form.written)),
        }
    }
    if wrong.is_empty() { Ok(()) } else { Err(wrong.join("\n")) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parser_reads_every_form_as_its_row_says() {
        check_reader(|s| s.parse::<Endpoint>().map_err(|e| e.to_string())).expect("agrees");
    }

    #[test]
    fn a_reader_that_disagrees_is_named_row_by_row() {
        // The checker itself can fail: a reader accepting everything as one socket.
        let e = check_reader(|_| Ok(Endpoint::Unix("/x.sock".into()))).expect_err("disagrees");
        assert!(e.contains("'unix://rel': read as Ok(Unix(\"/x.sock\"))"), "{e}");
        // And one refusing with its own words.
        let e = check_reader(|s| {
            s.parse::<Endpoint>().map_err(|_| "no".to_owned()).and_then(|p| match p {
                Endpoint::Tcp(_) => Err("tcp is not proxied".into()),
                p @ Endpoint::Unix(_) => Ok(p),
            })
        })
        .expect_err("disagrees");
        assert!(e.contains("'tcp://[::1]:1': read as Err(\"tcp is not proxied\")"), "{e}");
        assert!(e.contains("'unix://rel': said \"no\""), "{e}");
    }

    #[test]
    fn the_error_names_the_endpoint_and_the_reason() {
        let e = "unix://rel".parse::<Endpoint>().expect_err("refused");
        assert_eq!(
            e.to_string(),
            "endpoint 'unix://rel': a unix endpoint has no host; write \
             unix:///absolute/path.sock or unix:relative/path.sock"
        );
        assert_eq!(e.endpoint(), "unix://rel");
    }

    #[test]
    fn spec_notes() {
        let note = |s: &str| s.parse::<Endpoint>().expect("reads").spec_note();
        assert_eq!(note("unix:///csi/csi.sock"), None);
        assert!(note("unix:///run/csi/socket").is_some_and(|n| n.contains(".sock")));
        assert!(note("tcp://127.0.0.1:1").is_some_and(|n| n.contains("tcp")));
    }
}
