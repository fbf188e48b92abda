"""Scenarios in which the official Python SDK 1.x client (a2a-sdk 1.3, its defaults: no
v0.3 compatibility switch) drives an A2A server over A2A v1.0.

    python sdk1_client.py BASE_URL BINDING SCENARIO

BINDING is JSONRPC, HTTP+JSON or GRPC: the client is given only that binding, and so must
use the interface the server's card lists for it (GRPC over the SDK's own gRPC
transport, an insecure grpcio channel to the card's `host:port`). Each scenario asserts what a conforming
server must do and exits non-zero (with the reason) when it does not; it prints "ok".

The `wire` scenario talks HTTP directly and parses every body and stream event with the
SDK's own protobuf types, rejecting unknown fields: what we put on the wire must be
exactly v1.0.
"""

import asyncio
import json
import os
import ssl
import sys
import uuid

import grpc
import httpx
from google.protobuf import json_format

from a2a.client import ClientConfig, ClientFactory
from a2a.client.card_resolver import A2ACardResolver
from a2a.types import (
    AgentCard,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    Part,
    Role,
    SendMessageRequest,
    SendMessageResponse,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
    TaskNotFoundError,
    TaskPushNotificationConfig,
    TaskState,
)

TIMEOUT = 30.0


def verify():
    """A server whose certificate a test's own authority signed (TEST_CA_FILE): trust
    that authority alone; else the defaults."""
    ca = os.environ.get("TEST_CA_FILE")
    return ssl.create_default_context(cafile=ca) if ca else True


def check(cond: bool, what: str) -> None:
    if not cond:
        raise AssertionError(what)


def user_message(text: str, task_id: str = "", context_id: str = "") -> Message:
    return Message(
        role=Role.ROLE_USER,
        parts=[Part(text=text)],
        message_id=str(uuid.uuid4()),
        task_id=task_id,
        context_id=context_id,
    )


def artifact_text(task: Task) -> str:
    return "".join(p.text for a in task.artifacts for p in a.parts)


class _Metadata:
    """Sends the HTTP client's credentials as gRPC metadata, as HTTP headers carry them."""

    def __init__(self, pairs):
        self.pairs = pairs

    def _with(self, details):
        return details._replace(metadata=list(details.metadata or []) + self.pairs)


class UnaryMetadata(_Metadata, grpc.aio.UnaryUnaryClientInterceptor):
    async def intercept_unary_unary(self, continuation, details, request):
        return await continuation(self._with(details), request)


# grpcio files an interceptor under one kind only: each kind needs its own.
class StreamMetadata(_Metadata, grpc.aio.UnaryStreamClientInterceptor):
    async def intercept_unary_stream(self, continuation, details, request):
        return await continuation(self._with(details), request)


def grpc_channels(http):
    """grpcio channels to a card's `host:port`, carrying `http`'s Authorization: over TLS
    trusting TEST_CA_FILE's authority when it is set, else in the clear."""
    auth = http.headers.get("Authorization")
    pairs = [("authorization", auth)]
    interceptors = [UnaryMetadata(pairs), StreamMetadata(pairs)] if auth else []
    ca = os.environ.get("TEST_CA_FILE")
    if ca:
        with open(ca, "rb") as f:
            credentials = grpc.ssl_channel_credentials(root_certificates=f.read())
        return lambda url: grpc.aio.secure_channel(url, credentials, interceptors=interceptors)
    return lambda url: grpc.aio.insecure_channel(url, interceptors=interceptors)


async def make_client(http, base: str, binding: str, streaming: bool, polling: bool = False):
    card = await A2ACardResolver(http, base).get_agent_card()
    config = ClientConfig(
        streaming=streaming,
        polling=polling,
        httpx_client=http,
        supported_protocol_bindings=[binding],
        grpc_channel_factory=grpc_channels(http),
    )
    client = ClientFactory(config).create(card)
    transport = type(client._transport).__name__
    wanted = {"JSONRPC": "JsonRpcTransport", "HTTP+JSON": "RestTransport", "GRPC": "GrpcTransport"}[
        binding
    ]
    check(transport == wanted, f"the client uses {binding}, not {transport}")
    return card, client


async def send(client, text: str, **kw) -> list[StreamResponse]:
    request = SendMessageRequest(message=user_message(text, **kw))
    return [e async for e in client.send_message(request)]


