#!/usr/bin/env python3
"""Oracle for csi-view: random messages of every csi.v1 type, encoded by Python protobuf.

For each message:
  * `csi-view decode --type X --show-secrets --no-annotations` must be accepted by
    `protoc --encode=X` and give back equal bytes (maps serialised in key order on both sides,
    so a byte mismatch is reported, then compared as parsed messages);
  * `csi-view raw --show-secrets` must agree with `protoc --decode_raw` on the structure
    (field numbers, nesting, wire kinds, values and payload bytes);
  * `csi-view detect` must name the right type first (the figure is reported).

Usage: oracle.py CSI_VIEW PROTO_FILE WORKDIR [--per-type N] [--seed S]
Prints a JSON summary on the last line; exits 1 when a decode/encode/raw check fails (the
detection figures are reported, not enforced).
"""

import argparse
import concurrent.futures
import json
import os
import random
import re
import struct
import subprocess
import sys


def gen_python(proto, workdir):
    inc = os.path.dirname(os.path.abspath(proto))
    subprocess.run(
        [sys.executable, "-m", "grpc_tools.protoc", "-I", inc, "-I", "/usr/include",
         "--python_out=" + workdir, os.path.basename(proto)],
        check=True,
    )
    sys.path.insert(0, workdir)
    import importlib
    return importlib.import_module(os.path.basename(proto)[:-len(".proto")] + "_pb2")


def all_types(file_desc):
    out = []

    def walk(m):
        if m.GetOptions().map_entry:
            return
        out.append(m)
        for n in m.nested_types:
            walk(n)

    for m in file_desc.message_types_by_name.values():
        walk(m)
    return out


FILL = 0.65

ALPHABET = "abcXYZ019 _-./:é雪🙂\"\\\n\t"


def rand_string(rng):
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 12)))


def rand_scalar(rng, f):
    from google.protobuf.descriptor import FieldDescriptor as F
    t = f.type
    if t == F.TYPE_STRING:
        return rand_string(rng)
    if t == F.TYPE_BYTES:
        return bytes(rng.randint(0, 255) for _ in range(rng.randint(0, 10)))
    if t == F.TYPE_BOOL:
        return rng.random() < 0.5
    if t == F.TYPE_ENUM:
        return rng.choice(f.enum_type.values).number
    if t in (F.TYPE_INT32, F.TYPE_SINT32, F.TYPE_SFIXED32):
        return rng.choice([0, 1, -1, 300, rng.randint(-2**31, 2**31 - 1)])
    if t in (F.TYPE_INT64, F.TYPE_SINT64, F.TYPE_SFIXED64):
        return rng.choice([1, -5, 1 << 40, rng.randint(-2**63, 2**63 - 1)])
    if t in (F.TYPE_UINT32, F.TYPE_FIXED32):
        return rng.randint(0, 2**32 - 1)
    if t in (F.TYPE_UINT64, F.TYPE_FIXED64):
        return rng.randint(0, 2**64 - 1)
    if t == F.TYPE_FLOAT:
        return struct.unpack("<f", struct.pack("<f", rng.uniform(-1e6, 1e6)))[0]
    if t == F.TYPE_DOUBLE:
        return rng.choice([0.5, -2.25, 1e-7, 1e300, rng.uniform(-1e9, 1e9)])
    raise ValueError(t)


