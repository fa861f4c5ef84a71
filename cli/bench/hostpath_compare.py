#!/usr/bin/env python3
"""Sets what `csikit deploy` derived for a running csi-driver-host-path beside its hand-written
deploy files, for the table of differences in BENCHMARKS.md.

Compares, per sidecar (matched by image name; the plugin's own container by not being a
sidecar): which sidecars run, their flags (log verbosity aside, `-flag` read as `--flag`),
environment variables, volume mounts with their propagation, the pods' hostPath volumes, the
CSIDriver fields, and the RBAC grants (host-path's deploy script applies each sidecar's own
rbac.yaml at the tag its image names; ours are in clusterrole.yaml and role.yaml), as the union
over all sidecars. Host-path's csi-hostpath-testing.yaml (socat for its e2e tests) is left out.
Prints every difference; exit code 0. Needs PyYAML and git.

Usage: cli/bench/hostpath_compare.py OURS HOSTPATH_MIRROR TAG LAYOUT MIRRORS
  OURS             a folder `csikit deploy` wrote
  HOSTPATH_MIRROR  a git mirror of csi-driver-host-path
  TAG              its tag (v1.18.0)
  LAYOUT           deploy/kubernetes-1.34/hostpath or deploy/kubernetes-distributed/hostpath
  MIRRORS          the sidecars' mirrors, as MIRRORS/kubernetes-csi+NAME/repo
"""

import glob
import os
import re
import subprocess
import sys

import yaml

RBAC = {
    "csi-provisioner": ("external-provisioner", "deploy/kubernetes/rbac.yaml"),
    "csi-attacher": ("external-attacher", "deploy/kubernetes/rbac.yaml"),
    "csi-resizer": ("external-resizer", "deploy/kubernetes/rbac.yaml"),
    "csi-snapshotter": ("external-snapshotter", "deploy/kubernetes/csi-snapshotter/rbac-csi-snapshotter.yaml"),
    "csi-external-health-monitor-controller": (
        "external-health-monitor",
        "deploy/kubernetes/external-health-monitor-controller/rbac.yaml",
    ),
}


def git_show(repo, rev, path):
    return subprocess.run(["git", "-C", repo, "show", f"{rev}:{path}"], check=True,
                          capture_output=True, text=True).stdout


def image_name(image):
    return image.rsplit("/", 1)[-1].split(":")[0]


def flags(args):
    out = set()
    for a in args or []:
        a = a.strip('"')
        if re.fullmatch(r"--?v=\d+", a):
            continue
        if a.startswith("-") and not a.startswith("--"):
            a = "-" + a
        out.add(a)
    return out


def containers(docs):
    """(pod kind, image name or 'plugin') -> container, plus hostPath volumes per pod kind."""
    found, volumes = {}, {}
    for d in docs:
        if d.get("kind") not in ("Deployment", "DaemonSet", "StatefulSet"):
            continue
        spec = d["spec"]["template"]["spec"]
        kind = d["kind"]
        for c in spec["containers"]:
            name = image_name(c["image"])
            key = name if name.startswith(("csi-", "livenessprobe")) else "plugin"
            found[(kind, key)] = c
        volumes[kind] = {v["name"]: (v.get("hostPath") or {}).get("path", "emptyDir")
                         for v in spec.get("volumes", [])}
    return found, volumes


def grants(docs):
    out = set()
    for d in docs:
        if d.get("kind") in ("ClusterRole", "Role"):
            for r in d.get("rules") or []:
                for g in r.get("apiGroups", []):
                    for res in r.get("resources", []):
                        for v in r.get("verbs", []):
                            out.add((d["kind"], g, res, v))
    return out


def load(paths_texts):
    docs = []
    for text in paths_texts:
        docs.extend(d for d in yaml.safe_load_all(text) if d)
    return docs