async def wait_terminal(client, task_id: str) -> Task:
    for _ in range(300):
        task = await client.get_task(GetTaskRequest(id=task_id))
        if task.status.state in (
            TaskState.TASK_STATE_COMPLETED,
            TaskState.TASK_STATE_CANCELED,
            TaskState.TASK_STATE_FAILED,
        ):
            return task
        await asyncio.sleep(0.05)
    raise AssertionError(f"task {task_id} did not finish")


async def scenario_card(http, base, binding):
    card = await A2ACardResolver(http, base).get_agent_card()
    seen = {(i.protocol_binding, i.protocol_version) for i in card.supported_interfaces}
    for want in [("JSONRPC", "1.0"), ("HTTP+JSON", "1.0"), ("GRPC", "1.0"), ("JSONRPC", "0.3")]:
        check(want in seen, f"the card lists {want}: {seen}")
    check(card.capabilities.streaming, "streaming declared")


async def scenario_v1_only_card(http, base, binding):
    """A server of ours set to A2A 1.0 only: its card is a v1.0 card with nothing else
    (parsed strictly), and the SDK's client works with it."""
    text = (await http.get(base + "/.well-known/agent-card.json")).text
    card = strict(text, AgentCard())
    seen = [(i.protocol_binding, i.protocol_version) for i in card.supported_interfaces]
    check(
        seen == [("JSONRPC", "1.0"), ("HTTP+JSON", "1.0"), ("GRPC", "1.0")],
        f"v1.0 interfaces only: {seen}",
    )
    _, client = await make_client(http, base, binding, streaming=True)
    events = await send(client, "only the new generation")
    chunks = [e.artifact_update for e in events if e.HasField("artifact_update")]
    text = "".join(p.text for c in chunks for p in c.artifact.parts)
    check(text == "only the new generation", text)


async def scenario_send_blocking(http, base, binding):
    _, client = await make_client(http, base, binding, streaming=False)
    events = await send(client, "hello v1 world")
    check(len(events) == 1 and events[0].HasField("task"), f"one task: {events}")
    task = events[0].task
    check(task.status.state == TaskState.TASK_STATE_COMPLETED, f"completed: {task.status}")
    check(artifact_text(task) == "hello v1 world", f"echoed: {artifact_text(task)!r}")


async def scenario_return_immediately(http, base, binding):
    _, client = await make_client(http, base, binding, streaming=False, polling=True)
    events = await send(client, "one two three four five six")
    task = events[0].task
    check(
        task.status.state in (TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING),
        f"returned before the end: {task.status.state}",
    )
    done = await wait_terminal(client, task.id)
    check(artifact_text(done) == "one two three four five six", artifact_text(done))


async def scenario_stream(http, base, binding):
    _, client = await make_client(http, base, binding, streaming=True)
    events = await send(client, "a streamed echo of words")
    kinds = [e.WhichOneof("payload") for e in events]
    check(kinds[0] in ("task", "status_update"), f"starts with the task: {kinds}")
    chunks = [e.artifact_update for e in events if e.HasField("artifact_update")]
    check(len(chunks) == 5, f"one chunk a word: {kinds}")
    check(not chunks[0].append and all(c.append for c in chunks[1:]), "append after the first")
    check(chunks[-1].last_chunk and not any(c.last_chunk for c in chunks[:-1]), "lastChunk last")
    text = "".join(p.text for c in chunks for p in c.artifact.parts)
    check(text == "a streamed echo of words", text)
    last = events[-1]
    check(
        last.HasField("status_update")
        and last.status_update.status.state == TaskState.TASK_STATE_COMPLETED,
        f"ends completed: {last}",
    )


async def scenario_get(http, base, binding):
    _, client = await make_client(http, base, binding, streaming=False)
    task = (await send(client, "get me back"))[0].task
    got = await client.get_task(GetTaskRequest(id=task.id, history_length=0))
    check(got.id == task.id and len(got.history) == 0, f"history_length 0: {got.history}")
    got = await client.get_task(GetTaskRequest(id=task.id))
    check(len(got.history) >= 1, "the history by default")
    try:
        await client.get_task(GetTaskRequest(id="no-such-task"))
    except TaskNotFoundError:
        pass
    else:
        raise AssertionError("an unknown task is TaskNotFoundError")


