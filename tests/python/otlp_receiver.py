"""A loopback OTLP/HTTP trace receiver: decodes every `POST /v1/traces` (protobuf) with
the OpenTelemetry protocol's own Python types and prints each span as one JSON line:

    {"span": {"trace_id", "span_id", "parent_span_id", "name", "kind", "attributes",
              "links": [{"trace_id", "span_id"}], "service": ...}}

It binds 127.0.0.1 on a free port and prints `PORT <n>` once it is serving. Started by
the Rust tests, which read its output as spans arrive.
"""

import json
import socket
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


def value(v):
    kind = v.WhichOneof("value")
    return getattr(v, kind) if kind else None


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.path != "/v1/traces" or "protobuf" not in self.headers.get("Content-Type", ""):
            self.send_response(400)
            self.end_headers()
            return
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        for rs in request.resource_spans:
            resource = {a.key: value(a.value) for a in rs.resource.attributes}
            for ss in rs.scope_spans:
                for s in ss.spans:
                    print(json.dumps({"span": {
                        "trace_id": s.trace_id.hex(),
                        "span_id": s.span_id.hex(),
                        "parent_span_id": s.parent_span_id.hex(),
                        "name": s.name,
                        "kind": s.kind,
                        "attributes": {a.key: value(a.value) for a in s.attributes},
                        "links": [{"trace_id": l.trace_id.hex(), "span_id": l.span_id.hex()} for l in s.links],
                        "service": resource.get("service.name"),
                    }}), flush=True)
        out = ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args):
        pass


def main() -> None:
    server = HTTPServer(("127.0.0.1", 0), Handler)
    print(f"PORT {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
