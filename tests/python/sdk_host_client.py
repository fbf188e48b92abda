"""The official Python SDK client (a2a-sdk) runs workflows on the orchestrator.

    python sdk_host_client.py BASE_URL SCENARIO

Each scenario asserts what the orchestrator must do as one A2A agent and exits non-zero
(with the reason) when it does not. The Rust tests start the orchestrator with real
downstream agents and run one scenario per test.
"""

import asyncio
import sys
import uuid

import httpx

from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.client.errors import A2AClientHTTPError, A2AClientJSONRPCError
from a2a.types import (
    DataPart,
    Message,
    Part,
    PushNotificationConfig,
    Role,
    TaskArtifactUpdateEvent,
    TaskIdParams,
    TaskPushNotificationConfig,
    TaskQueryParams,
    TaskState,
    TaskStatusUpdateEvent,
    TextPart,
)


def message(text=None, workflow=None, task=None, data=None, metadata=None):
    parts = []
    if text is not None:
        parts.append(Part(root=TextPart(text=text)))
    if data is not None:
        parts.append(Part(root=DataPart(data=data)))
    meta = dict(metadata or {})
    if workflow:
        meta["workflow"] = workflow
    return Message(
        role=Role.user,
        parts=parts,
        message_id=str(uuid.uuid4()),
        metadata=meta or None,
        task_id=task.id if task else None,
        context_id=task.context_id if task else None,
    )


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def result_text(task):
    result = next((a for a in task.artifacts or [] if a.artifact_id == "result"), None)
    check(result is not None, f"no result artifact in {[a.artifact_id for a in task.artifacts or []]}")
    return result.parts[0].root.text


async def last(client, msg):
    out = None
    async for out in client.send_message(msg):
        pass
    return out


async def stream_and_approval(http, card, clients):
    ids, task = [], None
    async for task, update in clients["stream"].send_message(message("go", "pair")):
        if isinstance(update, TaskArtifactUpdateEvent):
            ids.append(update.artifact.artifact_id)
    check(task.status.state == TaskState.completed, f"state {task.status.state}")
    check("a/echo" in ids and "b/echo" in ids and ids[-1] == "result", f"artifact ids {ids}")
    check(result_text(task) == "joined: alpha beta gamma | delta epsilon zeta", result_text(task))
    # The SDK's task manager merges status metadata into the task: the run's detail.
    run = (task.metadata or {}).get("run")
    check(run is not None, f"no run detail in {task.metadata}")
    check(run["workflow"] == "pair" and run["state"] == "completed", f"run {run}")
    check(all(s["state"] == "completed" for s in run["steps"]), f"steps {run['steps']}")
    asked, _ = await last(clients["block"], message("start", "approve"))
    check(asked.status.state == TaskState.input_required, f"state {asked.status.state}")
    done, _ = await last(clients["block"], message("yes", task=asked))
    check(done.status.state == TaskState.completed, f"state {done.status.state}")


async def non_blocking_and_get(http, card, clients):
    task, _ = await last(clients["poll"], message("go", "pair"))
    check(task.status.state in (TaskState.submitted, TaskState.working), f"returns at once: {task.status.state}")
    for _ in range(200):
        got = await clients["poll"].get_task(TaskQueryParams(id=task.id))
        run = (got.metadata or {}).get("run")
        if run is None:
            # Only before the run has started.
            check(got.status.state == TaskState.submitted, f"no run detail on a {got.status.state} task")
            await asyncio.sleep(0.05)
            continue
        check(run["workflow"] == "pair", f"run {run}")
        if got.status.state == TaskState.completed:
            check(result_text(got).startswith("joined: "), result_text(got))
            check(run["state"] == "completed" and run["endedAt"], f"run {run}")
            return
        check(run["state"] == "working", f"a running run: {run}")
        await asyncio.sleep(0.05)
    raise AssertionError("never completed")


