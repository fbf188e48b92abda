"""A downstream A2A agent written with the official Python SDK (a2a-sdk).

It streams the words of the text it receives back as chunks of one artifact,
DELAY seconds apart, and supports cancel. Started by the Rust tests:

    python sdk_agent.py [DELAY_SECONDS]

It binds 127.0.0.1 on a free port and prints `PORT <n>` once it is serving.
"""

import asyncio
import socket
import sys

import uvicorn

from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.apps import A2AStarletteApplication
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentSkill,
    Part,
    TextPart,
)
from a2a.utils import new_agent_text_message, new_task

DELAY = float(sys.argv[1]) if len(sys.argv) > 1 else 0.05


class WordsExecutor(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task
        if task is None:
            task = new_task(context.message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        text = context.get_user_input()
        await updater.start_work()
        words = text.split()
        for i, word in enumerate(words):
            await asyncio.sleep(DELAY)
            await updater.add_artifact(
                [Part(root=TextPart(text=word if i == 0 else " " + word))],
                artifact_id="words",
                name="words",
                append=i > 0,
                last_chunk=i == len(words) - 1,
            )
        await updater.complete(
            new_agent_text_message("done: " + text, task.context_id, task.id)
        )

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.cancel()


def main() -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    card = AgentCard(
        name="SDK words agent",
        description="Streams words back (official a2a-sdk)",
        url=f"http://127.0.0.1:{port}/",
        version="1.0.0",
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        capabilities=AgentCapabilities(streaming=True),
        skills=[
            AgentSkill(
                id="words",
                name="Words",
                description="Streams the words back",
                tags=["test"],
            )
        ],
    )
    handler = DefaultRequestHandler(
        agent_executor=WordsExecutor(), task_store=InMemoryTaskStore()
    )
    app = A2AStarletteApplication(agent_card=card, http_handler=handler).build()
    config = uvicorn.Config(app, log_level="warning")
    server = uvicorn.Server(config)

    async def serve() -> None:
        task = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started:
            await asyncio.sleep(0.01)
        print(f"PORT {port}", flush=True)
        await task

    asyncio.run(serve())


if __name__ == "__main__":
    main()
