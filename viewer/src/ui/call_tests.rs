//! The page's call API through its route table: the method list, an empty request, edits (a
//! message field, a oneof member, list elements, map entries, enums), a request that breaks a
//! rule refused with nothing sent, a call that succeeds and one answered NOT_FOUND, against
//! memdriver served in the test behind a counter of the calls that reach it (the skeleton's own
//! validation off, so a request the page let through would be counted), and no secret value in
//! any answer.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use csikit::v1::server::Controller;
use csikit::v1::*;
use http::Method;
use serde_json::{Value as Json, json};
use tonic::{Request, Response, Status};

use super::tests::strings;
use super::{Options, State, routes};
use csi_view_core::schema::Schema;

const SECRET: &str = "hunter2-on-the-page";

/// memdriver's Controller, counting the calls that reach it.
struct Counted {
    driver: Arc<memdriver::Driver>,
    calls: Arc<AtomicUsize>,
}

#[csikit::csi_service]
impl Controller for Counted {
    async fn create_volume(
        &self,
        request: Request<CreateVolumeRequest>,
    ) -> Result<Response<CreateVolumeResponse>, Status> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.driver.create_volume(request.into_inner()).await.map(Response::new)
    }

    async fn controller_publish_volume(
        &self,
        request: Request<ControllerPublishVolumeRequest>,
    ) -> Result<Response<ControllerPublishVolumeResponse>, Status> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.driver.controller_publish_volume(request.into_inner()).map(Response::new)
    }
}

/// Serves memdriver (every request must carry `password: SECRET`) at `socket`; the count of
/// calls that reached it.
async fn serve_plugin(socket: &Path) -> Arc<AtomicUsize> {
    let config = memdriver::Config {
        node_id: "node-1".into(),
        required_secret: Some(("password".into(), SECRET.into())),
        ..memdriver::Config::default()
    };
    let calls = Arc::new(AtomicUsize::new(0));
    let plugin = Counted { driver: Arc::new(memdriver::Driver::new(config)), calls: calls.clone() };
    let server = csikit::server::Builder::new("ui-test.csikit.dev", "1")
        .layers(csikit::server::Layers {
            validate_requests: false,
            tracing: false,
            ..csikit::server::Layers::default()
        })
        .controller(plugin)
        .build()
        .await
        .expect("builds");
    let endpoint = csikit::server::Endpoint::Unix(socket.to_owned());
    tokio::spawn(async move {
        let _ = server.serve(&endpoint, std::future::pending::<()>()).await;
    });
    for _ in 0..500 {
        if tokio::net::UnixStream::connect(socket).await.is_ok() {
            return calls;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("memdriver does not listen on {}", socket.display());
}

fn state(endpoint: Option<String>) -> State {
    state_with_timeout(endpoint, Duration::from_secs(5))
}

fn state_with_timeout(endpoint: Option<String>, timeout: Duration) -> State {
    let schema = Schema::builtin().expect("the built-in schema");
    let options = Options { endpoint, timeout, ..Options::default() };
    State::new(schema, Vec::new(), &options).expect("a state")
}

/// Every answer the test has seen, to look for secrets in.
#[derive(Default)]
struct Seen(Vec<String>);

impl Seen {
    async fn call(&mut self, state: &State, method: Method, route: &str, body: Json) -> Json {
        let answer = routes::route(state, &method, route, &HashMap::new(), &body)
            .await
            .unwrap_or_else(|| panic!("no route {route}"));
        let json = match answer {
            Ok(j) => j,
            Err(e) => json!({"error": format!("{e:#}")}),
        };
        self.0.push(json.to_string());
        json
    }

    async fn open(&mut self, state: &State, method: &str) -> Json {
        self.call(state, Method::POST, "api/call/open", json!({"method": method})).await
    }

    async fn edit(&mut self, state: &State, body: Json) -> Json {
        let answer = self.call(state, Method::POST, "api/call/edit", body.clone()).await;
        assert!(answer.get("error").is_none(), "{body}: {answer}");
        answer
    }
}

fn node<'a>(fields: &'a Json, name: &str) -> &'a Json {
    fields
        .as_array()
        .and_then(|f| f.iter().find(|f| f["name"] == name || f["oneof"] == name))
        .unwrap_or_else(|| panic!("no field {name} in {fields}"))
}