def fill(rng, msg, depth):
    from google.protobuf.descriptor import FieldDescriptor as F
    d = msg.DESCRIPTOR
    chosen_oneof = {}
    for o in d.oneofs:
        if len(o.fields) > 1 or not o.fields[0].has_presence or o.name != "_" + o.fields[0].name:
            chosen_oneof[o.name] = rng.choice(list(o.fields) + [None])
    for f in d.fields:
        o = f.containing_oneof
        if o is not None and o.name in chosen_oneof:
            if chosen_oneof[o.name] is not f:
                continue
        elif rng.random() >= FILL:
            continue
        if f.message_type is not None and f.message_type.GetOptions().map_entry:
            kf, vf = f.message_type.fields_by_name["key"], f.message_type.fields_by_name["value"]
            m = getattr(msg, f.name)
            for _ in range(rng.randint(1, 3)):
                k = rand_scalar(rng, kf)
                if vf.message_type is not None:
                    if depth < 4:
                        fill(rng, m[k], depth + 1)
                else:
                    m[k] = rand_scalar(rng, vf)
        elif f.is_repeated:
            lst = getattr(msg, f.name)
            for _ in range(rng.randint(1, 3)):
                if f.message_type is not None:
                    if depth < 4:
                        fill(rng, lst.add(), depth + 1)
                else:
                    lst.append(rand_scalar(rng, f))
        elif f.message_type is not None:
            if depth < 4:
                sub = getattr(msg, f.name)
                sub.SetInParent()
                fill(rng, sub, depth + 1)
        else:
            setattr(msg, f.name, rand_scalar(rng, f))


def shape(m, depth=0):
    """Field numbers, types and nesting: two types of one shape cannot be told apart by bytes."""
    if depth > 3:
        return "..."
    out = []
    for f in m.fields:
        sub = shape(f.message_type, depth + 1) if f.message_type else (
            tuple(v.number for v in f.enum_type.values) if f.enum_type else None)
        out.append((f.number, f.type, f.is_repeated, sub))
    return tuple(sorted(out, key=str))


# --- structure of `protoc --decode_raw` and `csi-view raw` -------------------------------

def c_unescape(s):
    """Bytes of a C-escaped string body (octal, \\x, \\n ... as protoc and csi-view write them)."""
    b = s.encode("utf-8")
    out = bytearray()
    i = 0
    simple = {ord("n"): 10, ord("r"): 13, ord("t"): 9, ord('"'): 34, ord("'"): 39, ord("\\"): 92,
              ord("a"): 7, ord("b"): 8, ord("f"): 12, ord("v"): 11, ord("?"): 63}
    while i < len(b):
        c = b[i]
        if c != 92:
            out.append(c)
            i += 1
            continue
        e = b[i + 1]
        if e in simple:
            out.append(simple[e])
            i += 2
        elif 48 <= e <= 55:
            j = i + 1
            while j < len(b) and j < i + 4 and 48 <= b[j] <= 55:
                j += 1
            out.append(int(b[i + 1:j], 8) & 0xFF)
            i = j
        elif e == ord("x"):
            j = i + 2
            while j < len(b) and j < i + 4 and chr(b[j]) in "0123456789abcdefABCDEF":
                j += 1
            out.append(int(b[i + 2:j], 16))
            i = j
        else:
            raise ValueError("bad escape " + s)
    return bytes(out)


PROTOC_LINE = re.compile(r'^\s*(\d+)(?:: (.*)| \{)$')


def protoc_structure(text):
    out = []
    for line in text.splitlines():
        if line.strip() == "}":
            out.append(("close",))
            continue
        m = PROTOC_LINE.match(line)
        if not m:
            raise ValueError("unexpected protoc line: " + line)
        num, val = int(m.group(1)), m.group(2)
        if val is None:
            out.append(("open", num))
        elif val.startswith('"'):
            out.append(("bytes", num, c_unescape(val[1:-1])))
        elif re.fullmatch(r"0x[0-9a-f]{8}", val):
            out.append(("i32", num, int(val, 16)))
        elif re.fullmatch(r"0x[0-9a-f]{16}", val):
            out.append(("i64", num, int(val, 16)))
        else:
            out.append(("varint", num, int(val)))
    return out


VIEW_LINE = re.compile(r'^\s*\d+\s+(\d+):(VARINT|I64|I32|LEN|SGROUP)(?: len=\d+)? (.*?)(?:  # .*)?$')


