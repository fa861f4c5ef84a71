#!/usr/bin/env python3
"""Compares the RBAC rules of cli/data/sidecars.toml with each sidecar's own rbac.yaml.

For every sidecar whose `rbac_source` names a file ("deploy/kubernetes/rbac.yaml at v6.3.0"),
reads that file at that tag from a git mirror of the sidecar's repository and compares the
(scope, API group, resource, verb) quadruples of its ClusterRole and Role objects with the table's
rules, conditional ones included. Prints one line per sidecar and every difference; exits 1 when
any sidecar differs. Needs PyYAML (in .ci/requirements.txt) and git.

Usage: cli/bench/published_rbac.py MIRRORS
  MIRRORS holds one bare mirror per repository, as MIRRORS/kubernetes-csi+NAME/repo.
"""

import os
import re
import subprocess
import sys
import tomllib

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
TABLE = os.path.join(HERE, "..", "data", "sidecars.toml")


def quads_of_table(sidecar):
    quads = set()
    for rule in sidecar.get("rule", []):
        scope = "Cluster" if rule["role"] == "cluster" else "Namespace"
        for group in rule["api_groups"]:
            for resource in rule["resources"]:
                for verb in rule["verbs"]:
                    quads.add((scope, group, resource, verb))
    return quads


def quads_of_file(text):
    quads = set()
    for doc in yaml.safe_load_all(text):
        if not doc or doc.get("kind") not in ("ClusterRole", "Role"):
            continue
        scope = "Cluster" if doc["kind"] == "ClusterRole" else "Namespace"
        for rule in doc.get("rules") or []:
            for group in rule.get("apiGroups", []):
                for resource in rule.get("resources", []):
                    for verb in rule.get("verbs", []):
                        quads.add((scope, group, resource, verb))
    return quads


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    mirrors = sys.argv[1]
    with open(TABLE, "rb") as f:
        table = tomllib.load(f)
    differ = False
    for sidecar in table["sidecar"]:
        m = re.fullmatch(r"(\S+\.yaml) at (\S+)", sidecar["rbac_source"])
        if not m:
            rules = quads_of_table(sidecar)
            state = "no rules, as stated" if not rules else "RULES WITHOUT A FILE"
            differ |= bool(rules)
            print(f"{sidecar['name']} {sidecar['version']}: {state} ({sidecar['rbac_source']})")
            continue
        path, tag = m.groups()
        repo = sidecar["repository"].rstrip("/").rsplit("/", 1)[1]
        git = os.path.join(mirrors, f"kubernetes-csi+{repo}", "repo")
        text = subprocess.run(
            ["git", "-C", git, "show", f"{tag}:{path}"], check=True, capture_output=True, text=True
        ).stdout
        published, ours = quads_of_file(text), quads_of_table(sidecar)
        if published == ours:
            print(f"{sidecar['name']} {tag}: {len(ours)} grants, the same as {path}")
            continue
        differ = True
        print(f"{sidecar['name']} {tag}: DIFFERS from {path}")
        for q in sorted(published - ours):
            print(f"  only published: {q}")
        for q in sorted(ours - published):
            print(f"  only in the table: {q}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
