#!/usr/bin/env python3
"""`csi-view call` as a process, start to exit, beside the same call made by one-shot clients,
measured by hyperfine in one run (figures for BENCHMARKS.md; never run by tests).

The plugin is release-built memdriver on a unix socket. Each command makes one connection and
one call and prints the response: release-built `csi-view call`, `oneshot.py` (Python grpcio
with stubs grpcio-tools builds from the corpus csi.proto), and `oneshot.go` (grpc-go and the CSI
spec's Go bindings, what gocsi's csc and grpcurl stand on; built from csi-test's vendor folder
when `CSI_TEST_DIR` (default /tmp/ext/csi-test) and `GO` (default /tmp/go/bin/go) are there).
grpcurl and csc themselves are measured when `GRPCURL` / `CSC` name their binaries.

  call_latency.py [ROUNDS [RUNS]]     (default 10 rounds of 10 runs of every command)
"""

import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))


def corpus():
    """`CSIKIT_CORPUS`, else the nearest `shared/corpus` beside the checkout or an ancestor."""
    if os.environ.get("CSIKIT_CORPUS"):
        return os.environ["CSIKIT_CORPUS"]
    d = ROOT
    while True:
        candidate = os.path.join(d, "shared", "corpus")
        if os.path.isdir(candidate) or os.path.dirname(d) == d:
            return candidate
        d = os.path.dirname(d)


CORPUS = corpus()
CREATE = json.dumps(
    {
        "name": "bench-volume",
        "capacityRange": {"requiredBytes": "1048576"},
        "volumeCapabilities": [{"mount": {}, "accessMode": {"mode": "SINGLE_NODE_WRITER"}}],
    }
)


def go_oneshot(tmp):
    go = os.environ.get("GO", "/tmp/go/bin/go")
    csi_test = os.environ.get("CSI_TEST_DIR", "/tmp/ext/csi-test")
    if not (os.path.exists(go) and os.path.isdir(os.path.join(csi_test, "vendor"))):
        print("# grpc-go one-shot: skipped (no Go toolchain or csi-test vendor folder)")
        return None
    tree = os.path.join(tmp, "csi-test")
    shutil.copytree(csi_test, tree, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    os.makedirs(os.path.join(tree, "cmd", "csikit-oneshot"))
    shutil.copy(os.path.join(HERE, "oneshot.go"), os.path.join(tree, "cmd", "csikit-oneshot", "main.go"))
    out = os.path.join(tmp, "oneshot-go")
    env = dict(os.environ, GOFLAGS="-mod=vendor", GOPROXY="off", GOTOOLCHAIN="local")
    subprocess.run([go, "build", "-o", out, "./cmd/csikit-oneshot"], cwd=tree, env=env, check=True)
    return out


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "csi-view", "-p", "memdriver"], check=True, cwd=ROOT)
    csi_view = os.path.join(target, "release", "csi-view")
    with tempfile.TemporaryDirectory() as tmp:
        stubs = os.path.join(tmp, "stubs")
        os.makedirs(stubs)
        subprocess.run(
            [sys.executable, "-m", "grpc_tools.protoc", "-I" + os.path.join(CORPUS, "csi-spec", "v1.12.0"),
             "--python_out=" + stubs, "--grpc_python_out=" + stubs, "csi.proto"],
            check=True,
        )
        go = go_oneshot(tmp)
        sock = os.path.join(tmp, "csi.sock")
        endpoint = "unix://" + sock
        env = dict(os.environ, CSI_ENDPOINT=endpoint, RUST_LOG="warn")
        plugin = subprocess.Popen([os.path.join(target, "release", "memdriver")], env=env, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 20
            while not os.path.exists(sock):
                if time.monotonic() > deadline or plugin.poll() is not None:
                    sys.exit("memdriver did not start")
                time.sleep(0.02)
            for method, body in [("GetPluginInfo", "{}"), ("CreateVolume", CREATE)]:
                commands = [
                    ("csi-view call", [csi_view, "call", endpoint, method, body]),
                    ("python grpcio one-shot", [sys.executable, os.path.join(HERE, "oneshot.py"), stubs, endpoint, method, body]),
                ]
                if go:
                    commands.append(("grpc-go one-shot", [go, endpoint, method, body]))
                if os.environ.get("GRPCURL"):
                    commands.append(("grpcurl", [os.environ["GRPCURL"], "-plaintext", "-unix", "-import-path",
                                                 os.path.join(CORPUS, "csi-spec", "v1.12.0"), "-proto", "csi.proto",
                                                 "-d", body, sock, "csi.v1.%s/%s" % ("Identity" if method == "GetPluginInfo" else "Controller", method)]))
                if os.environ.get("CSC"):
                    commands.append(("csc", [os.environ["CSC"], "-e", endpoint, "identity" if method == "GetPluginInfo" else "controller",
                                             "plugin-info" if method == "GetPluginInfo" else "create-volume", "bench-volume"]))
                for _, argv in commands:
                    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
                # Rounds of a few runs of every command, so that a change in the machine's load
                # (it is shared) falls on every command alike; the samples of all rounds pooled.
                samples = {name: [] for name, _ in commands}
                cpu = {name: [] for name, _ in commands}
                for round_ in range(rounds):
                    export = os.path.join(tmp, "%s-%d.json" % (method, round_))
                    order = commands if round_ % 2 == 0 else list(reversed(commands))
                    args = ["hyperfine", "-N", "--warmup", "3", "--runs", str(runs), "--export-json", export, "--style", "none"]
                    for name, argv in order:
                        args += ["-n", name, " ".join(shlex.quote(a) for a in argv)]
                    subprocess.run(args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                    with open(export) as f:
                        for r in json.load(f)["results"]:
                            samples[r["command"]] += r["times"]
                            cpu[r["command"]].append(r["user"] + r["system"])
                medians = {name: statistics.median(t) for name, t in samples.items()}
                base = min(medians.values())
                print("\n%s (%d rounds of %d runs per command, 3 warm-up runs per round)\n" % (method, rounds, runs))
                print("| command | median ms | mean ± sd ms | p10 ms | p90 ms | CPU (user+sys) ms | × fastest |")
                print("|---|---|---|---|---|---|---|")
                for name, _ in commands:
                    t = sorted(samples[name])
                    print("| %s | %.2f | %.2f ± %.2f | %.2f | %.2f | %.2f | %.2f |" % (
                        name, medians[name] * 1e3, statistics.mean(t) * 1e3, statistics.stdev(t) * 1e3,
                        t[len(t) // 10] * 1e3, t[len(t) * 9 // 10] * 1e3,
                        statistics.mean(cpu[name]) * 1e3, medians[name] / base))
        finally:
            plugin.terminate()
            plugin.wait()


if __name__ == "__main__":
    main()
