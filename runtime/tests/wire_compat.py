"""Oracle side of tests/wire_compat.rs: Python protobuf classes from the corpus csi.proto.

generate PROTO DIR COUNT: compile PROTO with grpcio-tools into DIR, write COUNT random messages
  (round-robin over every message type, unknown fields appended) to DIR/input.txt.
check PROTO DIR: parse DIR/input.txt and DIR/output.txt (the Rust re-encoding) and require
  equal messages; unknown fields are dropped by prost, so they are discarded before comparing.
"""

import importlib
import os
import random
import struct
import sys

from google.protobuf import descriptor as D


def compile_proto(proto, out):
    import grpc_tools
    from grpc_tools import protoc

    include = os.path.join(os.path.dirname(grpc_tools.__file__), "_proto")
    args = ["protoc", "-I" + os.path.dirname(os.path.abspath(proto)), "-I" + include, "--python_out=" + out, os.path.basename(proto)]
    if protoc.main(args) != 0:
        sys.exit("grpc_tools.protoc failed on " + proto)
    sys.path.insert(0, out)
    return importlib.import_module(os.path.basename(proto)[: -len(".proto")] + "_pb2")


def all_types(module):
    out = []

    def walk(d):
        if d.GetOptions().map_entry:
            return
        out.append(d)
        for n in d.nested_types:
            walk(n)

    for d in module.DESCRIPTOR.message_types_by_name.values():
        walk(d)
    return out


def message_class(d):
    from google.protobuf import message_factory

    return message_factory.GetMessageClass(d)


KINDS = {}


def is_repeated(f):
    # protobuf 6 on has `is_repeated`; older releases only `label`.
    return f.is_repeated if hasattr(f, "is_repeated") else f.label == D.FieldDescriptor.LABEL_REPEATED


def rand_string(rng):
    alphabet = "abcXYZ019 -_./:=é漢字🙂"
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))


def rand_scalar(f, rng):
    t = f.type
    KINDS[t] = KINDS.get(t, 0) + 1
    if t == D.FieldDescriptor.TYPE_STRING:
        return rand_string(rng)
    if t == D.FieldDescriptor.TYPE_BYTES:
        return bytes(rng.randrange(256) for _ in range(rng.randint(0, 10)))
    if t == D.FieldDescriptor.TYPE_BOOL:
        return rng.random() < 0.5
    if t in (D.FieldDescriptor.TYPE_INT32, D.FieldDescriptor.TYPE_SINT32, D.FieldDescriptor.TYPE_SFIXED32):
        return rng.choice([0, 1, -1, 2**31 - 1, -(2**31), rng.randint(-(2**31), 2**31 - 1)])
    if t in (D.FieldDescriptor.TYPE_INT64, D.FieldDescriptor.TYPE_SINT64, D.FieldDescriptor.TYPE_SFIXED64):
        return rng.choice([0, 1, -1, 2**63 - 1, -(2**63), rng.randint(-(2**63), 2**63 - 1)])
    if t in (D.FieldDescriptor.TYPE_UINT32, D.FieldDescriptor.TYPE_FIXED32):
        return rng.randint(0, 2**32 - 1)
    if t in (D.FieldDescriptor.TYPE_UINT64, D.FieldDescriptor.TYPE_FIXED64):
        return rng.randint(0, 2**64 - 1)
    if t == D.FieldDescriptor.TYPE_FLOAT:
        return struct.unpack("f", struct.pack("f", rng.uniform(-1e6, 1e6)))[0]
    if t == D.FieldDescriptor.TYPE_DOUBLE:
        return rng.uniform(-1e12, 1e12)
    if t == D.FieldDescriptor.TYPE_ENUM:
        # Open enums keep unknown numbers; prost keeps them as i32.
        numbers = [v.number for v in f.enum_type.values]
        return rng.choice(numbers + [max(numbers) + 17])
    raise ValueError("unexpected field type %d" % t)