async def scenario_list(http, base, binding):
    _, client = await make_client(http, base, binding, streaming=False)
    context = str(uuid.uuid4())
    ids = []
    for word in ["first", "second", "third"]:
        ids.append((await send(client, word, context_id=context))[0].task.id)
    page = await client.list_tasks(ListTasksRequest(context_id=context, page_size=2))
    check(page.total_size == 3, f"three in the context: {page.total_size}")
    check(len(page.tasks) == 2 and page.next_page_token, "a first page of two and a token")
    check([t.id for t in page.tasks] == ids[::-1][:2], "newest first")
    check(all(len(t.artifacts) == 0 for t in page.tasks), "no artifacts unless asked")
    rest = await client.list_tasks(
        ListTasksRequest(
            context_id=context,
            page_size=2,
            page_token=page.next_page_token,
            include_artifacts=True,
        )
    )
    check([t.id for t in rest.tasks] == [ids[0]], f"the last page: {rest.tasks}")
    check(rest.next_page_token == "", "no token on the last page")
    check(artifact_text(rest.tasks[0]) == "first", "artifacts when asked")
    done = await client.list_tasks(
        ListTasksRequest(context_id=context, status=TaskState.TASK_STATE_WORKING)
    )
    check(done.total_size == 0, "none of them is working")


async def scenario_cancel(http, base, binding):
    _, client = await make_client(http, base, binding, streaming=False, polling=True)
    words = " ".join(f"w{i}" for i in range(200))
    task = (await send(client, words))[0].task
    canceled = await client.cancel_task(CancelTaskRequest(id=task.id))
    check(canceled.status.state == TaskState.TASK_STATE_CANCELED, f"canceled: {canceled.status}")


