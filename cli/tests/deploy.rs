//! `csikit deploy` end to end: the manifests of the running memdriver (over a unix socket) and of
//! each layout validate against the Kubernetes OpenAPI schemas of every release the table names
//! (kubernetes-validate, offline); a capabilities file derives the same objects as the plugin;
//! bad input is one clear error with the right exit code and nothing written.

mod support;

use std::path::Path;

use support::{Served, csikit, kubernetes_validate, listing, memdriver, objects_of, scratch};

const RELEASES: [&str; 3] = ["1.33", "1.34", "1.35"];

fn assert_valid(dir: &Path) {
    let Some(verdicts) = kubernetes_validate(dir, &RELEASES) else { return };
    for (release, errors) in verdicts {
        assert!(
            errors.is_empty(),
            "'{}' against Kubernetes {release}:\n{}",
            dir.display(),
            errors.join("\n")
        );
    }
}

fn ok(args: &[&str]) -> String {
    let out = csikit(args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{args:?}:\n{stderr}");
    assert!(out.stdout.is_empty(), "nothing on stdout");
    stderr
}

#[test]
fn memdriver_manifests_from_the_running_plugin_validate() {
    let root = scratch("deploy-memdriver");
    let sockets = support::socket_dir("memdriver");
    let served = memdriver(sockets.join("csi.sock"));
    let out = root.join("deploy");
    let endpoint = served.endpoint();
    let stderr = ok(&[
        "deploy",
        "--endpoint",
        &endpoint,
        "--image",
        "registry.example.com/memdriver:0.1.0",
        "--namespace",
        "csi-memdriver",
        "--node-id-env",
        "MEMDRIVER_NODE_ID",
        "--out",
        out.to_str().expect("utf-8"),
    ]);
    assert!(stderr.contains("wrote 14 files for memdriver.csikit.dev"), "{stderr}");
    assert_eq!(
        listing(&out),
        [
            "capabilities.toml",
            "clusterrole.yaml",
            "clusterrolebinding.yaml",
            "csidriver.yaml",
            "daemonset.yaml",
            "deployment.yaml",
            "kustomization.yaml",
            "namespace.yaml",
            "role.yaml",
            "rolebinding.yaml",
            "serviceaccount.yaml",
            "storageclass.yaml",
            "volumegroupsnapshotclass.yaml",
            "volumesnapshotclass.yaml",
        ]
    );
    // What the plugin said, kept: every capability memdriver's builder advertises.
    let caps = std::fs::read_to_string(out.join("capabilities.toml")).expect("read");
    for name in [
        "\"PUBLISH_UNPUBLISH_VOLUME\"",
        "\"GET_CAPACITY\"",
        "\"STAGE_UNSTAGE_VOLUME\"",
        "\"CREATE_DELETE_GET_VOLUME_GROUP_SNAPSHOT\"",
        "\"VOLUME_ACCESSIBILITY_CONSTRAINTS\"",
    ] {
        assert!(caps.contains(name), "{name} in:\n{caps}");
    }
    // Every file opens with its comment; every object has one.
    for name in listing(&out).iter().filter(|n| n.ends_with(".yaml")) {
        let text = std::fs::read_to_string(out.join(name)).expect("read");
        assert!(text.starts_with("# "), "{name}");
        assert_eq!(
            text.matches("\n---\n").count(),
            text.matches("\n---\n#").count(),
            "{name}: an object without its comment"
        );
    }
    assert_valid(&out);

    // The same derivation from the file it wrote, without the plugin: the same objects.
    drop(served);
    let again = root.join("again");
    ok(&[
        "deploy",
        "--capabilities",
        out.join("capabilities.toml").to_str().expect("utf-8"),
        "--image",
        "registry.example.com/memdriver:0.1.0",
        "--namespace",
        "csi-memdriver",
        "--node-id-env",
        "MEMDRIVER_NODE_ID",
        "--out",
        again.to_str().expect("utf-8"),
    ]);
    assert_eq!(objects_of(&out), objects_of(&again));
    assert_eq!(
        std::fs::read(out.join("capabilities.toml")).expect("read"),
        std::fs::read(again.join("capabilities.toml")).expect("read")
    );

    // Writing over an earlier output replaces it whole, for another release.
    ok(&[
        "deploy",
        "--capabilities",
        again.join("capabilities.toml").to_str().expect("utf-8"),
        "--image",
        "registry.example.com/memdriver:0.1.0",
        "--kubernetes",
        "1.33",
        "--out",
        out.to_str().expect("utf-8"),
    ]);
    let kustomization = std::fs::read_to_string(out.join("kustomization.yaml")).expect("read");
    assert!(kustomization.contains("for Kubernetes 1.33"), "{kustomization}");
    assert!(!out.join("namespace.yaml").exists(), "the default namespace is not created");
    assert!(
        kustomization.contains("Note: the plugin reports controller capability MODIFY_VOLUME"),
        "{kustomization}"
    );
    assert_eq!(listing(&root), ["again", "deploy"], "no temporary folder left");
}

/// The other layouts, from capabilities files: a Node-only plugin, distributed provisioning.
#[test]
fn every_layout_validates() {
    let root = scratch("deploy-layouts");
    let node_only = root.join("node-only.toml");
    std::fs::write(
        &node_only,
        "name = \"inline.csi.example.com\"\nvendor_version = \"1.0\"\n\
         plugin = [\"VOLUME_ACCESSIBILITY_CONSTRAINTS\"]\nnode = [\"VOLUME_MOUNT_GROUP\"]\n",
    )
    .expect("write");
    let distributed = root.join("distributed.toml");
    std::fs::write(
        &distributed,
        "name = \"local.csi.example.com\"\nvendor_version = \"1.0\"\n\
         plugin = [\"CONTROLLER_SERVICE\", \"VOLUME_ACCESSIBILITY_CONSTRAINTS\"]\n\
         controller = [\"CREATE_DELETE_VOLUME\", \"GET_CAPACITY\", \"CREATE_DELETE_SNAPSHOT\", \
         \"EXPAND_VOLUME\"]\nnode = [\"GET_VOLUME_STATS\"]\n",
    )
    .expect("write");
    let out = root.join("node-only");
    ok(&[
        "deploy",
        "--capabilities",
        node_only.to_str().expect("utf-8"),
        "--image",
        "inline:1",
        "--lifecycle",
        "ephemeral",
        "--out",
        out.to_str().expect("utf-8"),
    ]);
    assert!(!out.join("deployment.yaml").exists(), "no Controller service, no Deployment");
    assert!(!out.join("clusterrole.yaml").exists(), "nothing on the node uses the API");
    let driver = std::fs::read_to_string(out.join("csidriver.yaml")).expect("read");
    for field in
        ["attachRequired: false", "podInfoOnMount: true", "fsGroupPolicy: File", "- Ephemeral"]
    {
        assert!(driver.contains(field), "{field}:\n{driver}");
    }
    assert_valid(&out);

    let out = root.join("distributed");
    let stderr = ok(&[
        "deploy",
        "--capabilities",
        distributed.to_str().expect("utf-8"),
        "--image",
        "local:1",
        "--mode",
        "distributed",
        "--out",
        out.to_str().expect("utf-8"),
    ]);
    assert!(stderr.contains("warning: not deployed: external-resizer"), "{stderr}");
    assert!(!out.join("deployment.yaml").exists(), "everything runs on the nodes");
    let node = std::fs::read_to_string(out.join("daemonset.yaml")).expect("read");
    for piece in [
        "--node-deployment=true",
        "--enable-capacity",
        "--capacity-ownerref-level=0",
        "name: NODE_NAME",
        "csi-snapshotter",
    ] {
        assert!(node.contains(piece), "{piece}:\n{node}");
    }
    assert!(!node.contains("--leader-election"), "one instance per node elects no leader");
    assert_valid(&out);
}

#[test]
fn bad_input_is_one_error_and_writes_nothing() {
    let root = scratch("deploy-errors");
    let out = root.join("deploy");
    let out_str = out.to_str().expect("utf-8");
    let refused = |args: &[&str], code: i32, expected: &str| {
        let o = csikit(args);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(code), "{args:?}: {stderr}");
        assert!(o.stdout.is_empty(), "{args:?}: nothing on stdout");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: one line:\n{stderr}");
        assert!(stderr.starts_with(expected), "{args:?}: expected {expected:?}, got:\n{stderr}");
        assert!(!out.exists(), "{args:?}: nothing written");
    };
    let missing = root.join("nothing-here.sock");
    let unreachable = format!("unix://{}", missing.display());
    refused(
        &["deploy", "--endpoint", &unreachable, "--image", "x:1", "--out", out_str],
        1,
        &format!("error: cannot connect to {unreachable}: "),
    );
    refused(
        &["deploy", "--endpoint", "http://plugin:1", "--image", "x:1", "--out", out_str],
        1,
        "error: endpoint 'http://plugin:1': ",
    );
    refused(
        &["deploy", "--endpoint", &unreachable, "--image", "Not An/Image", "--out", out_str],
        2,
        "error: --image 'Not An/Image' is not an image reference: ' ' is not allowed",
    );
    refused(
        &["deploy", "--endpoint", &unreachable, "--image", "x:", "--out", out_str],
        2,
        "error: --image 'x:' is not an image reference: the tag ''",
    );

    // A plugin that reports no capability at all.
    let sockets = support::socket_dir("empty");
    let served = Served::start(node_only_plugin(), sockets.join("csi.sock"));
    refused(
        &["deploy", "--endpoint", &served.endpoint(), "--image", "x:1", "--out", out_str],
        1,
        &format!(
            "error: the plugin at {} answered GetPluginCapabilities with no capabilities",
            served.endpoint()
        ),
    );
    drop(served);

    let caps = root.join("caps.toml");
    std::fs::write(&caps, "name = \"x.example.com\"\nvendor_version = \"1\"\n").expect("write");
    let caps_str = caps.to_str().expect("utf-8");
    refused(
        &[
            "deploy",
            "--capabilities",
            caps_str,
            "--image",
            "x:1",
            "--kubernetes",
            "1.30",
            "--out",
            out_str,
        ],
        2,
        "error: unknown Kubernetes version '1.30': csikit writes manifests for 1.33, 1.34, 1.35",
    );
    refused(
        &[
            "deploy",
            "--capabilities",
            caps_str,
            "--image",
            "x:1",
            "--kubernetes",
            "latest",
            "--out",
            out_str,
        ],
        2,
        "error: unknown Kubernetes version 'latest'",
    );
    refused(
        &[
            "deploy",
            "--capabilities",
            caps_str,
            "--image",
            "x:1",
            "--mode",
            "distributed",
            "--out",
            out_str,
        ],
        1,
        "error: distributed provisioning is for node-local storage",
    );
    refused(
        &[
            "deploy",
            "--capabilities",
            caps_str,
            "--image",
            "x:1",
            "--namespace",
            "Kube_System",
            "--out",
            out_str,
        ],
        2,
        "error: the namespace 'Kube_System' is not a DNS label",
    );
    std::fs::write(
        &caps,
        "name = \"x.example.com\"\nvendor_version = \"1\"\nnode = [\"MOUNT_EVERYTHING\"]\n",
    )
    .expect("write");
    refused(
        &["deploy", "--capabilities", caps_str, "--image", "x:1", "--out", out_str],
        1,
        &format!("error: {caps_str}:3:9: 'MOUNT_EVERYTHING' is not a node capability"),
    );
    // clap's own usage error: several lines, exit code 2.
    let o = csikit(&["deploy", "--image", "x:1", "--out", out_str]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .starts_with("error: the following required arguments were not provided:")
    );
    assert!(!out.exists());

    // A folder that is not an earlier output is left alone.
    std::fs::write(&caps, "name = \"x.example.com\"\nvendor_version = \"1\"\n").expect("write");
    std::fs::create_dir_all(&out).expect("mkdir");
    std::fs::write(out.join("mine.yaml"), "kind: Mine\n").expect("write");
    let o = csikit(&["deploy", "--capabilities", caps_str, "--image", "x:1", "--out", out_str]);
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("holds files `csikit deploy` did not write")
    );
    assert_eq!(listing(&out), ["mine.yaml"]);
}

