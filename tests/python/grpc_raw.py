"""gRPC calls the SDK would never make, with grpcio (gRPC's own Python library), to see
what our gRPC binding answers: raw bytes in, the status and its google.rpc.Status
details out.

    python grpc_raw.py HOST:PORT CASE

CASE is one of: unknown_method, malformed, oversized, deadline, version, anonymous,
subscribe_unknown (a stream refused at once, its call carrying a deadline), ok.
Prints one JSON line: {"code": "...", "message": "...", "reasons": [ErrorInfo reasons]}.
"""

import asyncio
import json
import sys
import uuid

import grpc
from google.rpc import error_details_pb2, status_pb2

from a2a.types import Message, Part, Role, SendMessageRequest


def send_request(text: str) -> bytes:
    message = Message(role=Role.ROLE_USER, parts=[Part(text=text)], message_id=str(uuid.uuid4()))
    return SendMessageRequest(message=message).SerializeToString()


async def main() -> None:
    target, case = sys.argv[1], sys.argv[2]
    metadata = []
    timeout = 20.0
    method = "/lf.a2a.v1.A2AService/SendMessage"
    body = send_request("hello")
    if case == "unknown_method":
        method = "/lf.a2a.v1.A2AService/NoSuchMethod"
    elif case == "malformed":
        body = b"\x0a\xff\xff\xff\xff\x0f"
    elif case == "oversized":
        body = send_request("x" * (200 * 1024))
    elif case == "deadline":
        # Many slow words: the blocking send cannot finish within the deadline.
        body = send_request(" ".join(["slow"] * 50))
        timeout = 0.5
    elif case == "version":
        metadata = [("a2a-version", "0.3")]
    elif case == "version_empty":
        # Empty means 0.3 (spec §3.6.2), which gRPC does not carry here.
        metadata = [("a2a-version", "")]
    async with grpc.aio.insecure_channel(target) as channel:
        try:
            if case == "subscribe_unknown":
                from a2a.types import SubscribeToTaskRequest

                stream = channel.unary_stream(
                    "/lf.a2a.v1.A2AService/SubscribeToTask",
                    request_serializer=None,
                    response_deserializer=None,
                )
                request = SubscribeToTaskRequest(id="no-such-task").SerializeToString()
                async for _ in stream(request, timeout=timeout, metadata=metadata):
                    pass
            else:
                call = channel.unary_unary(
                    method, request_serializer=None, response_deserializer=None
                )
                await call(body, timeout=timeout, metadata=metadata)
            print(json.dumps({"code": "OK"}))
            return
        except grpc.aio.AioRpcError as e:
            reasons = []
            for key, value in e.trailing_metadata() or []:
                if key == "grpc-status-details-bin":
                    status = status_pb2.Status.FromString(value)
                    for detail in status.details:
                        info = error_details_pb2.ErrorInfo()
                        if detail.Unpack(info):
                            reasons.append(info.reason)
            print(json.dumps({"code": e.code().name, "message": e.details(), "reasons": reasons}))


asyncio.run(main())
