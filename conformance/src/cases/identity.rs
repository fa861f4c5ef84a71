//! Identity service cases.

use csikit::v1::{GetPluginInfoRequest, ProbeRequest};
use tonic::Code;

use crate::case::{Case, body};
use crate::report::Outcome;
use crate::sentence::Sentence;
use crate::suite::{Suite, ensure, expect, show};

pub(crate) const CASES: &[Case] = &[
    Case {
        name: "identity: GetPluginInfo names the plugin and its version",
        needs: &[],
        sentence: Sentence::must(
            "GetPluginInfo",
            "It MUST be 63 characters or less, beginning and ending with an alphanumeric character ([a-z0-9A-Z]) with dashes (-), dots (.), and alphanumerics between. This field is REQUIRED.",
        ),
        body: body!(plugin_info),
    },
    Case {
        name: "identity: Probe answers",
        needs: &[],
        sentence: Sentence::must("Probe", "A Plugin MUST implement this RPC call."),
        body: body!(probe),
    },
];

async fn plugin_info(s: &mut Suite) -> Outcome {
    let r = s.ask(GetPluginInfoRequest {}).await;
    let info = match r {
        Ok(info) => info,
        Err(e) => return expect(&Err::<(), _>(e), Code::Ok, "GetPluginInfo"),
    };
    ensure!(!info.name.is_empty(), "name is empty (REQUIRED)");
    ensure!(!info.vendor_version.is_empty(), "vendor_version is empty (REQUIRED)");
    let n = info.name.as_bytes();
    let edges_ok = n.first().is_some_and(u8::is_ascii_alphanumeric)
        && n.last().is_some_and(u8::is_ascii_alphanumeric);
    ensure!(
        n.len() <= 63
            && edges_ok
            && n.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'-' || *b == b'.'),
        "name '{}' is not 63 characters or less of alphanumerics, dashes and dots, alphanumeric at both ends",
        info.name
    );
    Outcome::Passed
}

async fn probe(s: &mut Suite) -> Outcome {
    let r = s.ask(ProbeRequest {}).await;
    ensure!(r.is_ok(), "Probe: {}", show(&r));
    Outcome::Passed
}
