//! Which endpoint a tool uses: the one its flag gives, else `CSI_ENDPOINT`; the one rule for the
//! server skeleton (no flag: `CSI_ENDPOINT` alone) and for every command that talks to a plugin,
//! whether it needs an endpoint ([`required`]) or can do without ([`optional`]). An error says
//! where the endpoint came from, as `--endpoint: endpoint 'x': ...` or `CSI_ENDPOINT: ...`.
//!
//! `CSI_ENDPOINT` set but empty counts as not set, as a shell's `CSI_ENDPOINT= cmd` means.

use std::ffi::OsString;
use std::fmt;

use super::{Endpoint, EndpointError};

/// The environment variable the spec names for a plugin's endpoint.
pub const CSI_ENDPOINT: &str = "CSI_ENDPOINT";

/// A tool's flag (or argument) that names an endpoint: its name as the user types it
/// (`--endpoint`, `ENDPOINT`), and its value when given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flag<'a> {
    /// The flag's name, for messages.
    pub name: &'static str,
    /// Its value, when given.
    pub value: Option<&'a str>,
}

/// Where an endpoint was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The tool's flag, by its name.
    Flag(&'static str),
    /// The `CSI_ENDPOINT` environment variable.
    Env,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Flag(name) => name,
            Self::Env => CSI_ENDPOINT,
        })
    }
}

/// An endpoint, as written and as read, with where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Given {
    /// The endpoint read.
    pub endpoint: Endpoint,
    /// As the user wrote it (what a tool dials and names in its messages).
    pub written: String,
    /// Where it came from.
    pub origin: Origin,
}

/// Why a tool has no endpoint to use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GivenError {
    /// Neither the flag nor `CSI_ENDPOINT` gives one (from [`required`] only). `flag`: the
    /// tool's flag, when it has one.
    Missing {
        /// The flag the user could have given.
        flag: Option<&'static str>,
    },
    /// The endpoint given does not read.
    Bad {
        /// Where it came from.
        origin: Origin,
        /// Why it does not read.
        error: EndpointError,
    },
}

impl fmt::Display for GivenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Missing { flag: Some(flag) } => write!(
                f,
                "no endpoint: give {flag} (unix:///path/to/csi.sock) or set {CSI_ENDPOINT}"
            ),
            Self::Missing { flag: None } => {
                write!(f, "{CSI_ENDPOINT} is not set; set it to unix:///path/to/csi.sock")
            }
            Self::Bad { origin, error } => write!(f, "{origin}: {error}"),
        }
    }
}

impl std::error::Error for GivenError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Bad { error, .. } => Some(error),
            Self::Missing { .. } => None,
        }
    }
}

/// The endpoint a tool uses, when it can do without one (`csi-view ui`): `flag`'s value when
/// given, else `CSI_ENDPOINT` when set and not empty, else none.
///
/// # Errors
///
/// When the endpoint found does not read (not UTF-8 included), naming where it came from.
pub fn optional(flag: Option<Flag<'_>>) -> Result<Option<Given>, GivenError> {
    choose(flag, std::env::var_os(CSI_ENDPOINT))
}

/// The endpoint a tool uses, when it needs one (a plugin, `csi-view call`): as [`optional`].
///
/// # Errors
///
/// As [`optional`], and [`GivenError::Missing`] when there is none.
pub fn required(flag: Option<Flag<'_>>) -> Result<Given, GivenError> {
    optional(flag)?.ok_or(GivenError::Missing { flag: flag.map(|f| f.name) })
}