/// A plugin with a Node service alone and no topology: GetPluginCapabilities answers nothing.
fn node_only_plugin() -> csikit::server::Builder {
    csikit::server::Builder::new("empty.csi.example.com", "1.0").node(NodeOnly)
}

#[derive(Debug)]
struct NodeOnly;

#[csikit::csi_service]
impl csikit::v1::server::Node for NodeOnly {
    async fn node_publish_volume(
        &self,
        _request: tonic::Request<csikit::v1::NodePublishVolumeRequest>,
    ) -> Result<tonic::Response<csikit::v1::NodePublishVolumeResponse>, tonic::Status> {
        Ok(tonic::Response::new(csikit::v1::NodePublishVolumeResponse {}))
    }

    async fn node_unpublish_volume(
        &self,
        _request: tonic::Request<csikit::v1::NodeUnpublishVolumeRequest>,
    ) -> Result<tonic::Response<csikit::v1::NodeUnpublishVolumeResponse>, tonic::Status> {
        Ok(tonic::Response::new(csikit::v1::NodeUnpublishVolumeResponse {}))
    }

    async fn node_get_info(
        &self,
        _request: tonic::Request<csikit::v1::NodeGetInfoRequest>,
    ) -> Result<tonic::Response<csikit::v1::NodeGetInfoResponse>, tonic::Status> {
        Ok(tonic::Response::new(csikit::v1::NodeGetInfoResponse {
            node_id: "n1".into(),
            ..Default::default()
        }))
    }
}
