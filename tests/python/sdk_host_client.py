"""The official Python SDK client (a2a-sdk) runs workflows on the orchestrator.

    python sdk_host_client.py BASE_URL

Streams the `pair` workflow (artifacts of parallel steps, then the result) and answers
the `approve` workflow's approval on the same task. Exits non-zero when anything is off.
"""

import asyncio
import sys
import uuid

import httpx

from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import Message, Part, Role, TaskArtifactUpdateEvent, TaskState, TextPart


def message(text, workflow=None, task_id=None, context_id=None):
    return Message(
        role=Role.user,
        parts=[Part(root=TextPart(text=text))],
        message_id=str(uuid.uuid4()),
        metadata={"workflow": workflow} if workflow else None,
        task_id=task_id,
        context_id=context_id,
    )


def check(cond, what):
    if not cond:
        raise AssertionError(what)


async def main(base_url):
    async with httpx.AsyncClient(timeout=30) as http:
        card = await A2ACardResolver(http, base_url).get_agent_card()
        check([s.id for s in card.skills] == ["pair", "approve"], f"skills {card.skills}")
        streaming = ClientFactory(ClientConfig(streaming=True, httpx_client=http)).create(card)
        ids, task = [], None
        async for task, update in streaming.send_message(message("go", "pair")):
            if isinstance(update, TaskArtifactUpdateEvent):
                ids.append(update.artifact.artifact_id)
        check(task.status.state == TaskState.completed, f"state {task.status.state}")
        check("a/echo" in ids and "b/echo" in ids and ids[-1] == "result", f"artifact ids {ids}")
        result = next(a for a in task.artifacts if a.artifact_id == "result")
        check(result.parts[0].root.text == "joined: alpha beta gamma | delta epsilon zeta", result.parts[0].root.text)

        blocking = ClientFactory(ClientConfig(streaming=False, httpx_client=http)).create(card)
        asked = None
        async for asked, _ in blocking.send_message(message("start", "approve")):
            pass
        check(asked.status.state == TaskState.input_required, f"state {asked.status.state}")
        done = None
        async for done, _ in blocking.send_message(message("yes", task_id=asked.id, context_id=asked.context_id)):
            pass
        check(done.status.state == TaskState.completed, f"state {done.status.state}")


if __name__ == "__main__":
    asyncio.run(asyncio.wait_for(main(sys.argv[1]), 60))
    print("ok")