def view_structure(text):
    out = []
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        if line.strip() == "}":
            out.append(("close",))
            continue
        m = VIEW_LINE.match(line)
        if not m:
            raise ValueError("unexpected csi-view raw line: " + line)
        num, wt, val = int(m.group(1)), m.group(2), m.group(3)
        if val == "{":
            out.append(("open", num))
        elif wt == "LEN":
            if val.startswith('x"'):
                out.append(("bytes", num, bytes.fromhex(val[2:-1])))
            else:
                out.append(("bytes", num, c_unescape(val[1:-1])))
        elif wt == "I32":
            out.append(("i32", num, int(val, 16)))
        elif wt == "I64":
            out.append(("i64", num, int(val, 16)))
        else:
            out.append(("varint", num, int(val)))
    return out


def run(cmd, data=None):
    p = subprocess.run(cmd, input=data, capture_output=True)
    return p.returncode, p.stdout, p.stderr


def split_frames(text):
    """Splits csi-view output for many gRPC frames into one text per frame."""
    parts, cur = [], None
    for line in text.splitlines(keepends=True):
        if line.startswith("# frame "):
            cur = []
            parts.append(cur)
            continue
        if cur is None:
            cur = []
            parts.append(cur)
        cur.append(line)
    return ["".join(p) for p in parts]


