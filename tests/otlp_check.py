"""Reads OTLP/HTTP JSON trace requests (one per line) and parses each, strictly, into the
official protobuf message `ExportTraceServiceRequest` (the opentelemetry-proto package), as an
OTLP receiver does: an unknown field, a wrong type or an id that is not lower-case hex of the
right length fails. Prints the number of spans read."""

import base64
import json
import re
import sys

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

IDS = {"traceId": 32, "spanId": 16, "parentSpanId": 16}

spans = 0
for line in sys.stdin:
    request = json.loads(line)
    for resource in request["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                # OTLP's JSON encoding writes ids as hex where proto3's JSON mapping has base64.
                for key, length in IDS.items():
                    if key in span:
                        value = span[key]
                        if not re.fullmatch("[0-9a-f]{%d}" % length, value):
                            sys.exit(f"{key} is not {length} lower-case hex digits: {value!r}")
                        span[key] = base64.b64encode(bytes.fromhex(value)).decode()
    message = json_format.Parse(
        json.dumps(request),
        trace_service_pb2.ExportTraceServiceRequest(),
        ignore_unknown_fields=False,
    )
    for resource in message.resource_spans:
        for scope in resource.scope_spans:
            spans += len(scope.spans)
print(spans)