fn violated(tree: &Json) -> Vec<&str> {
    strings(&tree["violations"], "path")
}

/// One change to a request: op (`set`, `add`, `remove`), path, value (a map key for `add`).
type Edit = (&'static str, String, &'static str);

/// Opens `method` and changes its request with each of `edits`; the last tree.
async fn fill(seen: &mut Seen, state: &State, method: &str, edits: &[Edit]) -> Json {
    let mut tree = seen.open(state, method).await;
    for (op, path, value) in edits {
        let body = match *op {
            "set" => json!({"op": "set", "path": path, "value": value}),
            "add" if !value.is_empty() => json!({"op": "add", "path": path, "key": value}),
            _ => json!({"op": op, "path": path}),
        };
        tree = seen.edit(state, body).await;
    }
    tree
}

/// A capability with a mount access type and SINGLE_NODE_WRITER, at `at`.
fn capability(at: &str) -> Vec<Edit> {
    vec![
        ("add", format!("{at}.mount"), ""),
        ("add", format!("{at}.access_mode"), ""),
        ("set", format!("{at}.access_mode.mode"), "SINGLE_NODE_WRITER"),
    ]
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime")
}

#[test]
fn methods_are_listed_by_service_and_without_an_endpoint_sending_says_why() {
    runtime().block_on(async {
        let state = state(None);
        let mut seen = Seen::default();
        let list = seen.call(&state, Method::GET, "api/methods", Json::Null).await;
        assert_eq!(list["endpoint"], Json::Null);
        assert_eq!(list["reason"], super::call::NO_PLUGIN);
        let services = list["services"].as_array().expect("services");
        let controller = services
            .iter()
            .find(|s| s["name"] == "csi.v1.Controller")
            .expect("the Controller service");
        let create = controller["methods"]
            .as_array()
            .expect("methods")
            .iter()
            .find(|m| m["name"] == "CreateVolume")
            .expect("CreateVolume");
        assert_eq!(create["path"], "/csi.v1.Controller/CreateVolume");
        assert_eq!(create["input"], "csi.v1.CreateVolumeRequest");
        // Every unary RPC of every service the schema has, streaming ones left out, each once:
        // the same set csikit's generated facts tables list (a second source).
        let schema = Schema::builtin().expect("schema");
        let mut paths: Vec<&str> = services
            .iter()
            .flat_map(|s| s["methods"].as_array().expect("methods"))
            .filter_map(|m| m["path"].as_str())
            .collect();
        let listed = paths.len();
        paths.sort_unstable();
        paths.dedup();
        assert_eq!(paths.len(), listed, "a method listed twice");
        let mut expected: Vec<String> = schema
            .facts_tables()
            .flat_map(|p| p.methods.iter())
            .map(|m| m.path.to_string())
            .filter(|p| {
                schema
                    .find_method(p)
                    .is_some_and(|m| !m.is_server_streaming() && !m.is_client_streaming())
            })
            .collect();
        expected.sort_unstable();
        expected.dedup();
        assert_eq!(paths, expected);
        // Grouped: each service once, its methods together.
        let names: Vec<&str> = services.iter().filter_map(|s| s["name"].as_str()).collect();
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "{names:?}");
        assert!(!paths.iter().any(|p| p.ends_with("/GetMetadataAllocated")), "streaming");
        assert!(paths.iter().any(|p| p.starts_with("/replication.")), "csi-addons too");

        // A request can still be composed; sending it says why it cannot be sent.
        fill(&mut seen, &state, "/csi.v1.Identity/GetPluginInfo", &[]).await;
        let sent = seen.call(&state, Method::POST, "api/call/send", Json::Null).await;
        assert_eq!(sent["error"], super::call::NO_PLUGIN, "{sent}");
        let unknown = seen.open(&state, "/x.Y/Z").await;
        assert!(unknown["error"].as_str().is_some_and(|e| e.contains("'/x.Y/Z'")), "{unknown}");
    });
}