/// The rule itself, with the environment's value handed in.
fn choose(flag: Option<Flag<'_>>, env: Option<OsString>) -> Result<Option<Given>, GivenError> {
    let (written, origin) = match (flag, env) {
        (Some(Flag { name, value: Some(value) }), _) => (value.to_owned(), Origin::Flag(name)),
        (_, Some(env)) if env.is_empty() => return Ok(None),
        (_, Some(env)) => match env.into_string() {
            Ok(value) => (value, Origin::Env),
            Err(_) => {
                return Err(GivenError::Bad {
                    origin: Origin::Env,
                    error: EndpointError::not_utf8(),
                });
            }
        },
        (_, None) => return Ok(None),
    };
    match written.parse::<Endpoint>() {
        Ok(endpoint) => Ok(Some(Given { endpoint, written, origin })),
        Err(error) => Err(GivenError::Bad { origin, error }),
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::ffi::OsStringExt;

    use super::*;

    const FLAG: &str = "--endpoint";

    fn flag(value: Option<&str>) -> Option<Flag<'_>> {
        Some(Flag { name: FLAG, value })
    }

    fn env(value: &str) -> Option<OsString> {
        Some(value.into())
    }

    fn shown(r: Result<Option<Given>, GivenError>) -> Result<Option<(String, String)>, String> {
        r.map(|g| g.map(|g| (g.endpoint.to_string(), g.origin.to_string())))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn the_flag_comes_first_then_csi_endpoint() {
        let both = choose(flag(Some("/a.sock")), env("unix:///b.sock"));
        assert_eq!(shown(both), Ok(Some(("unix:///a.sock".into(), FLAG.into()))));
        let env_only = choose(flag(None), env("unix:///b.sock"));
        assert_eq!(shown(env_only), Ok(Some(("unix:///b.sock".into(), CSI_ENDPOINT.into()))));
        // The server has no flag.
        let server = choose(None, env("unix:rel.sock"));
        assert_eq!(shown(server), Ok(Some(("unix:rel.sock".into(), CSI_ENDPOINT.into()))));
        // Written as given, for the tool to dial and name.
        let given = choose(flag(Some("/a.sock")), None).expect("reads").expect("given");
        assert_eq!(given.written, "/a.sock");
    }

    #[test]
    fn none_set_or_empty_is_none_and_required_says_what_to_give() {
        assert_eq!(choose(flag(None), None), Ok(None));
        assert_eq!(choose(flag(None), env("")), Ok(None));
        assert_eq!(choose(None, env("")), Ok(None));
        // An empty flag is given: the endpoint reader refuses it.
        assert!(choose(flag(Some("")), env("unix:///b.sock")).is_err());
        let missing = GivenError::Missing { flag: Some(FLAG) }.to_string();
        assert_eq!(
            missing,
            "no endpoint: give --endpoint (unix:///path/to/csi.sock) or set CSI_ENDPOINT"
        );
        let missing = GivenError::Missing { flag: None }.to_string();
        assert_eq!(missing, "CSI_ENDPOINT is not set; set it to unix:///path/to/csi.sock");
    }

    #[test]
    fn a_bad_endpoint_names_where_it_came_from() {
        let e = choose(flag(Some("http://x")), None).expect_err("refused").to_string();
        assert_eq!(
            e,
            "--endpoint: endpoint 'http://x': expected unix:///path/to/csi.sock, unix:relative/path.sock, an absolute socket path or tcp://host:port"
        );
        let e = choose(flag(None), env("unix://rel")).expect_err("refused").to_string();
        assert!(
            e.starts_with("CSI_ENDPOINT: endpoint 'unix://rel': a unix endpoint has no host"),
            "{e}"
        );
        let e = choose(None, Some(OsString::from_vec(vec![0xff]))).expect_err("refused");
        assert_eq!(e.to_string(), "CSI_ENDPOINT: endpoint '<not UTF-8>': not valid UTF-8");
    }

    #[test]
    fn every_form_reads_alike_from_the_flag_and_from_csi_endpoint() {
        let read = |r: Result<Option<Given>, GivenError>| match r {
            Ok(Some(g)) => Ok(g.endpoint),
            Ok(None) => Err("none".to_owned()),
            Err(e) => Err(e.to_string()),
        };
        super::super::check_reader(|s| read(choose(flag(Some(s)), None))).expect("the flag");
        // An empty CSI_ENDPOINT is not set (the table's empty row is for a flag given empty).
        super::super::check_reader(|s| {
            if s.is_empty() {
                read(choose(flag(Some(s)), None))
            } else {
                read(choose(None, env(s)))
            }
        })
        .expect("CSI_ENDPOINT");
    }
}