async def resubscribe_mid_run(http, card, clients):
    task, _ = await last(clients["poll"], message("go", "pair"))

    async def follow():
        seen, last_task = [], None
        async for last_task, update in clients["stream"].resubscribe(TaskIdParams(id=task.id)):
            if isinstance(update, TaskArtifactUpdateEvent):
                seen.append(update.artifact.artifact_id)
        return last_task, seen

    (t1, s1), (t2, s2) = await asyncio.gather(follow(), follow())
    for t in (t1, t2):
        check(t.status.state == TaskState.completed, f"state {t.status.state}")
        check(result_text(t).startswith("joined: "), "the assembled task has the result")
    check(s1[-1] == "result" and s2[-1] == "result", f"{s1} {s2}")


async def cancel(http, card, clients):
    task, _ = await last(clients["poll"], message("go", "pair"))
    await asyncio.sleep(0.3)
    canceled = await clients["poll"].cancel_task(TaskIdParams(id=task.id))
    check(canceled.status.state == TaskState.canceled, f"state {canceled.status.state}")
    try:
        await clients["poll"].cancel_task(TaskIdParams(id=task.id))
        raise AssertionError("a canceled task cannot be canceled again")
    except A2AClientJSONRPCError as e:
        check(e.error.code == -32002, f"code {e.error.code}")


async def routing(http, card, clients):
    by_data, _ = await last(clients["block"], message(data={"workflow": "greet", "input": {"name": "Ada"}}))
    check(result_text(by_data) == "hello Ada", result_text(by_data))
    by_text, _ = await last(clients["block"], message("please greet someone"))
    check(by_text.status.state == TaskState.input_required, "the missing name is asked for")
    asked = by_text.status.message
    check("`name` is required" in asked.parts[0].root.text, asked.parts[0].root.text)
    check(asked.parts[1].root.data["inputSchema"]["required"] == ["name"], "with the schema")
    done, _ = await last(clients["block"], message(data={"name": "Grace"}, task=by_text))
    check(result_text(done) == "hello Grace", result_text(done))
    unclear, _ = await last(clients["block"], message("do the thing"))
    check(unclear.status.state == TaskState.input_required, "asked to choose")
    listed = [w["id"] for w in unclear.status.message.parts[1].root.data["workflows"]]
    check(sorted(listed) == ["greet", "pair"], f"{listed}")
    chosen, _ = await last(clients["block"], message("pair", task=unclear))
    check(result_text(chosen).startswith("joined: "), result_text(chosen))


async def push_refused(http, card, clients):
    done, _ = await last(clients["block"], message("go", "pair"))
    try:
        await clients["block"].set_task_callback(
            TaskPushNotificationConfig(
                task_id=done.id,
                push_notification_config=PushNotificationConfig(url="http://169.254.169.254/latest"),
            )
        )
        raise AssertionError("a metadata-address webhook must be refused")
    except A2AClientJSONRPCError as e:
        check(e.error.code == -32602, f"code {e.error.code}")
        check("refused" in e.error.message, e.error.message)


async def unauthenticated(http, card, clients):
    try:
        await last(clients["block"], message("go", "pair"))
        raise AssertionError("a call without credentials must be refused")
    except A2AClientHTTPError as e:
        check(e.status_code == 401, f"status {e.status_code}")
    headers = {"Authorization": "Bearer s3cret-token"}
    async with httpx.AsyncClient(timeout=30, headers=headers) as authed:
        c = ClientFactory(ClientConfig(streaming=False, httpx_client=authed)).create(card)
        done, _ = await last(c, message("go", "pair"))
        check(done.status.state == TaskState.completed, f"state {done.status.state}")


SCENARIOS = {f.__name__: f for f in [stream_and_approval, non_blocking_and_get, resubscribe_mid_run, cancel, routing, push_refused, unauthenticated]}


async def main(base_url, scenario):
    async with httpx.AsyncClient(timeout=30) as http:
        card = await A2ACardResolver(http, base_url).get_agent_card()
        clients = {
            "stream": ClientFactory(ClientConfig(streaming=True, httpx_client=http)).create(card),
            "block": ClientFactory(ClientConfig(streaming=False, httpx_client=http)).create(card),
            "poll": ClientFactory(ClientConfig(streaming=False, polling=True, httpx_client=http)).create(card),
        }
        await SCENARIOS[scenario](http, card, clients)


if __name__ == "__main__":
    asyncio.run(asyncio.wait_for(main(sys.argv[1], sys.argv[2]), 90))
    print("ok")
