#!/usr/bin/env python3
"""Benchmarks for BENCHMARKS.md (never run by tests; `build` fetches bpfman-csi from crates.io).

generate: wall time of a prebuilt `xtask generate --check` (v1.12.0 + csi-addons: load, compile,
  codegen and compare every file; the same work as `generate` without the final rename) and of
  `xtask generate --out` (v1.12.0 alone), beside `python -m grpc_tools.protoc --python_out
  --grpc_python_out` on the same csi.proto, in the same run.
build: clean `cargo build` (dev profile) of a binary depending on `csikit` (default features)
  beside one depending on `bpfman-csi` 1.8.0, each with its own empty target directory.
"""

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CORPUS = os.environ.get("CSIKIT_CORPUS", os.path.join(ROOT, "..", "shared", "corpus"))


def timed(cmd, runs, **kw):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kw)
        times.append(time.perf_counter() - start)
    return times


def report(name, times):
    print("| %s | %d | %.3f | %.3f | %.3f |" % (name, len(times), statistics.median(times), min(times), max(times)))


def generate(runs):
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "xtask"], check=True, cwd=ROOT)
    xtask = os.path.join(target, "release", "xtask")
    spec = os.path.join(CORPUS, "csi-spec", "v1.12.0")
    out = tempfile.mkdtemp()
    import grpc_tools

    include = os.path.join(os.path.dirname(grpc_tools.__file__), "_proto")
    print("| command | runs | median s | min s | max s |\n|---|---:|---:|---:|---:|")
    report("`xtask generate --check` (v1.12.0 + 4 addons)", timed([xtask, "generate", "--check"], runs, cwd=ROOT))
    report("`xtask generate --spec-dir v1.12.0 --out DIR`", timed([xtask, "generate", "--spec-dir", spec, "--out", os.path.join(out, "rs")], runs, cwd=ROOT))
    report(
        "`python -m grpc_tools.protoc --python_out --grpc_python_out csi.proto`",
        timed([sys.executable, "-m", "grpc_tools.protoc", "-I" + spec, "-I" + include, "--python_out=" + out, "--grpc_python_out=" + out, "csi.proto"], runs),
    )
    shutil.rmtree(out)


def build():
    work = tempfile.mkdtemp()
    crates = {
        "with-csikit": 'csikit = { path = "%s" }' % os.path.join(ROOT, "generated"),
        "with-bpfman-csi": 'bpfman-csi = "=1.8.0"',
    }
    for name, dep in crates.items():
        d = os.path.join(work, name)
        os.makedirs(os.path.join(d, "src"))
        with open(os.path.join(d, "Cargo.toml"), "w") as fh:
            fh.write('[package]\nname = "%s"\nversion = "0.0.0"\nedition = "2021"\n\n[dependencies]\n%s\n\n[workspace]\n' % (name, dep))
        with open(os.path.join(d, "src", "main.rs"), "w") as fh:
            fh.write("fn main() {}\n")
        subprocess.run(["cargo", "fetch", "-q"], check=True, cwd=d)
    print("| crate | clean build s |\n|---|---:|")
    for name in crates:
        d = os.path.join(work, name)
        env = dict(os.environ, CARGO_TARGET_DIR=os.path.join(work, "target-" + name))
        report_one = timed(["cargo", "build", "-q"], 1, cwd=d, env=env)[0]
        print("| %s | %.1f |" % (name, report_one))
    shutil.rmtree(work)


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "generate"
    if what == "generate":
        generate(int(sys.argv[2]) if len(sys.argv) > 2 else 5)
    elif what == "build":
        build()
    else:
        sys.exit("usage: bench.py generate [RUNS] | build")
