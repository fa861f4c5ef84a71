"""The oracle of csi-view call's tests: the same CSI calls made by a Python grpcio client with
stubs grpcio-tools built from the corpus csi.proto.

  call_oracle.py text STUBS           steps (JSON, stdin) -> each request template in text
                                      format, as Python protobuf writes it (JSON list)
  call_oracle.py run STUBS TARGET     steps (JSON, stdin) -> one JSON line per step:
                                      {"code": 0, "response": {...}} or {"code": N}

A step is {"method": "csi.v1.Controller/CreateVolume", "request": "<JSON with {{NAME}}s>",
"save": {"NAME": "volume.volumeId"}}; "{{NAME}}"s are replaced by values saved from earlier
responses, and by the "vars" of the input ({"steps": [...], "vars": {...}, "secrets": {...},
"secret_fields": {"csi.v1.Controller/CreateVolume": "secrets"}}).
"""
import json
import sys

sys.path.insert(0, sys.argv[2])

import grpc  # noqa: E402
from google.protobuf import json_format, message_factory, text_format  # noqa: E402

import csi_pb2  # noqa: E402


def method_desc(path):
    service, method = path.rsplit("/", 1)
    return csi_pb2.DESCRIPTOR.services_by_name[service.rsplit(".", 1)[1]].methods_by_name[method]


def message_class(desc):
    return message_factory.GetMessageClass(desc)


def substitute(text, values):
    for k, v in values.items():
        text = text.replace("{{" + k + "}}", v)
    return text


def pick(d, dotted):
    for part in dotted.split("."):
        d = d[part]
    return d


def main():
    mode = sys.argv[1]
    spec = json.load(sys.stdin)
    if mode == "text":
        out = []
        for step in spec["steps"]:
            m = method_desc(step["method"])
            msg = json_format.Parse(step["request"], message_class(m.input_type)())
            out.append(text_format.MessageToString(msg))
        print(json.dumps(out))
        return
    target = sys.argv[3]
    channel = grpc.insecure_channel(target)
    values = dict(spec.get("vars", {}))
    for step in spec["steps"]:
        m = method_desc(step["method"])
        req = json_format.Parse(substitute(step["request"], values), message_class(m.input_type)())
        field = spec.get("secret_fields", {}).get(step["method"])
        if field:
            getattr(req, field).update(spec.get("secrets", {}))
        call = channel.unary_unary(
            "/" + step["method"],
            request_serializer=lambda x: x.SerializeToString(),
            response_deserializer=message_class(m.output_type).FromString,
        )
        try:
            resp = call(req, timeout=30)
        except grpc.RpcError as e:
            print(json.dumps({"code": e.code().value[0]}))
            continue
        d = json_format.MessageToDict(resp)
        for name, dotted in step.get("save", {}).items():
            values[name] = pick(d, dotted)
        print(json.dumps({"code": 0, "response": d}))


main()