async def scenario_subscribe(http, base, binding):
    _, poller = await make_client(http, base, binding, streaming=False, polling=True)
    task = (await send(poller, "follow these words from elsewhere"))[0].task
    _, client = await make_client(http, base, binding, streaming=True)
    events = [e async for e in client.subscribe(SubscribeToTaskRequest(id=task.id))]
    check(events[0].HasField("task"), f"the task first: {events[0]}")
    check(
        events[-1].HasField("status_update")
        and events[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED,
        "follows it to the end",
    )


async def scenario_push(http, base, binding):
    _, client = await make_client(http, base, binding, streaming=False, polling=True)
    task = (await send(client, "slow " * 30))[0].task
    config = TaskPushNotificationConfig(
        task_id=task.id, id="hook-1", url="http://127.0.0.1:9/hook", token="secret"
    )
    made = await client.create_task_push_notification_config(config)
    check(made.id == "hook-1" and made.url == config.url, f"created: {made}")
    got = await client.get_task_push_notification_config(
        GetTaskPushNotificationConfigRequest(task_id=task.id, id="hook-1")
    )
    check(got.token == "secret", f"got: {got}")
    listed = await client.list_task_push_notification_configs(
        ListTaskPushNotificationConfigsRequest(task_id=task.id)
    )
    check([c.id for c in listed.configs] == ["hook-1"], f"listed: {listed}")
    await client.delete_task_push_notification_config(
        DeleteTaskPushNotificationConfigRequest(task_id=task.id, id="hook-1")
    )
    listed = await client.list_task_push_notification_configs(
        ListTaskPushNotificationConfigsRequest(task_id=task.id)
    )
    check(len(listed.configs) == 0, "deleted")
    await client.cancel_task(CancelTaskRequest(id=task.id))


def workflow_message(workflow: str, inputs: dict, text: str = "") -> Message:
    body = {
        "messageId": str(uuid.uuid4()),
        "role": "ROLE_USER",
        "parts": [{"data": {"workflow": workflow, "input": inputs}}],
    }
    if text:
        body["parts"].append({"text": text})
    return json_format.ParseDict(body, Message())


async def scenario_host_run(http, base, binding):
    """The orchestrator runs a workflow for a v1.0 client: one blocking call."""
    _, client = await make_client(http, base, binding, streaming=False)
    request = SendMessageRequest(message=workflow_message("greet", {"name": "Ada"}))
    events = [e async for e in client.send_message(request)]
    task = events[0].task
    check(task.status.state == TaskState.TASK_STATE_COMPLETED, f"completed: {task.status}")
    result = [a for a in task.artifacts if a.artifact_id == "result"]
    check(result and "hello Ada" in "".join(p.text for p in result[0].parts), f"{task.artifacts}")


async def scenario_host_stream_approval(http, base, binding):
    """A streamed run stops at its approval; the answer on the same task finishes it."""
    _, client = await make_client(http, base, binding, streaming=True)
    request = SendMessageRequest(message=workflow_message("approve", {}))
    events = [e async for e in client.send_message(request)]
    last = events[-1]
    check(
        last.HasField("status_update")
        and last.status_update.status.state == TaskState.TASK_STATE_INPUT_REQUIRED,
        f"waits for the approval: {last}",
    )
    task_id, context_id = last.status_update.task_id, last.status_update.context_id
    answer = SendMessageRequest(
        message=user_message("yes", task_id=task_id, context_id=context_id)
    )
    events = [e async for e in client.send_message(answer)]
    final = events[-1]
    check(
        final.HasField("status_update")
        and final.status_update.status.state == TaskState.TASK_STATE_COMPLETED,
        f"completed after the answer: {final}",
    )
    chunks = [e.artifact_update for e in events if e.HasField("artifact_update")]
    check(
        any("approved and echoed" in "".join(p.text for p in c.artifact.parts) for c in chunks),
        f"the result: {chunks}",
    )


async def scenario_extended_card(http, base, binding):
    """The extended card needs the credentials; with them, it is the extended one."""
    from a2a.types import GetExtendedAgentCardRequest

    card, anonymous = await make_client(http, base, binding, streaming=False)
    check(card.capabilities.extended_agent_card, "the card offers an extended card")
    try:
        await anonymous.get_extended_agent_card(GetExtendedAgentCardRequest())
    except Exception as e:  # the SDK's error for a 401 differs by binding
        said = str(e).lower()
        check("401" in said or "unauthor" in said or "unauthenticated" in said, f"refused: {e!r}")
    else:
        raise AssertionError("the extended card without credentials")
    async with httpx.AsyncClient(
        timeout=TIMEOUT, headers={"Authorization": "Bearer s3cret"}
    ) as authed:
        _, client = await make_client(authed, base, binding, streaming=False)
        extended = await client.get_extended_agent_card(GetExtendedAgentCardRequest())
        check(extended.description == "the extended description", f"{extended.description}")


async def scenario_owners(http, base, binding):
    """Issue 35: a task is its initiator's. With the tokens in TOKEN_A, TOKEN_B and
    TOKEN_OPERATOR (an OpenID Provider's), A's task is not found by B — get, list,
    subscribe, answer, cancel — while an operator sees and cancels it."""

    async def as_(token):
        authed = httpx.AsyncClient(
            timeout=TIMEOUT, verify=verify(), headers={"Authorization": f"Bearer {token}"}
        )
        return authed, (await make_client(authed, base, binding, streaming=False))[1]

    a_http, a = await as_(os.environ["TOKEN_A"])
    b_http, b = await as_(os.environ["TOKEN_B"])
    o_http, o = await as_(os.environ["TOKEN_OPERATOR"])
    try:
        task = (await send(a, "ask me"))[0].task
        check(task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED, f"waits: {task.status}")

        async def not_found(what, call):
            try:
                await call()
            except TaskNotFoundError:
                return
            except Exception as e:  # a streaming call's error may come wrapped
                check("TaskNotFound" in repr(e) or "-32001" in str(e) or "not found" in str(e), f"{what}: {e!r}")
                return
            raise AssertionError(f"{what}: B reached A's task")

        await not_found("get", lambda: b.get_task(GetTaskRequest(id=task.id)))
        await not_found("cancel", lambda: b.cancel_task(CancelTaskRequest(id=task.id)))
        await not_found("answer", lambda: send(b, "echo this", task_id=task.id, context_id=task.context_id))

        async def subscribe():
            _, streaming = await make_client(b_http, base, binding, streaming=True)
            return [e async for e in streaming.subscribe(SubscribeToTaskRequest(id=task.id))]

        await not_found("subscribe", subscribe)
        listed = await b.list_tasks(ListTasksRequest())
        check(all(t.id != task.id for t in listed.tasks), "B does not list A's task")
        mine = await a.list_tasks(ListTasksRequest())
        check(any(t.id == task.id for t in mine.tasks), "A lists it")
        seen = await o.get_task(GetTaskRequest(id=task.id))
        check(seen.id == task.id, "the operator reads it")
        canceled = await o.cancel_task(CancelTaskRequest(id=task.id))
        check(canceled.status.state == TaskState.TASK_STATE_CANCELED, f"canceled: {canceled.status}")
    finally:
        for c in (a_http, b_http, o_http):
            await c.aclose()


def strict(text, message):
    """Parses `text` as `message`, refusing unknown fields."""
    return json_format.Parse(text, message, ignore_unknown_fields=False)


def sse_events(body: str) -> list[str]:
    return [
        line[len("data:"):].strip()
        for line in body.splitlines()
        if line.startswith("data:")
    ]


async def scenario_wire(http, base, binding):
    headers = {"A2A-Version": "1.0", "Content-Type": "application/json"}
    card = json.loads((await http.get(base + "/.well-known/agent-card.json")).text)
    from a2a.client.card_resolver import parse_agent_card

    parse_agent_card(dict(card))
    send = {
        "message": {
            "messageId": str(uuid.uuid4()),
            "role": "ROLE_USER",
            "parts": [{"text": "wire check"}],
        }
    }
    stream_request = {
        "message": {
            "messageId": str(uuid.uuid4()),
            "role": "ROLE_USER",
            "parts": [{"text": "wire stream check"}],
        }
    }
    if binding == "JSONRPC":

        async def call(method, params):
            r = await http.post(
                base + "/",
                headers=headers,
                json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params},
            )
            body = r.json()
            check("result" in body, f"{method}: {body}")
            return json.dumps(body["result"])

        sent = strict(await call("SendMessage", send), SendMessageResponse())
        task_id = sent.task.id
        strict(await call("GetTask", {"id": task_id}), Task())
        strict(await call("ListTasks", {"includeArtifacts": True}), ListTasksResponse())
        strict(
            await call("ListTaskPushNotificationConfigs", {"taskId": task_id}),
            ListTaskPushNotificationConfigsResponse(),
        )
        r = await http.post(
            base + "/",
            headers=headers,
            json={"jsonrpc": "2.0", "id": 2, "method": "SendStreamingMessage", "params": stream_request},
        )
        events = sse_events(r.text)
        check(len(events) > 2, f"a stream: {r.text}")
        for e in events:
            strict(json.dumps(json.loads(e)["result"]), StreamResponse())
        r = await http.post(
            base + "/",
            headers=headers,
            json={"jsonrpc": "2.0", "id": 3, "method": "GetTask", "params": {"id": "nope"}},
        )
        error = r.json()["error"]
        check(error["code"] == -32001, f"TaskNotFound: {error}")
        info = error["data"][0]
        check(
            info["@type"] == "type.googleapis.com/google.rpc.ErrorInfo"
            and info["reason"] == "TASK_NOT_FOUND"
            and info["domain"] == "a2a-protocol.org",
            f"ErrorInfo: {error}",
        )
    else:
        sent = strict((await http.post(base + "/message:send", headers=headers, json=send)).text, SendMessageResponse())
        task_id = sent.task.id
        strict((await http.get(base + f"/tasks/{task_id}", headers=headers)).text, Task())
        strict((await http.get(base + "/tasks?includeArtifacts=true&pageSize=5", headers=headers)).text, ListTasksResponse())
        strict(
            (await http.get(base + f"/tasks/{task_id}/pushNotificationConfigs", headers=headers)).text,
            ListTaskPushNotificationConfigsResponse(),
        )
        r = await http.post(base + "/message:stream", headers=headers, json=stream_request)
        events = sse_events(r.text)
        check(len(events) > 2, f"a stream: {r.text}")
        for e in events:
            strict(e, StreamResponse())
        r = await http.get(base + "/tasks/nope", headers=headers)
        check(r.status_code == 404, f"404: {r.status_code}")
        error = r.json()["error"]
        check(error["status"] == "NOT_FOUND" and error["details"][0]["reason"] == "TASK_NOT_FOUND", f"{error}")


async def main() -> None:
    base, binding, name = sys.argv[1].rstrip("/"), sys.argv[2], sys.argv[3]
    async with httpx.AsyncClient(timeout=TIMEOUT, verify=verify()) as http:
        await globals()[f"scenario_{name}"](http, base, binding)
    print("ok")


if __name__ == "__main__":
    asyncio.run(main())
