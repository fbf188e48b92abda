"""Scenarios in which the official Python SDK client (a2a-sdk) drives an A2A server.

    python sdk_client.py BASE_URL SCENARIO

Each scenario asserts what a conforming server must do and exits non-zero (with the
reason) when it does not. The Rust tests run one scenario per test against our server.
"""

import asyncio
import sys
import uuid

import httpx

from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.client.errors import A2AClientJSONRPCError
from a2a.types import (
    Message,
    Part,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskIdParams,
    TaskQueryParams,
    TaskState,
    TaskStatusUpdateEvent,
    TextPart,
)

TIMEOUT = 30.0


def user_message(text: str, task_id: str | None = None, context_id: str | None = None) -> Message:
    return Message(
        role=Role.user,
        parts=[Part(root=TextPart(text=text))],
        message_id=str(uuid.uuid4()),
        task_id=task_id,
        context_id=context_id,
    )


def artifact_text(task: Task) -> str:
    return "".join(
        p.root.text
        for a in task.artifacts or []
        for p in a.parts
        if isinstance(p.root, TextPart)
    )


def check(cond: bool, what: str) -> None:
    if not cond:
        raise AssertionError(what)


async def client(http: httpx.AsyncClient, card, streaming: bool, polling: bool = False):
    config = ClientConfig(streaming=streaming, polling=polling, httpx_client=http)
    return ClientFactory(config).create(card)


async def last_event(c, message: Message):
    result = None
    async for event in c.send_message(message):
        result = event
    return result


async def wait_for(c, task_id: str, predicate) -> Task:
    for _ in range(300):
        task = await c.get_task(TaskQueryParams(id=task_id))
        if predicate(task):
            return task
        await asyncio.sleep(0.05)
    raise AssertionError(f"task {task_id} never reached the expected state")


async def send_blocking(http, card) -> None:
    c = await client(http, card, streaming=False)
    task, update = await last_event(c, user_message("hello from python"))
    check(update is None, "a blocking send returns just the task")
    check(task.status.state == TaskState.completed, f"state is {task.status.state}")
    check(artifact_text(task) == "hello from python", f"artifact is {artifact_text(task)!r}")


async def send_non_blocking(http, card) -> None:
    c = await client(http, card, streaming=False, polling=True)
    task, _ = await last_event(c, user_message("one two three four five six"))
    check(
        task.status.state in (TaskState.submitted, TaskState.working),
        f"a non-blocking send returns before the work is done, got {task.status.state}",
    )
    done = await wait_for(c, task.id, lambda t: t.status.state == TaskState.completed)
    check(artifact_text(done) == "one two three four five six", artifact_text(done))


async def stream(http, card) -> None:
    c = await client(http, card, streaming=True)
    kinds, chunks, final_state = [], [], None
    async for task, update in c.send_message(user_message("alpha beta gamma")):
        kinds.append(type(update).__name__ if update else "Task")
        if isinstance(update, TaskArtifactUpdateEvent):
            chunks.append(update.artifact.parts[0].root.text)
        if isinstance(update, TaskStatusUpdateEvent) and update.final:
            final_state = update.status.state
    check(kinds[0] == "Task", f"the first event is the task, got {kinds}")
    check(chunks == ["alpha", " beta", " gamma"], f"chunks {chunks}")
    check(final_state == TaskState.completed, f"final state {final_state}")
    check(artifact_text(task) == "alpha beta gamma", "the SDK's assembled task holds the artifact")


async def get(http, card) -> None:
    c = await client(http, card, streaming=False)
    task, _ = await last_event(c, user_message("get me"))
    fetched = await c.get_task(TaskQueryParams(id=task.id, history_length=1))
    check(fetched.id == task.id, "same task")
    check(fetched.status.state == TaskState.completed, f"state {fetched.status.state}")
    check(len(fetched.history or []) == 1, f"historyLength=1 gives one message, got {len(fetched.history or [])}")
    try:
        await c.get_task(TaskQueryParams(id="no-such-task"))
        raise AssertionError("an unknown task must be an error")
    except A2AClientJSONRPCError as e:
        check(e.error.code == -32001, f"unknown task gives -32001, got {e.error.code}")


