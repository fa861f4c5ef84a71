#!/usr/bin/env python3
"""Oracle for csi-view: random messages of every csi.v1 type, encoded by Python protobuf.

For each message:
  * `csi-view decode --type X --show-secrets --no-annotations` must be accepted by
    `protoc --encode=X` and give back equal bytes (maps serialised in key order on both sides,
    so a byte mismatch is reported, then compared as parsed messages);
  * `csi-view raw --show-secrets` must agree with `protoc --decode_raw` on the structure
    (field numbers, nesting, wire kinds, values and payload bytes);
  * `csi-view detect` is compared with what Python protobuf says about the bytes: which of the
    types csi-view knows (csi.v1 and the csi-addons) read them exactly, and of those which have
    every REQUIRED field set and only declared enum values (see `readers`).

Usage: oracle.py CSI_VIEW PROTO_FILE WORKDIR [--addon PROTO ...] [--facts JSON] [--per-type N]
                 [--seed S] [--fill P] [--required-always] [--detect-only]
Prints a JSON summary on the last line; exits 1 when a decode/encode/raw check fails or when
detection breaks a rule no correct detector breaks: a message only one type reads best not
named first, a wrong type named where the right one reads at least as well, or a tie listed
without the right type.
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

# With `--required-always`, every REQUIRED field (and one field of every required oneof) is set
# to a value that reaches the wire, as in any message a real CO or plugin sends.
REQUIRED_ALWAYS = False

# REQUIRED facts by full type name: {"fields": [numbers], "oneofs": [names]} (see `--facts`).
FACTS = {}

ALPHABET = "abcXYZ019 _-./:é雪🙂\"\\\n\t"


def rand_string(rng, nonempty=False):
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(1 if nonempty else 0, 12)))


def rand_scalar(rng, f, nonzero=False):
    """A random value of `f`'s type; with `nonzero`, never the default (a default is not sent)."""
    from google.protobuf.descriptor import FieldDescriptor as F
    t = f.type
    while True:
        if t == F.TYPE_STRING:
            v = rand_string(rng, nonzero)
        elif t == F.TYPE_BYTES:
            v = bytes(rng.randint(0, 255) for _ in range(rng.randint(1 if nonzero else 0, 10)))
        elif t == F.TYPE_BOOL:
            v = True if nonzero else rng.random() < 0.5
        elif t == F.TYPE_ENUM:
            values = [v.number for v in f.enum_type.values]
            if nonzero and any(values):
                values = [v for v in values if v]
            v = rng.choice(values)
        elif t in (F.TYPE_INT32, F.TYPE_SINT32, F.TYPE_SFIXED32):
            v = rng.choice([0, 1, -1, 300, rng.randint(-2**31, 2**31 - 1)])
        elif t in (F.TYPE_INT64, F.TYPE_SINT64, F.TYPE_SFIXED64):
            v = rng.choice([1, -5, 1 << 40, rng.randint(-2**63, 2**63 - 1)])
        elif t in (F.TYPE_UINT32, F.TYPE_FIXED32):
            v = rng.randint(0, 2**32 - 1)
        elif t in (F.TYPE_UINT64, F.TYPE_FIXED64):
            v = rng.randint(0, 2**64 - 1)
        elif t == F.TYPE_FLOAT:
            v = struct.unpack("<f", struct.pack("<f", rng.uniform(-1e6, 1e6)))[0]
        elif t == F.TYPE_DOUBLE:
            v = rng.choice([0.5, -2.25, 1e-7, 1e300, rng.uniform(-1e9, 1e9)])
        else:
            raise ValueError(t)
        if not nonzero or v:
            return v


def fill(rng, msg, depth):
    d = msg.DESCRIPTOR
    facts = FACTS.get(d.full_name, {})
    required = set(facts.get("fields", [])) if REQUIRED_ALWAYS else set()
    required_oneofs = set(facts.get("oneofs", [])) if REQUIRED_ALWAYS else set()
    chosen_oneof = {}
    for o in d.oneofs:
        if len(o.fields) > 1 or not o.fields[0].has_presence or o.name != "_" + o.fields[0].name:
            none = [] if o.name in required_oneofs else [None]
            chosen_oneof[o.name] = rng.choice(list(o.fields) + none)
    for f in d.fields:
        must = f.number in required
        o = f.containing_oneof
        if o is not None and o.name in chosen_oneof:
            if chosen_oneof[o.name] is not f:
                continue
            must = must or o.name in required_oneofs
        elif not must and rng.random() >= FILL:
            continue
        # Nesting stops at depth 4, except for what a REQUIRED field needs.
        deep = (depth >= 4 and not must) or depth >= 12
        if f.message_type is not None and f.message_type.GetOptions().map_entry:
            kf, vf = f.message_type.fields_by_name["key"], f.message_type.fields_by_name["value"]
            m = getattr(msg, f.name)
            for _ in range(rng.randint(1, 3)):
                k = rand_scalar(rng, kf)
                if vf.message_type is not None:
                    if not deep:
                        fill(rng, m[k], depth + 1)
                else:
                    m[k] = rand_scalar(rng, vf)
        elif f.is_repeated:
            lst = getattr(msg, f.name)
            for _ in range(rng.randint(1, 3)):
                if f.message_type is not None:
                    if not deep:
                        fill(rng, lst.add(), depth + 1)
                else:
                    lst.append(rand_scalar(rng, f))
        elif f.message_type is not None:
            if not deep:
                sub = getattr(msg, f.name)
                sub.SetInParent()
                fill(rng, sub, depth + 1)
        else:
            setattr(msg, f.name, rand_scalar(rng, f, nonzero=must))


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


