#!/usr/bin/env python3
"""csi-conformance explore's steps/s against memdriver over a unix socket, beside csi-sanity's cases/s
against the same memdriver build.

Release builds of both (`cargo build --release -p memdriver -p csikit-conformance`); csi-sanity from
CSI_SANITY (default /work/tools/bin/csi-sanity). Each explore run gets a fresh memdriver and its
steps/s is read from its --report (walk time only: connecting and discovery apart); csi-sanity's
cases/s is the cases it ran over the wall time of the whole run, read from its JUnit report. The
load average is printed at the start and the end: a figure taken under load is noise.

    python3 conformance/bench/explore_speed.py [--seeds 5] [--steps 20000] [--sanity-runs 2]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "release"


def load() -> str:
    return Path("/proc/loadavg").read_text().split(" ", 3)[:3].__str__()


def start_memdriver(folder: Path) -> tuple[subprocess.Popen, str]:
    sock = folder / "memdriver.sock"
    env = dict(os.environ, CSI_ENDPOINT=f"unix://{sock}", MEMDRIVER_NODE_ID="bench-node",
               RUST_LOG="warn")
    proc = subprocess.Popen([str(TARGET / "memdriver")], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    for _ in range(100):
        if sock.exists():
            return proc, f"unix://{sock}"
        time.sleep(0.05)
    proc.kill()
    sys.exit("memdriver did not make its socket within 5 s")


def explore(seed: int, steps: int) -> dict:
    with tempfile.TemporaryDirectory() as d:
        folder = Path(d)
        proc, endpoint = start_memdriver(folder)
        try:
            report = folder / "report.json"
            rc = subprocess.run(
                [str(TARGET / "csi-conformance"), "explore", "--endpoint", endpoint, "--seed",
                 str(seed), "--steps", str(steps), "--report", str(report), "--capture-out",
                 str(folder / "captures")],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
            r = json.loads(report.read_text())
            r["rc"] = rc
            return r
        finally:
            proc.terminate()
            proc.wait()


def sanity(binary: str) -> tuple[int, float]:
    with tempfile.TemporaryDirectory() as d:
        folder = Path(d)
        proc, endpoint = start_memdriver(folder)
        try:
            junit = folder / "junit.xml"
            started = time.monotonic()
            subprocess.run(
                [binary, f"--csi.endpoint={endpoint}", f"--csi.mountdir={folder}/mnt",
                 f"--csi.stagingdir={folder}/stg", f"--ginkgo.junit-report={junit}"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            wall = time.monotonic() - started
            suite = ET.parse(junit).getroot()
            ran = sum(1 for case in suite.iter("testcase")
                      if case.find("skipped") is None and case.get("status") != "skipped")
            return ran, wall
        finally:
            proc.terminate()
            proc.wait()


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--steps", type=int, default=20000)
    p.add_argument("--sanity-runs", type=int, default=2)
    args = p.parse_args()
    binary = os.environ.get("CSI_SANITY", "/work/tools/bin/csi-sanity")
    print(f"load average at start: {load()}")
    rates = []
    for seed in range(1, args.seeds + 1):
        r = explore(seed, args.steps)
        rates.append(r["steps_per_second"])
        print(f"explore seed {seed}: {r['steps']} steps ({r['calls']} calls) in {r['seconds']:.2f} s, "
              f"{r['steps_per_second']:.0f} steps/s, {len(r['findings'])} findings, exit {r['rc']}")
    print(f"explore: median {statistics.median(rates):.0f} steps/s (min {min(rates):.0f}, "
          f"max {max(rates):.0f}) over {args.seeds} seeds x {args.steps} steps")
    for run in range(args.sanity_runs):
        ran, wall = sanity(binary)
        print(f"csi-sanity run {run + 1}: {ran} cases in {wall:.2f} s, {ran / wall:.1f} cases/s")
    print(f"load average at end: {load()}")


if __name__ == "__main__":
    main()