async def cancel(http, card) -> None:
    c = await client(http, card, streaming=False, polling=True)
    words = " ".join(f"w{i}" for i in range(200))
    task, _ = await last_event(c, user_message(words))
    canceled = await c.cancel_task(TaskIdParams(id=task.id))
    check(canceled.status.state == TaskState.canceled, f"state {canceled.status.state}")
    again = await c.get_task(TaskQueryParams(id=task.id))
    check(again.status.state == TaskState.canceled, "the cancel sticks")
    try:
        await c.cancel_task(TaskIdParams(id=task.id))
        raise AssertionError("canceling a canceled task must be an error")
    except A2AClientJSONRPCError as e:
        check(e.error.code == -32002, f"not cancelable gives -32002, got {e.error.code}")


async def resubscribe(http, card) -> None:
    poller = await client(http, card, streaming=False, polling=True)
    words = " ".join(f"w{i}" for i in range(30))
    task, _ = await last_event(poller, user_message(words))
    streamer = await client(http, card, streaming=True)
    states, last_task = [], None
    async for t, update in streamer.resubscribe(TaskIdParams(id=task.id)):
        last_task = t
        if isinstance(update, TaskStatusUpdateEvent):
            states.append(update.status.state)
    check(states and states[-1] == TaskState.completed, f"states {states}")
    final = await poller.get_task(TaskQueryParams(id=task.id))
    check(artifact_text(final) == words, "the full artifact was assembled")
    check(last_task is not None and last_task.id == task.id, "events belong to the task")


async def multi_turn(http, card) -> None:
    c = await client(http, card, streaming=False)
    task, _ = await last_event(c, user_message("please ask me"))
    check(task.status.state == TaskState.input_required, f"state {task.status.state}")
    check(task.status.message is not None, "the question is in the status message")
    reply = user_message("the answer", task_id=task.id, context_id=task.context_id)
    done, _ = await last_event(c, reply)
    check(done.id == task.id, "the reply continues the same task")
    check(done.status.state == TaskState.completed, f"state {done.status.state}")
    check(artifact_text(done) == "the answer", f"artifact {artifact_text(done)!r}")
    try:
        await last_event(c, user_message("too late", task_id=task.id, context_id=task.context_id))
        raise AssertionError("a message to a completed task must be an error")
    except A2AClientJSONRPCError as e:
        # UnsupportedOperationError, as v1.0.1 §3.1.1 says, on either generation.
        check(e.error.code == -32004, f"terminal task gives -32004, got {e.error.code}")


async def stream_multi_turn(http, card) -> None:
    c = await client(http, card, streaming=True)
    last = None
    async for task, update in c.send_message(user_message("ask me something")):
        last = (task, update)
    task, update = last
    check(isinstance(update, TaskStatusUpdateEvent) and update.final, "input-required ends the stream")
    check(task.status.state == TaskState.input_required, f"state {task.status.state}")
    async for t, _ in c.send_message(user_message("streamed answer", task_id=task.id, context_id=task.context_id)):
        last_task = t
    check(last_task.status.state == TaskState.completed, f"state {last_task.status.state}")
    check(artifact_text(last_task) == "streamed answer", artifact_text(last_task))


SCENARIOS = {
    f.__name__: f
    for f in [send_blocking, send_non_blocking, stream, get, cancel, resubscribe, multi_turn, stream_multi_turn]
}


async def main(base_url: str, scenario: str) -> None:
    async with httpx.AsyncClient(timeout=TIMEOUT) as http:
        card = await A2ACardResolver(http, base_url).get_agent_card()
        await asyncio.wait_for(SCENARIOS[scenario](http, card), TIMEOUT)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
    print("ok")