# --- which types read the bytes: Python protobuf's answer, independent of csi-view ---------

def build_readers(proto, addons, workdir):
    """Every type csi-view ranks (csi.v1 and the csi-addons given), compiled by grpc_tools'
    protoc into a pool of their own. The addons import the CSI proto by its Go path."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    inc = os.path.join(workdir, "readers-include")
    csi_path = "github.com/container-storage-interface/spec/lib/go/csi/csi.proto"
    files = [(proto, csi_path)] + [(a, os.path.basename(a)) for a in addons]
    for src, name in files:
        dst = os.path.join(inc, name)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if not os.path.exists(dst):
            os.symlink(os.path.abspath(src), dst)
    out = os.path.join(workdir, "readers.pb")
    subprocess.run([sys.executable, "-m", "grpc_tools.protoc", "-I", inc, "-I", "/usr/include",
                    "--include_imports", "--descriptor_set_out=" + out] + [n for _, n in files],
                   check=True)
    with open(out, "rb") as f:
        fds = descriptor_pb2.FileDescriptorSet.FromString(f.read())
    pool = descriptor_pool.DescriptorPool()
    for f in fds.file:
        pool.Add(f)
    return [(t, message_factory.GetMessageClass(t), {f.number for f in t.fields})
            for _, name in files for t in all_types(pool.FindFileByName(name))]


def wire_records(b):
    """(number, wire type, value) of each record of `b`; ValueError when `b` is not records."""
    out, i, n = [], 0, len(b)

    def varint(i):
        v, shift = 0, 0
        while True:
            if i >= n or shift > 63:
                raise ValueError("bad varint")
            c = b[i]
            v |= (c & 0x7F) << shift
            i, shift = i + 1, shift + 7
            if c < 0x80:
                return v, i

    while i < n:
        tag, i = varint(i)
        num, wt = tag >> 3, tag & 7
        if wt == 0:
            v, i = varint(i)
        elif wt in (1, 5):
            size = 8 if wt == 1 else 4
            v, i = b[i:i + size], i + size
        elif wt == 2:
            size, i = varint(i)
            v, i = b[i:i + size], i + size
        else:
            raise ValueError("group or invalid wire type")
        if i > n or num == 0:
            raise ValueError("truncated record")
        out.append((num, wt, v))
    return out


def is_map(f):
    return f.message_type is not None and f.message_type.GetOptions().map_entry


def canon(desc, b):
    """The records of `b` read as `desc`, nested messages likewise, in field-number order (the
    order of one field's values kept), each map's entries sorted.

    Which field comes first and the order of a map's entries are not part of the message's value
    (parsers accept any order; Go writes maps in random order), so they are the differences
    between the bytes and their re-encoding that do not count against a type."""
    out = []
    for num, wt, v in wire_records(b):
        f = desc.fields_by_number.get(num)
        if f is not None and wt == 2 and f.message_type is not None:
            v = canon(f.message_type, v)
        out.append((num, wt, v))
    out.sort(key=lambda r: r[0])
    for num in {r[0] for r in out}:
        f = desc.fields_by_number.get(num)
        if f is not None and is_map(f):
            idx = [i for i, r in enumerate(out) if r[0] == num]
            for i, r in zip(idx, sorted((out[i] for i in idx), key=repr)):
                out[i] = r
    return out


def sub_messages(m):
    for f, v in m.ListFields():
        if is_map(f):
            if f.message_type.fields_by_name["value"].message_type is not None:
                yield from v.values()
        elif f.message_type is not None:
            yield from (v if f.is_repeated else [v])


def has_unknown(m):
    from google.protobuf import unknown_fields
    return len(unknown_fields.UnknownFieldSet(m)) > 0 or any(has_unknown(x) for x in sub_messages(m))


def reads_exactly(t, cls, b):
    """The message `cls` reads from `b` when it reads it exactly: it parses (valid UTF-8
    included), nothing lands in unknown fields at any depth, and re-encoding gives `b` back
    (map entry order aside: see `canon`). Otherwise None."""
    from google.protobuf.message import DecodeError
    try:
        m = cls.FromString(b)
    except DecodeError:
        return None
    if has_unknown(m):
        return None
    again = m.SerializeToString(deterministic=True)
    if again != b:
        try:
            if canon(t, b) != canon(t, again):
                return None
        except ValueError:
            return None
    return m


def missing_required(m):
    """REQUIRED fields and required oneofs left unset, in `m` and every message inside it."""
    facts = FACTS.get(m.DESCRIPTOR.full_name, {})
    n = 0
    for num in facts.get("fields", []):
        f = m.DESCRIPTOR.fields_by_number[num]
        if f.is_repeated:
            present = len(getattr(m, f.name)) > 0
        elif f.has_presence:
            present = m.HasField(f.name)
        else:
            present = getattr(m, f.name) != f.default_value
        n += not present
    n += sum(m.WhichOneof(o) is None for o in facts.get("oneofs", []))
    return n + sum(missing_required(x) for x in sub_messages(m))


def undeclared_enums(m):
    """Enum values that their enum does not declare, in `m` and every message inside it."""
    n = 0
    for f, v in m.ListFields():
        if is_map(f):
            e = f.message_type.fields_by_name["value"].enum_type
            values = list(v.values()) if e is not None else []
        else:
            e = f.enum_type
            values = (list(v) if f.is_repeated else [v]) if e is not None else []
        n += sum(x not in e.values_by_number for x in values)
    return n + sum(undeclared_enums(x) for x in sub_messages(m))


def readers(b):
    """{type name: (every REQUIRED field set, every enum value declared)} for each type that
    reads `b` exactly."""
    try:
        top = {num for num, _, _ in wire_records(b)}
    except ValueError:
        top = None
    out = {}
    for t, cls, numbers in READERS:
        if top is not None and not top <= numbers:
            continue  # an unknown field: not an exact reader (a shortcut, same answer)
        m = reads_exactly(t, cls, b)
        if m is not None:
            out[t.full_name] = (missing_required(m) == 0, undeclared_enums(m) == 0)
    return out


def best_readers(exact, preferences=2):
    """The exact readers left after preferring, in turn, those with every REQUIRED field set and
    (with `preferences` 2) those with only declared enum values."""
    if not exact:
        return set()
    key = {n: k[:preferences] for n, k in exact.items()}
    top = max(key.values())
    return {n for n, k in key.items() if k == top}


READERS = []


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
    ap.add_argument("--addon", action="append", default=[],
                    help="a csi-addons .proto whose types csi-view also ranks (repeatable)")
    ap.add_argument("--facts", help="JSON {type: {fields: [REQUIRED numbers], oneofs: [required oneofs]}}")
    ap.add_argument("--required-always", action="store_true",
                    help="set every REQUIRED field (optional ones still at --fill)")
    ap.add_argument("--detect-only", action="store_true", help="skip the decode and raw checks")
    args = ap.parse_args()
    global FILL, REQUIRED_ALWAYS, FACTS, READERS
    FILL = args.fill
    REQUIRED_ALWAYS = args.required_always
    if args.facts:
        with open(args.facts) as f:
            FACTS = json.load(f)
    elif REQUIRED_ALWAYS:
        sys.exit("--required-always needs --facts")
    rng = random.Random(args.seed)
    mod = gen_python(args.proto, args.workdir)
    READERS = build_readers(args.proto, args.addon, args.workdir)
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
    stats = {"types": len(types), "candidate_types": len(READERS), "messages": len(samples),
             "fill": FILL, "required_always": REQUIRED_ALWAYS, "encode_equal_bytes": 0,
             "encode_equal_parsed": 0, "encode_failed": 0, "raw_compared": 0, "raw_agree": 0}
    if args.detect_only:
        detect(args, samples, stats, failures)
        finish(stats, failures)

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

    detect(args, samples, stats, failures)
    finish(stats, failures)


def detect(args, samples, stats, failures):
    """Runs `csi-view detect` over every message and compares it with Python's readers."""
    names = {t.full_name for t, _, _ in READERS}
    # Both sides must rank the same types.
    rc, out, err = run([args.csi_view, "detect", "--top", "100000", "--input-format", "hex"], b"0801")
    ranked = {line.split()[1] for line in out.decode().splitlines()[1:]} if rc == 0 else set()
    if ranked != names:
        failures.append("csi-view ranks other types than the oracle: only csi-view %s; only oracle %s"
                        % (sorted(ranked - names)[:5], sorted(names - ranked)[:5]))

    path = os.path.join(args.workdir, "detect.bin")
    with open(path, "wb") as f:
        for _, b in samples:
            f.write(frame(b))
    rc, out, err = run([args.csi_view, "detect", "--top", "0", "--grpc", "--input-format", "raw", path])
    lines = out.decode().splitlines() if rc == 0 else []
    if rc != 0 or len(lines) != len(samples):
        failures.append("detect: exit %d, %d lines for %d messages: %s"
                        % (rc, len(lines), len(samples), err.decode(errors="replace")))
        return
    shapes = {}
    for t, _, _ in READERS:
        shapes.setdefault(shape(t), []).append(t.full_name)
    twins = {n: set(names) for names in shapes.values() for n in names}
    stats["types_with_same_shape_twin"] = len({n for n, _ in samples if len(twins[n]) > 1})
    # Why the oracle finds no single best reader: the message is empty, only types of the very
    # same shape tie, other types read it as well, or (REQUIRED fields missing) another is preferred.
    why = {"why_empty": 0, "why_twins_only": 0, "why_others_read_as_well": 0, "why_other_preferred": 0}
    stats.update(why)
    keys = ["ceiling_exact", "ceiling_required", "ceiling", "detect_right", "detect_ambiguous",
            "detect_wrong", "detect_right_of_identifiable", "spec_valid", "detect_wrong_of_spec_valid",
            "detect_agrees_with_oracle", "missed_identifiable", "wrong_where_right_reads_best",
            "tie_without_right", "empty"]
    for k in keys:
        stats[k] = 0
    shown = 0
    for (name, b), line in zip(samples, lines):
        exact = readers(b)
        if name not in exact:
            failures.append("oracle: %s does not read its own bytes %s" % (name, b.hex()))
            continue
        best = best_readers(exact)
        stats["empty"] += not b
        stats["ceiling_exact"] += set(exact) == {name}
        stats["ceiling_required"] += best_readers(exact, 1) == {name}
        identifiable = best == {name}
        stats["ceiling"] += identifiable
        if not identifiable:
            stats["why_empty" if not b else "why_other_preferred" if name not in best
                  else "why_twins_only" if best <= twins[name] else "why_others_read_as_well"] += 1
        valid = exact[name][0]
        stats["spec_valid"] += valid
        kind, _, said = line.partition(": ")
        if kind == "empty":
            # csi-view says every type reads zero bytes (every field unset): a tie of them all.
            kind, tied = "ambiguous", {t.full_name for t, _, _ in READERS}
        else:
            tied = set(said.split(", ")) if kind == "ambiguous" else {said}
        right = kind == "best" and said == name
        wrong = kind != "ambiguous" and said != name
        stats["detect_right"] += right
        stats["detect_ambiguous"] += kind == "ambiguous"
        stats["detect_wrong"] += wrong
        stats["detect_right_of_identifiable"] += right and identifiable
        stats["detect_wrong_of_spec_valid"] += wrong and valid
        agrees = tied == best and (kind == "ambiguous") == (len(best) > 1)
        stats["detect_agrees_with_oracle"] += agrees
        # What no correct detector does.
        broken = []
        if identifiable and not right:
            stats["missed_identifiable"] += 1
            broken.append("the only best reader is not named")
        if wrong and name in best:
            stats["wrong_where_right_reads_best"] += 1
            broken.append("a wrong type named where the right one reads as well")
        if kind == "ambiguous" and name in best and name not in tied:
            stats["tie_without_right"] += 1
            broken.append("a tie listed without the right type")
        for why in broken:
            failures.append("detect: %s: %s for %s %s (oracle's best: %s)"
                            % (why, line[:200], name, b.hex(), sorted(best)[:6]))
        if not agrees and not broken and shown < 5:
            shown += 1
            print("detect differs from the oracle (allowed): %s for %s %s (oracle's best: %s)"
                  % (line[:200], name, b.hex(), sorted(best)[:6]), file=sys.stderr)
    n = len(samples)
    pct = lambda k, of=n: round(100.0 * stats[k] / max(1, of), 1)
    stats["detect_right_pct"] = pct("detect_right")
    stats["ceiling_pct"] = pct("ceiling")
    stats["ceiling_exact_pct"] = pct("ceiling_exact")
    stats["ceiling_required_pct"] = pct("ceiling_required")
    stats["detect_right_of_identifiable_pct"] = pct("detect_right_of_identifiable", stats["ceiling"])
    stats["detect_ambiguous_pct"] = pct("detect_ambiguous")
    stats["detect_wrong_pct"] = pct("detect_wrong")


def finish(stats, failures):
    for f in failures[:10]:
        print("FAIL:", f[:3000], file=sys.stderr)
    print(json.dumps(stats))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