def main():
    if len(sys.argv) != 6:
        print(__doc__, file=sys.stderr)
        return 2
    ours_dir, hp, tag, layout, mirrors = sys.argv[1:]
    ours = load(open(p).read() for p in sorted(glob.glob(os.path.join(ours_dir, "*.yaml"))))
    files = subprocess.run(["git", "-C", hp, "ls-tree", "--name-only", f"{tag}:{layout}"],
                           check=True, capture_output=True, text=True).stdout.split()
    # csi-hostpath-testing.yaml is host-path's e2e helper (socat exposing the socket over TCP),
    # not part of a driver's deployment.
    theirs = load(git_show(hp, tag, f"{layout}/{f}") for f in files
                  if f.endswith(".yaml") and not f.endswith("-testing.yaml"))
    ours_c, ours_v = containers(ours)
    their_c, their_v = containers(theirs)
    # Host-path runs one pod (a StatefulSet or a DaemonSet); ours split by role. Compare by
    # container, wherever it runs; say where.
    # A container in both of csikit's pods (the plugin, livenessprobe) is compared as the
    # DaemonSet has it: host-path's single pod is also the node's.
    def by_name(cs):
        out = {}
        for (kind, name), c in cs.items():
            if name not in out or kind == "DaemonSet":
                out[name] = (kind, c)
        return out

    mine, hers = by_name(ours_c), by_name(their_c)
    print(f"# {layout} at {tag} against {ours_dir}")
    for name in sorted(set(mine) | set(hers)):
        if name not in mine:
            print(f"- sidecar {name}: only host-path ({hers[name][0]})")
            continue
        if name not in hers:
            print(f"- sidecar {name}: only csikit ({mine[name][0]})")
            continue
        (mk, mc), (hk, hc) = mine[name], hers[name]
        if mk != hk:
            print(f"- {name}: runs in csikit's {mk}, host-path's {hk}")
        mf, hf = flags(mc.get("args")), flags(hc.get("args"))
        for f in sorted(hf - mf):
            print(f"- {name}: flag only host-path: {f}")
        for f in sorted(mf - hf):
            print(f"- {name}: flag only csikit: {f}")
        me = {e["name"] for e in mc.get("env", [])}
        he = {e["name"] for e in hc.get("env", [])}
        for e in sorted(he - me):
            print(f"- {name}: env only host-path: {e}")
        for e in sorted(me - he):
            print(f"- {name}: env only csikit: {e}")
        mm = {(m["mountPath"], m.get("mountPropagation", "")) for m in mc.get("volumeMounts", [])}
        hm = {(m["mountPath"], m.get("mountPropagation", "")) for m in hc.get("volumeMounts", [])}
        for m in sorted(hm - mm):
            print(f"- {name}: mount only host-path: {m}")
        for m in sorted(mm - hm):
            print(f"- {name}: mount only csikit: {m}")
        mp = (mc.get("securityContext") or {}).get("privileged", False)
        hpv = (hc.get("securityContext") or {}).get("privileged", False)
        if mp != hpv:
            print(f"- {name}: privileged csikit {mp}, host-path {hpv}")
    mine_paths = {p for v in ours_v.values() for p in v.values()}
    hers_paths = {p for v in their_v.values() for p in v.values()}
    for p in sorted(hers_paths - mine_paths):
        print(f"- volume only host-path: {p}")
    for p in sorted(mine_paths - hers_paths):
        print(f"- volume only csikit: {p}")
    md = next((d["spec"] for d in ours if d.get("kind") == "CSIDriver"), {})
    hd = next((d["spec"] for d in theirs if d.get("kind") == "CSIDriver"), {})
    for k in sorted(set(md) | set(hd)):
        if md.get(k) != hd.get(k):
            print(f"- CSIDriver {k}: csikit {md.get(k)!r}, host-path {hd.get(k)!r}")
    # Host-path's RBAC: each sidecar's own file, at the tag of the image it runs.
    theirs_rbac = []
    for name, (_, c) in hers.items():
        if name in RBAC:
            repo, path = RBAC[name]
            rtag = c["image"].rsplit(":", 1)[1]
            theirs_rbac.append(git_show(os.path.join(mirrors, f"kubernetes-csi+{repo}", "repo"), rtag, path))
    mg, hg = grants(ours), grants(load(theirs_rbac))
    for g in sorted(hg - mg):
        print(f"- RBAC only host-path: {g}")
    for g in sorted(mg - hg):
        print(f"- RBAC only csikit: {g}")
    for kind in ("StorageClass", "VolumeSnapshotClass", "VolumeGroupSnapshotClass"):
        m = [d for d in ours if d.get("kind") == kind]
        h = [d for d in theirs if d.get("kind") == kind]
        if bool(m) != bool(h):
            print(f"- {kind}: csikit {len(m)}, host-path {len(h)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