def frame(b):
    return b"\x00" + struct.pack(">I", len(b)) + b


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csi_view")
    ap.add_argument("proto")
    ap.add_argument("workdir")
    ap.add_argument("--per-type", type=int, default=5)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--fill", type=float, default=0.65, help="chance that each field is set")
    args = ap.parse_args()
    global FILL
    FILL = args.fill
    rng = random.Random(args.seed)
    mod = gen_python(args.proto, args.workdir)
    from google.protobuf import message_factory
    types = all_types(mod.DESCRIPTOR)
    by_name = {t.full_name: t for t in types}
    proto_dir = os.path.dirname(os.path.abspath(args.proto))
    proto_name = os.path.basename(args.proto)

    samples = []  # (full_name, bytes)
    for t in types:
        cls = message_factory.GetMessageClass(t)
        for _ in range(args.per_type):
            m = cls()
            fill(rng, m, 0)
            samples.append((t.full_name, m.SerializeToString(deterministic=True)))

    with open(os.path.join(args.workdir, "samples.json"), "w") as f:
        json.dump([[n, b.hex()] for n, b in samples], f)
    failures = []
    stats = {"types": len(types), "messages": len(samples), "encode_equal_bytes": 0,
             "encode_equal_parsed": 0, "encode_failed": 0, "raw_compared": 0, "raw_agree": 0,
             "detect_right": 0, "detect_ambiguous": 0, "detect_wrong": 0, "detect_tie_without_right": 0}

    # decode: one csi-view call per type, each message a gRPC frame (empty messages included).
    by_type = {}
    for i, (name, b) in enumerate(samples):
        by_type.setdefault(name, []).append(i)
    texts = [None] * len(samples)
    for name, idxs in by_type.items():
        path = os.path.join(args.workdir, "decode-%s.bin" % name)
        with open(path, "wb") as f:
            for i in idxs:
                f.write(frame(samples[i][1]))
        rc, out, err = run([args.csi_view, "decode", "--type", name, "--show-secrets", "--no-annotations",
                            "--grpc", "--input-format", "raw", path])
        if rc != 0:
            failures.append("decode %s: exit %d: %s" % (name, rc, err.decode(errors="replace").strip()))
            continue
        parts = split_frames(out.decode())
        if len(idxs) == 1:
            parts = [out.decode()]
        for i, text in zip(idxs, parts):
            texts[i] = text

    def check_encode(i):
        name, b = samples[i]
        if texts[i] is None:
            return ("fail", "no decode output for %s" % name)
        rc, out, err = run(["protoc", "--encode=" + name, "-I", proto_dir, "-I", "/usr/include", proto_name],
                           texts[i].encode())
        if rc != 0:
            return ("fail", "protoc --encode %s rejected:\n%s\n%s" % (name, texts[i], err.decode(errors="replace")))
        if out == b:
            return ("bytes", None)
        cls = message_factory.GetMessageClass(by_name[name])
        a, c = cls(), cls()
        a.ParseFromString(b)
        c.ParseFromString(out)
        if a == c:
            return ("parsed", None)
        return ("fail", "protoc --encode %s gave different message:\n%s" % (name, texts[i]))

    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        for kind, msg in pool.map(check_encode, range(len(samples))):
            if kind == "bytes":
                stats["encode_equal_bytes"] += 1
            elif kind == "parsed":
                stats["encode_equal_parsed"] += 1
            else:
                stats["encode_failed"] += 1
                failures.append(msg)

    # raw: one csi-view call for every non-empty message.
    nonempty = [i for i, (_, b) in enumerate(samples) if b]
    path = os.path.join(args.workdir, "raw.bin")
    with open(path, "wb") as f:
        for i in nonempty:
            f.write(frame(samples[i][1]))
    rc, out, err = run([args.csi_view, "raw", "--show-secrets", "--grpc", "--input-format", "raw", path])
    if rc != 0:
        failures.append("raw: exit %d: %s" % (rc, err.decode(errors="replace")))
        raw_parts = []
    else:
        raw_parts = split_frames(out.decode())

    def check_raw(k):
        i = nonempty[k]
        rc, out, err = run(["protoc", "--decode_raw"], samples[i][1])
        if rc != 0:
            return ("fail", "protoc --decode_raw failed on %s" % samples[i][0])
        want = protoc_structure(out.decode())
        got = view_structure(raw_parts[k])
        if want == got:
            return ("ok", None)
        return ("fail", "raw differs for %s:\nprotoc:\n%s\ncsi-view:\n%s" % (samples[i][0], out.decode(), raw_parts[k]))

    if raw_parts:
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            for kind, msg in pool.map(check_raw, range(len(nonempty))):
                stats["raw_compared"] += 1
                if kind == "ok":
                    stats["raw_agree"] += 1
                else:
                    failures.append(msg)

    # detect: one call over all messages (empty ones count as not detected).
    path = os.path.join(args.workdir, "detect.bin")
    with open(path, "wb") as f:
        for i in nonempty:
            f.write(frame(samples[i][1]))
    rc, out, err = run([args.csi_view, "detect", "--top", "0", "--grpc", "--input-format", "raw", path])
    lines = out.decode().splitlines() if rc == 0 else []
    if rc != 0:
        failures.append("detect: exit %d: %s" % (rc, err.decode(errors="replace")))
    for k, line in enumerate(lines):
        name = samples[nonempty[k]][0]
        if line == "best: " + name:
            stats["detect_right"] += 1
        elif line.startswith("ambiguous:"):
            stats["detect_ambiguous"] += 1
            if name not in line.split(": ", 1)[1].split(", "):
                stats["detect_tie_without_right"] += 1
        else:
            stats["detect_wrong"] += 1
            if stats["detect_wrong"] <= 12:
                print("detect picked %s for %s (%s)" % (line, name, samples[nonempty[k]][1].hex()), file=sys.stderr)
    stats["detect_ambiguous"] += len(samples) - len(nonempty)
    stats["detect_right_pct"] = round(100.0 * stats["detect_right"] / len(samples), 1)
    shapes = {}
    for t in types:
        shapes.setdefault(shape(t), []).append(t.full_name)
    twins = {n for names in shapes.values() if len(names) > 1 for n in names}
    stats["types_with_same_shape_twin"] = len(twins)
    distinct = [k for k, i in enumerate(nonempty) if samples[i][0] not in twins]
    right_distinct = sum(1 for k in distinct if k < len(lines) and lines[k] == "best: " + samples[nonempty[k]][0])
    stats["detect_right_pct_of_nonempty_without_twin"] = round(100.0 * right_distinct / max(1, len(distinct)), 1)

    for f in failures[:10]:
        print("FAIL:", f[:3000], file=sys.stderr)
    print(json.dumps(stats))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