#[test]
fn an_empty_request_shows_every_field_and_edits_build_it() {
    runtime().block_on(async {
        let state = state(None);
        let mut seen = Seen::default();
        let tree = seen.open(&state, "/csi.v1.Controller/CreateVolume").await;
        assert_eq!(tree["type"], "csi.v1.CreateVolumeRequest");
        assert_eq!(tree["method"]["name"], "CreateVolume");
        // Every field is there: the REQUIRED ones missing, the others unset.
        assert_eq!(
            strings(&tree["fields"], "name"),
            [
                "name",
                "capacity_range",
                "volume_capabilities",
                "parameters",
                "secrets",
                "volume_content_source",
                "accessibility_requirements",
                "mutable_parameters"
            ]
        );
        assert_eq!(node(&tree["fields"], "name")["missing"], true);
        assert_eq!(node(&tree["fields"], "volume_capabilities")["missing"], true);
        assert_eq!(node(&tree["fields"], "volume_capabilities")["label"], "repeated");
        assert_eq!(node(&tree["fields"], "capacity_range")["unset"], true);
        assert_eq!(node(&tree["fields"], "secrets")["label"], "map");
        assert_eq!(node(&tree["fields"], "secrets")["secret"], true);
        assert_eq!(violated(&tree), ["name", "volume_capabilities"]);

        // A message field set, a scalar in it; an element added, a oneof member chosen, an enum.
        seen.edit(&state, json!({"op": "set", "path": "name", "value": "pvc-1"})).await;
        seen.edit(&state, json!({"op": "add", "path": "volume_capabilities"})).await;
        let tree = seen.edit(&state, json!({"op": "add", "path": "capacity_range"})).await;
        let range = &node(&tree["fields"], "capacity_range")["fields"];
        assert_eq!(node(range, "required_bytes")["unset"], true, "{range}");
        assert_eq!(node(range, "required_bytes")["editable"], true);
        let caps = node(&tree["fields"], "volume_capabilities");
        let access_type = node(&caps["items"][0]["fields"], "access_type");
        assert_eq!(access_type["members"], json!(["block", "mount"]));
        assert_eq!(access_type["chosen"], Json::Null);
        assert_eq!(access_type["missing"], true, "a REQUIRED oneof unset");
        assert!(violated(&tree).contains(&"volume_capabilities[0].access_type"));
        seen.edit(&state, json!({"op": "add", "path": "volume_capabilities[0].mount"})).await;
        seen.edit(&state, json!({"op": "add", "path": "volume_capabilities[0].access_mode"})).await;
        let mode = "volume_capabilities[0].access_mode.mode";
        let tree = seen
            .edit(&state, json!({"op": "set", "path": mode, "value": "MULTI_NODE_MULTI_WRITER"}))
            .await;
        assert_eq!(violated(&tree), Vec::<&str>::new(), "{tree}");
        let cap = &node(&tree["fields"], "volume_capabilities")["items"][0]["fields"];
        assert_eq!(node(cap, "access_type")["chosen"], "mount");
        assert_eq!(node(cap, "access_type")["field"]["name"], "mount");
        let mode_node = node(&node(cap, "access_mode")["fields"], "mode");
        assert_eq!(mode_node["value"], "MULTI_NODE_MULTI_WRITER");
        assert!(
            mode_node["enum"].as_array().is_some_and(|v| v.contains(&json!("SINGLE_NODE_WRITER")))
        );
        // Choosing the other member clears the first.
        let tree =
            seen.edit(&state, json!({"op": "add", "path": "volume_capabilities[0].block"})).await;
        let cap = &node(&tree["fields"], "volume_capabilities")["items"][0]["fields"];
        assert_eq!(node(cap, "access_type")["chosen"], "block");
        // Map entries: added by key, set, removed; elements removed.
        seen.edit(&state, json!({"op": "add", "path": "parameters", "key": "type"})).await;
        let tree = seen
            .edit(&state, json!({"op": "set", "path": "parameters[\"type\"]", "value": "fast"}))
            .await;
        assert_eq!(node(&tree["fields"], "parameters")["entries"][0]["key"], "\"type\"");
        assert_eq!(node(&tree["fields"], "parameters")["entries"][0]["value"], "fast");
        let tree = seen.edit(&state, json!({"op": "remove", "path": "parameters[\"type\"]"})).await;
        assert_eq!(node(&tree["fields"], "parameters")["unset"], true);
        seen.edit(&state, json!({"op": "add", "path": "volume_capabilities"})).await;
        let tree =
            seen.edit(&state, json!({"op": "remove", "path": "volume_capabilities[0]"})).await;
        let items = &node(&tree["fields"], "volume_capabilities")["items"];
        assert_eq!(items.as_array().map(Vec::len), Some(1));
        let tree = seen.edit(&state, json!({"op": "remove", "path": "capacity_range"})).await;
        assert_eq!(node(&tree["fields"], "capacity_range")["unset"], true);

        // A bad edit is an error and leaves the request as it was.
        for bad in [
            json!({"op": "set", "path": "capacity_range.required_bytes", "value": "lots"}),
            json!({"op": "set", "path": "nope", "value": "1"}),
            json!({"op": "set", "path": "volume_capabilities", "value": "1"}),
            json!({"op": "remove", "path": "volume_capabilities[7]"}),
            json!({"op": "add", "path": "secrets"}),
            json!({"op": "jump", "path": "name"}),
        ] {
            let answer = seen.call(&state, Method::POST, "api/call/edit", bad.clone()).await;
            assert!(answer["error"].is_string(), "{bad}: {answer}");
        }
        let tree = seen.call(&state, Method::GET, "api/call/request", Json::Null).await;
        assert_eq!(node(&tree["fields"], "name")["value"], "pvc-1");
        assert_eq!(node(&tree["fields"], "capacity_range")["unset"], true);
        // The request of each method is kept while another is open; reset empties it.
        seen.open(&state, "/csi.v1.Node/NodeGetInfo").await;
        let tree = seen.open(&state, "/csi.v1.Controller/CreateVolume").await;
        assert_eq!(node(&tree["fields"], "name")["value"], "pvc-1");
        let tree = seen.call(&state, Method::POST, "api/call/reset", Json::Null).await;
        assert_eq!(node(&tree["fields"], "name")["missing"], true);
    });
}

