//! The kustomize folder: one file per object kind, each object under its comment, a
//! `kustomization.yaml` listing them, and `capabilities.toml`, what the plugin said it was.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::objects::{Document, Kustomization, SerialiseError};
use super::plan::{Mode, Plan};
use super::plugin::PluginFacts;

/// The files, by kind, in the order kustomize lists them (objects others refer to first).
const FILES: [(&str, &str); 14] = [
    ("Namespace", "namespace.yaml"),
    ("CSIDriver", "csidriver.yaml"),
    ("ServiceAccount", "serviceaccount.yaml"),
    ("ClusterRole", "clusterrole.yaml"),
    ("ClusterRoleBinding", "clusterrolebinding.yaml"),
    ("Role", "role.yaml"),
    ("RoleBinding", "rolebinding.yaml"),
    ("Deployment", "deployment.yaml"),
    ("DaemonSet", "daemonset.yaml"),
    ("StorageClass", "storageclass.yaml"),
    ("VolumeSnapshotClass", "volumesnapshotclass.yaml"),
    ("VolumeGroupSnapshotClass", "volumegroupsnapshotclass.yaml"),
    // Not objects of the cluster: the list of the others, and the input.
    ("Kustomization", "kustomization.yaml"),
    ("capabilities", "capabilities.toml"),
];

/// The file a kind of object goes in.
pub fn file_of(kind: &str) -> Option<&'static str> {
    FILES.iter().find(|(k, _)| *k == kind).map(|(_, f)| *f)
}

/// Comment lines, wrapped at 100 columns; a wrapped line keeps its indent plus two spaces.
fn comment(lines: &[String]) -> String {
    const WIDTH: usize = 100;
    let mut out = String::new();
    for line in lines {
        let indent = line.len() - line.trim_start().len();
        let mut current = format!("# {}", " ".repeat(indent));
        let mut has_word = false;
        for word in line.split_whitespace() {
            if has_word && current.len() + 1 + word.len() > WIDTH {
                out.push_str(&current);
                out.push('\n');
                current = format!("# {}", " ".repeat(indent + 2));
                has_word = false;
            }
            if has_word {
                current.push(' ');
            }
            current.push_str(word);
            has_word = true;
        }
        out.push_str(current.trim_end());
        out.push('\n');
    }
    out
}

/// Every file of the folder.
///
/// # Errors
///
/// When the kustomization does not serialise (a bug).
pub fn render(
    plan: &Plan,
    facts: &PluginFacts,
    docs: &[Document],
    source: &str,
) -> Result<BTreeMap<PathBuf, String>, SerialiseError> {
    let mut files: BTreeMap<PathBuf, String> = BTreeMap::new();
    let mut order = Vec::new();
    for (kind, file) in FILES {
        let of_kind: Vec<&Document> = docs.iter().filter(|d| d.kind == kind).collect();
        if of_kind.is_empty() {
            continue;
        }
        let mut text = comment(&[format!(
            "{kind} objects of {} {}, written by `csikit deploy` from {source}.",
            plan.driver, plan.vendor_version
        )]);
        for doc in of_kind {
            text.push_str("---\n");
            text.push_str(&comment(&doc.comment));
            text.push_str(&doc.yaml);
            if !doc.yaml.ends_with('\n') {
                text.push('\n');
            }
        }
        files.insert(PathBuf::from(file), text);
        order.push(file.to_owned());
    }
    let kustomization = Kustomization::new(&plan.namespace, order.clone());
    let mut header = vec![
        format!(
            "The Kubernetes objects of the CSI plugin {} {}, derived by `csikit deploy` from \
             {source}, for Kubernetes {}.",
            plan.driver, plan.vendor_version, plan.kubernetes
        ),
        match plan.mode {
            Mode::Split if plan.pods.len() > 1 => {
                "Layout: the Controller service in a Deployment, the Node service in a DaemonSet."
                    .to_owned()
            }
            Mode::Split => {
                "Layout: a DaemonSet only (the plugin serves no Controller service).".to_owned()
            }
            Mode::Distributed => "Layout: distributed provisioning, everything in a DaemonSet \
                                  (node-local storage)."
                .to_owned(),
        },
        "Apply with `kubectl apply -k .`; change the namespace below (and nothing else) to move \
         it. Each file opens with why each object, sidecar, flag and mount is there."
            .to_owned(),
        "capabilities.toml holds what the plugin said it is; `csikit deploy --capabilities \
         capabilities.toml` derives the same files again."
            .to_owned(),
    ];
    if plan.snapshot_class.is_some() {
        header.push(
            "Snapshots need the snapshot CRDs and snapshot-controller of external-snapshotter, \
             installed once per cluster."
                .to_owned(),
        );
    }
    for left in &plan.left_out {
        header.push(format!("Not deployed: {left}."));
    }
    for warning in plan.warnings.iter().filter(|w| !w.starts_with("not deployed: ")) {
        header.push(format!("Note: {warning}."));
    }
    let mut text = comment(&header);
    text.push_str(&kustomization.to_yaml()?);
    files.insert(PathBuf::from("kustomization.yaml"), text);
    files.insert(PathBuf::from("capabilities.toml"), facts.to_toml());
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_wrap_at_100_columns_keeping_the_indent() {
        let long = format!("  {}", "word ".repeat(40));
        let text = comment(&["short".to_owned(), long]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "# short");
        assert!(lines.iter().all(|l| l.len() <= 100 && l.starts_with('#')), "{text}");
        assert!(lines[1].starts_with("#   word"), "{text}");
        assert!(lines[2].starts_with("#     word"), "{text}");
        // A word longer than the width stays whole on its own line.
        let text = comment(&[format!("a {}", "x".repeat(120))]);
        assert_eq!(text.lines().count(), 2, "{text}");
    }

    #[test]
    fn every_kind_has_its_file() {
        for kind in ["CSIDriver", "Deployment", "DaemonSet", "ClusterRole", "VolumeSnapshotClass"] {
            assert!(file_of(kind).is_some(), "{kind}");
        }
        assert_eq!(file_of("Pod"), None);
    }
}
