"""Calls the orchestrator as one A2A agent with the official Python SDK (a2a-sdk).

    pip install "a2a-sdk[http-server]==0.3.26"
    python examples/python_client.py http://127.0.0.1:8080

Runs the travel-planning workflow: streams the run (every agent's artifacts as they
arrive), answers the hotel's question on the same task, and prints the itinerary.
"""

import asyncio
import sys
import uuid

import httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import DataPart, Message, Part, Role, TaskArtifactUpdateEvent, TaskState, TextPart


def message(parts, task=None, metadata=None):
    return Message(
        role=Role.user,
        parts=parts,
        message_id=str(uuid.uuid4()),
        task_id=task.id if task else None,
        context_id=task.context_id if task else None,
        metadata=metadata,
    )


async def main(base_url):
    async with httpx.AsyncClient(timeout=60) as http:
        card = await A2ACardResolver(http, base_url).get_agent_card()
        print(f"{card.name}: skills {[s.id for s in card.skills]}")
        client = ClientFactory(ClientConfig(streaming=True, httpx_client=http)).create(card)
        request = message([
            Part(root=TextPart(text="Plan 5 nights in Lisbon from London for 2")),
            Part(root=DataPart(data={"workflow": "travel-planning", "input": {
                "origin": "London", "destination": "Lisbon", "depart": "2027-03-10",
                "nights": 5, "travellers": 2}})),
        ])
        while True:
            task = None
            async for task, update in client.send_message(request):
                if isinstance(update, TaskArtifactUpdateEvent) and update.last_chunk:
                    print(f"  artifact {update.artifact.artifact_id} complete")
            state = task.status.state
            if state != TaskState.input_required:
                break
            # A question from a step: answer it on the same task, naming the step.
            question = next(p.root.data for p in task.status.message.parts if isinstance(p.root, DataPart))
            pending = question["pendingQuestions"][0]
            print(f"? {pending['prompt']}\n  -> 1")
            request = message([Part(root=TextPart(text="1"))], task=task, metadata={"step": pending["step"]})
        print(f"workflow {state.value}")
        result = next(a for a in task.artifacts if a.artifact_id == "result")
        print(result.parts[0].root.text)
        sys.exit(0 if state == TaskState.completed else 1)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8080"))