def fill(msg, rng, depth):
    d = msg.DESCRIPTOR
    chosen = {}
    for o in d.oneofs:
        if len(o.fields) == 1 and o.name == "_" + o.fields[0].name:
            continue  # synthetic oneof of a proto3 optional field
        chosen[o.name] = rng.choice(list(o.fields) + [None])
        if chosen[o.name] is not None:
            KINDS["oneof"] = KINDS.get("oneof", 0) + 1
    for f in d.fields:
        o = f.containing_oneof
        if o is not None and o.name in chosen and chosen[o.name] is not f:
            continue
        if o is None and rng.random() < 0.2:
            continue
        if f.message_type is not None and f.message_type.GetOptions().map_entry:
            KINDS["map"] = KINDS.get("map", 0) + 1
            vf = f.message_type.fields_by_name["value"]
            kf = f.message_type.fields_by_name["key"]
            m = getattr(msg, f.name)
            for _ in range(rng.randint(0, 3)):
                k = rand_scalar(kf, rng)
                if vf.message_type is not None:
                    fill(m[k], rng, depth + 1)
                else:
                    m[k] = rand_scalar(vf, rng)
        elif is_repeated(f):
            KINDS["repeated"] = KINDS.get("repeated", 0) + 1
            r = getattr(msg, f.name)
            for _ in range(rng.randint(0, 3)):
                if f.message_type is not None:
                    if depth < 5:
                        fill(r.add(), rng, depth + 1)
                else:
                    r.append(rand_scalar(f, rng))
        elif f.message_type is not None:
            KINDS["message"] = KINDS.get("message", 0) + 1
            if depth < 5:
                sub = getattr(msg, f.name)
                sub.SetInParent()
                fill(sub, rng, depth + 1)
        else:
            setattr(msg, f.name, rand_scalar(f, rng))


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def unknown_fields(rng):
    """Fields numbered beyond any CSI field: varint, fixed64, length-delimited, fixed32."""
    out = b""
    for _ in range(rng.randint(1, 3)):
        number = rng.randint(9000, 9999)
        wire = rng.choice([0, 1, 2, 5])
        out += varint(number << 3 | wire)
        if wire == 0:
            out += varint(rng.randint(0, 2**64 - 1))
        elif wire == 1:
            out += bytes(rng.randrange(256) for _ in range(8))
        elif wire == 2:
            payload = bytes(rng.randrange(256) for _ in range(rng.randint(0, 9)))
            out += varint(len(payload)) + payload
        else:
            out += bytes(rng.randrange(256) for _ in range(4))
    return out


def generate(proto, out, count):
    module = compile_proto(proto, out)
    types = all_types(module)
    rng = random.Random(20240601)
    lines = []
    with_unknown = 0
    for i in range(count):
        d = types[i % len(types)]
        msg = message_class(d)()
        fill(msg, rng, 0)
        data = msg.SerializeToString()
        if rng.random() < 0.5:
            data += unknown_fields(rng)
            with_unknown += 1
        lines.append("%s %s\n" % (d.full_name, data.hex()))
    with open(os.path.join(out, "input.txt"), "w") as fh:
        fh.writelines(lines)
    kinds = KINDS
    names = {getattr(D.FieldDescriptor, n): n for n in dir(D.FieldDescriptor) if n.startswith("TYPE_")}
    summary = ", ".join("%s=%d" % (names.get(k, k), v) for k, v in sorted(kinds.items(), key=lambda kv: str(kv[0])))
    print("generated: %d messages over %d types, %d with unknown fields; field kinds filled: %s" % (count, len(types), with_unknown, summary))


def check(proto, out):
    module = compile_proto(proto, out)
    by_name = {d.full_name: d for d in all_types(module)}
    with open(os.path.join(out, "input.txt")) as fh:
        inputs = fh.read().splitlines()
    with open(os.path.join(out, "output.txt")) as fh:
        outputs = fh.read().splitlines()
    if len(inputs) != len(outputs):
        sys.exit("%d inputs but %d outputs" % (len(inputs), len(outputs)))
    bad = 0
    for i, (a, b) in enumerate(zip(inputs, outputs)):
        name_a, hex_a = a.split(" ", 1) if " " in a else (a, "")
        name_b, hex_b = b.split(" ", 1) if " " in b else (b, "")
        cls = message_class(by_name[name_a])
        want = cls.FromString(bytes.fromhex(hex_a))
        want.DiscardUnknownFields()
        got = cls.FromString(bytes.fromhex(hex_b))
        same = name_a == name_b and want == got
        same = same and got.SerializeToString(deterministic=True) == want.SerializeToString(deterministic=True)
        if not same:
            bad += 1
            if bad <= 5:
                print("MISMATCH #%d %s\n want: %s\n got:  %s" % (i, name_a, want, got))
    print("equal: %d of %d messages" % (len(inputs) - bad, len(inputs)))
    if bad:
        sys.exit("%d messages differ after the Rust round trip" % bad)


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "generate":
        generate(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif cmd == "check":
        check(sys.argv[2], sys.argv[3])
    else:
        sys.exit("usage: wire_compat.py generate PROTO DIR COUNT | check PROTO DIR")
