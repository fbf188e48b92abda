"""Calls the orchestrator as one A2A agent with the official Python SDK 1.x (a2a-sdk 1.3,
A2A v1.0), streaming, answering a question, and with a bearer token when one is set.

    pip install "a2a-sdk[http-server,grpc]==1.3.0"
    ORCHESTRATOR_TOKEN=... python examples/python_v1_client.py http://127.0.0.1:8080 [BINDING]

BINDING is JSONRPC (the default), HTTP+JSON or GRPC: the client takes the interface the
card lists for it. The token, when ORCHESTRATOR_TOKEN is set, goes with every call as
`Authorization: Bearer` (gRPC: the same metadata). Runs the travel-planning workflow:
streams the run (every agent's artifacts as they arrive), answers the hotel's question
on the same task naming its step, and prints the itinerary.
"""

import asyncio
import os
import sys
import uuid

import grpc
import httpx
from google.protobuf import json_format

from a2a.client import ClientConfig, ClientFactory
from a2a.client.card_resolver import A2ACardResolver
from a2a.types import Message, SendMessageRequest, TaskState


def message(parts, task_id="", context_id="", metadata=None):
    body = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": parts}
    if task_id:
        body.update(taskId=task_id, contextId=context_id)
    if metadata:
        body["metadata"] = metadata
    return json_format.ParseDict(body, Message())


class _Bearer:
    """The token as gRPC metadata, as HTTP calls carry it in a header."""

    def __init__(self, token):
        self.pair = ("authorization", f"Bearer {token}")

    def _with(self, details):
        metadata = list(details.metadata or []) + [self.pair]
        return details._replace(metadata=metadata)


# grpcio files an interceptor under one kind only: each kind needs its own.
class UnaryBearer(_Bearer, grpc.aio.UnaryUnaryClientInterceptor):
    async def intercept_unary_unary(self, continuation, details, request):
        return await continuation(self._with(details), request)


class StreamBearer(_Bearer, grpc.aio.UnaryStreamClientInterceptor):
    async def intercept_unary_stream(self, continuation, details, request):
        return await continuation(self._with(details), request)


async def main(base_url, binding):
    token = os.environ.get("ORCHESTRATOR_TOKEN")
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    interceptors = [UnaryBearer(token), StreamBearer(token)] if token else []
    async with httpx.AsyncClient(timeout=60, headers=headers) as http:
        card = await A2ACardResolver(http, base_url).get_agent_card()
        print(f"{card.name}: skills {[s.id for s in card.skills]}")
        config = ClientConfig(
            streaming=True,
            httpx_client=http,
            supported_protocol_bindings=[binding],
            grpc_channel_factory=lambda url: grpc.aio.insecure_channel(url, interceptors=interceptors),
        )
        client = ClientFactory(config).create(card)
        request = message([
            {"text": "Plan 5 nights in Lisbon from London for 2"},
            {"data": {"workflow": "travel-planning", "input": {
                "origin": "London", "destination": "Lisbon", "depart": "2027-03-10",
                "nights": 5, "travellers": 2}}},
        ])
        task_id = context_id = ""
        result = ""
        while True:
            status = None
            async for event in client.send_message(SendMessageRequest(message=request)):
                if event.HasField("task"):
                    task_id, context_id = event.task.id, event.task.context_id
                    status = event.task.status
                elif event.HasField("status_update"):
                    task_id, context_id = event.status_update.task_id, event.status_update.context_id
                    status = event.status_update.status
                elif event.HasField("artifact_update"):
                    update = event.artifact_update
                    if update.artifact.artifact_id == "result":
                        result += "".join(p.text for p in update.artifact.parts)
                    elif update.last_chunk:
                        print(f"  artifact {update.artifact.artifact_id} complete")
            if status.state != TaskState.TASK_STATE_INPUT_REQUIRED:
                break
            # A question from a step: answer it on the same task, naming the step.
            asked = json_format.MessageToDict(status.message)
            pending = next(p["data"] for p in asked["parts"] if "data" in p)["pendingQuestions"][0]
            print(f"? {pending['prompt']}\n  -> 1")
            request = message([{"text": "1"}], task_id, context_id, {"step": pending["step"]})
        state = TaskState.Name(status.state).removeprefix("TASK_STATE_").lower()
        print(f"workflow {state}")
        print(result)
        sys.exit(0 if status.state == TaskState.TASK_STATE_COMPLETED else 1)


if __name__ == "__main__":
    asyncio.run(main(
        sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8080",
        sys.argv[2] if len(sys.argv) > 2 else "JSONRPC",
    ))