#[test]
fn calls_reach_the_plugin_only_when_the_rules_hold_and_no_secret_comes_back() {
    let dir = tempfile::tempdir().expect("dir");
    let socket = dir.path().join("csi.sock");
    runtime().block_on(async {
        let calls = serve_plugin(&socket).await;
        let state = state(Some(format!("unix://{}", socket.display())));
        let mut seen = Seen::default();
        let list = seen.call(&state, Method::GET, "api/methods", Json::Null).await;
        assert_eq!(list["reason"], Json::Null);

        // The name left out: refused with the violation, and nothing reaches the plugin.
        let mut edits: Vec<Edit> =
            vec![("add", "volume_capabilities".into(), ""), ("add", "secrets".into(), "password")];
        edits.extend(capability("volume_capabilities[0]"));
        edits.push(("set", "secrets[\"password\"]".into(), SECRET));
        let tree = fill(&mut seen, &state, "/csi.v1.Controller/CreateVolume", &edits).await;
        assert_eq!(violated(&tree), ["name"]);
        let secrets = node(&tree["fields"], "secrets");
        assert_eq!(secrets["entries"][0]["redacted"], true, "{secrets}");
        let refused = seen.call(&state, Method::POST, "api/call/send", Json::Null).await;
        assert_eq!(refused["outcome"], "refused", "{refused}");
        assert_eq!(violated(&refused), ["name"]);
        assert_eq!(calls.load(Ordering::SeqCst), 0, "a refused request reached the plugin");

        // With the name: sent, answered OK, the response a tree with the new volume's id.
        seen.edit(&state, json!({"op": "set", "path": "name", "value": "pvc-page"})).await;
        let sent = seen.call(&state, Method::POST, "api/call/send", Json::Null).await;
        assert_eq!(sent["outcome"], "ok", "{sent}");
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        let response = &sent["response"];
        assert_eq!(response["type"], "csi.v1.CreateVolumeResponse");
        let volume_id = node(&node(&response["fields"], "volume")["fields"], "volume_id")["value"]
            .as_str()
            .expect("a volume id")
            .to_owned();
        assert!(!volume_id.is_empty());
        assert_eq!(violated(response), Vec::<&str>::new());

        // The id is offered for the next request's volume_id; a node that does not exist is
        // NOT_FOUND (memdriver's row), the status named with its message.
        let mut edits: Vec<Edit> = vec![
            ("set", "node_id".into(), "node-elsewhere"),
            ("add", "volume_capability".into(), ""),
            ("add", "secrets".into(), "password"),
            ("set", "secrets[\"password\"]".into(), SECRET),
        ];
        edits.extend(capability("volume_capability"));
        let tree =
            fill(&mut seen, &state, "/csi.v1.Controller/ControllerPublishVolume", &edits).await;
        let offers = &node(&tree["fields"], "volume_id")["offers"];
        assert_eq!(offers[0]["value"], volume_id.as_str(), "{offers}");
        assert_eq!(offers[0]["from"], "volume_id of CreateVolume");
        seen.edit(&state, json!({"op": "set", "path": "volume_id", "value": volume_id})).await;
        let sent = seen.call(&state, Method::POST, "api/call/send", Json::Null).await;
        assert_eq!(sent["outcome"], "status", "{sent}");
        assert_eq!(sent["status"]["code"], 5);
        assert_eq!(sent["status"]["name"], "NOT_FOUND");
        assert!(sent["status"]["message"].as_str().is_some_and(|m| m.contains("node-elsewhere")));
        // The spec's rows for NOT_FOUND in ControllerPublishVolume's table (volume and node).
        assert_eq!(sent["table"], "ControllerPublishVolume's error table");
        assert_eq!(
            strings(&sent["rows"], "condition"),
            ["Volume does not exist", "Node does not exist"]
        );
        assert!(sent["rows"][1]["recovery"].as_str().is_some_and(|r| !r.is_empty()));
        assert_eq!(calls.load(Ordering::SeqCst), 2);

        // Showing secret values is for documents: a request keeps its secrets hidden.
        seen.call(&state, Method::POST, "api/secrets", json!({"show": true})).await;
        let tree = seen.call(&state, Method::GET, "api/call/request", Json::Null).await;
        assert_eq!(node(&tree["fields"], "secrets")["entries"][0]["redacted"], true, "{tree}");

        // No answer carried the secret typed into the requests.
        for answer in &seen.0 {
            assert!(!answer.contains(SECRET), "a secret in an answer: {answer}");
        }
        assert!(seen.0.len() > 10);
    });
}

