"""One CSI call as a one-shot Python grpcio client makes it (the baseline of call_latency.py):
stubs built by grpcio-tools from the corpus csi.proto, a channel, one call, the response printed.

  oneshot.py STUBS ENDPOINT METHOD [JSON]     METHOD: GetPluginInfo, CreateVolume, ...
"""
import sys

sys.path.insert(0, sys.argv[1])

import grpc  # noqa: E402
from google.protobuf import json_format, message_factory  # noqa: E402

import csi_pb2  # noqa: E402

endpoint, name = sys.argv[2], sys.argv[3]
method = next(
    s.methods_by_name[name] for s in csi_pb2.DESCRIPTOR.services_by_name.values() if name in s.methods_by_name
)
request = message_factory.GetMessageClass(method.input_type)()
json_format.Parse(sys.argv[4] if len(sys.argv) > 4 else "{}", request)
call = grpc.insecure_channel(endpoint).unary_unary(
    "/%s/%s" % (method.containing_service.full_name, method.name),
    request_serializer=lambda x: x.SerializeToString(),
    response_deserializer=message_factory.GetMessageClass(method.output_type).FromString,
)
print(call(request, timeout=30))
