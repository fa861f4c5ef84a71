//! The endpoint rule, held once for every reader in this workspace's runtime: the server skeleton
//! (`CSI_ENDPOINT`) and the client channel read every row of `endpoint::FORMS` as the table says,
//! and refuse with the table's words. csi-conformance's `--endpoint` and csi-view's proxy hold
//! themselves to the same table with `check_reader` in their own tests.

use std::time::Duration;

use csikit::runtime::endpoint::{Endpoint, check_reader};
use csikit::server::ServeError;

#[test]
fn the_server_and_the_channel_read_every_form_alike() {
    // The server: `CSI_ENDPOINT` is parsed into the skeleton's `Endpoint` (the runtime's), and a
    // refusal reaches the user as a `ServeError` carrying the runtime's words.
    check_reader(|s| {
        s.parse::<csikit::server::Endpoint>().map_err(|e| ServeError::from(e).to_string())
    })
    .expect("the server agrees");

    // The channel, through its public entry point: a refused form is the runtime's error; an
    // accepted one is dialled (nothing listens at these sockets and ports, so the dial fails fast,
    // naming the endpoint as it was understood).
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("rt");
    check_reader(|s| {
        let dialled =
            runtime.block_on(csikit::channel::connect_with_timeout(s, Duration::from_secs(5)));
        match dialled {
            Ok(_) => s.parse::<Endpoint>().map_err(|e| format!("connected, yet {e}")),
            Err(e) => match e.bad_endpoint() {
                Some(_) => Err(e.to_string()),
                None => {
                    let shown = e.to_string();
                    let understood = shown
                        .strip_prefix("cannot connect to ")
                        .and_then(|rest| rest.split(": ").next())
                        .ok_or_else(|| format!("unexpected error {shown:?}"))?;
                    understood.parse::<Endpoint>().map_err(|e| e.to_string())
                }
            },
        }
    })
    .expect("the channel agrees");
}