#[test]
fn a_status_message_echoing_a_secret_is_scrubbed() {
    runtime().block_on(async {
        let state = state(None);
        let mut seen = Seen::default();
        let edits = [
            ("add", "secrets".into(), "password"),
            ("set", "secrets[\"password\"]".into(), SECRET),
        ];
        fill(&mut seen, &state, "/csi.v1.Controller/DeleteVolume", &edits).await;
        let method =
            state.schema.find_method("/csi.v1.Controller/DeleteVolume").expect("DeleteVolume");
        let request = prost_reflect::DynamicMessage::decode(
            method.input(),
            prost::Message::encode_to_vec(&csikit::v1::DeleteVolumeRequest {
                volume_id: "v".into(),
                secrets: [("password".to_owned(), SECRET.to_owned())].into(),
            })
            .as_slice(),
        )
        .expect("decodes");
        let answer = crate::client::Answer {
            response: None,
            status: Status::internal(format!("cannot log in with {SECRET}")),
            elapsed: Duration::from_millis(3),
            local: false,
        };
        let reply = crate::send::Outgoing::new(&state.schema, &method, &request).answered(answer);
        let shown = state.answered(&method, &reply).expect("an answer");
        assert_eq!(shown["status"]["name"], "INTERNAL");
        assert_eq!(shown["status"]["message"], "cannot log in with <redacted>");
        assert_eq!(shown["elapsed_ms"], 3);
        // No table has a row for INTERNAL in DeleteVolume: said so.
        assert_eq!(shown["rows"], json!([]));
        assert_eq!(
            shown["no_row"],
            "spec: no row for INTERNAL in DeleteVolume's error table or the general one"
        );
    });
}

#[test]
fn a_plugin_that_is_not_there_is_unavailable_naming_the_endpoint() {
    let dir = tempfile::tempdir().expect("dir");
    let endpoint = format!("unix://{}", dir.path().join("none.sock").display());
    runtime().block_on(async {
        let state = state(Some(endpoint.clone()));
        let mut seen = Seen::default();
        fill(&mut seen, &state, "/csi.v1.Identity/Probe", &[]).await;
        let sent = seen.call(&state, Method::POST, "api/call/send", Json::Null).await;
        assert_eq!(sent["status"]["name"], "UNAVAILABLE", "{sent}");
        assert!(sent["status"]["message"].as_str().is_some_and(|m| m.contains(&endpoint)));
        assert!(sent["no_row"].as_str().is_some_and(|n| n.contains("did not answer")), "{sent}");
    });
}

#[test]
fn a_plugin_that_does_not_answer_in_time_is_given_up_after_the_timeout() {
    let dir = tempfile::tempdir().expect("dir");
    let socket = dir.path().join("csi.sock");
    runtime().block_on(async {
        let calls = serve_plugin(&socket).await;
        let timeout = Duration::from_millis(300);
        let state = state_with_timeout(Some(format!("unix://{}", socket.display())), timeout);
        let mut seen = Seen::default();
        // memdriver's delay hook holds this CreateVolume for 60 s.
        let mut edits: Vec<Edit> = vec![
            ("set", "name".into(), "pvc-slow"),
            ("add", "volume_capabilities".into(), ""),
            ("add", "secrets".into(), "password"),
            ("set", "secrets[\"password\"]".into(), SECRET),
            ("add", "parameters".into(), memdriver::DELAY_KEY),
        ];
        edits.extend(capability("volume_capabilities[0]"));
        let key = format!("parameters[{:?}]", memdriver::DELAY_KEY);
        edits.push(("set", key, "60000"));
        fill(&mut seen, &state, "/csi.v1.Controller/CreateVolume", &edits).await;
        // The plugin holds the call a minute: a status of csi-view's own is the deadline's.
        let sent = seen.call(&state, Method::POST, "api/call/send", Json::Null).await;
        assert_eq!(sent["outcome"], "status", "{sent}");
        assert!(
            ["DEADLINE_EXCEEDED", "CANCELLED"]
                .contains(&sent["status"]["name"].as_str().unwrap_or("")),
            "{sent}"
        );
        assert_eq!(sent["rows"], json!([]), "a status of our own has no row in the spec's tables");
        assert!(sent["no_row"].as_str().is_some_and(|n| n.contains("did not answer")), "{sent}");
        assert_eq!(calls.load(Ordering::SeqCst), 1, "the call reached the plugin");
    });
}
