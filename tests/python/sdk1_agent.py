"""A downstream A2A agent written with the official Python SDK 1.x (a2a-sdk 1.3) and its
defaults: A2A v1.0 only, JSON-RPC, a card with `supportedInterfaces` and no v0.3
fields — the kind of agent most agents written from now on are.

It streams the words of the text it receives back as chunks of one artifact, DELAY
seconds apart, asks what to echo when the text says "ask me" (input-required), fails
the first task whose text says "fail once" (the next one with that text succeeds), and
supports cancel; it prints `TRACEPARENT <path> <value>` for each request that carries a
W3C trace context. Started by the Rust tests:

    python sdk1_agent.py [DELAY_SECONDS] [jsonrpc|rest|grpc] [PUBLIC_URL]

It serves the one binding given (JSON-RPC by default), as the SDK sets it up; its card
names PUBLIC_URL when given (a proxy in front of it), else its own address. With grpc,
the card is served over HTTP as always and lists only a GRPC interface: the SDK's
GrpcHandler on a grpcio server of its own port (`127.0.0.1:PORT`, as grpcio dials). With
CUT_STREAM_AFTER=N (grpc) the first SendStreamingMessage stream is broken off after N
events, as a dropped connection would (UNAVAILABLE), printing `CUT`.

It binds 127.0.0.1 on a free port and prints `PORT <n>` once it is serving. With
SIGN_CARD_KEY (a PKCS#8 PEM file, ES256) its card is signed with the SDK's own signer
(kid SIGN_CARD_KID); with TAMPER_CARD set, the description is changed after signing. With
LOG_REQUESTS set it prints `REQUEST <method> <path>` for each request it gets.

With REQUIRE_TOKEN_ISSUER (an OpenID Provider's issuer URL) it takes only bearer tokens
that provider signed (PyJWT, the provider's published keys) for the audience
REQUIRE_TOKEN_AUDIENCE with the scope `a2a`, answering 401 otherwise; its card declares
the provider's OAuth2 client-credentials flow. It prints `TOKEN sub=… aud=… act=…
tail=…` (the token's last 12 characters) for each request it takes. With
REVOKE_AFTER_USE set, a token is taken for one request only (as if revoked after it).
"""

import asyncio
import os
import socket
import sys

import uvicorn
from starlette.applications import Starlette
from starlette.middleware import Middleware

from a2a.helpers.proto_helpers import new_task_from_user_message, new_text_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes.agent_card_routes import create_agent_card_routes
from a2a.server.routes.jsonrpc_routes import create_jsonrpc_routes
from a2a.server.routes.rest_routes import create_rest_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    ClientCredentialsOAuthFlow,
    OAuth2SecurityScheme,
    OAuthFlows,
    SecurityRequirement,
    SecurityScheme,
    StringList,
    TaskState,
)

DELAY = float(sys.argv[1]) if len(sys.argv) > 1 else 0.05
BINDING = sys.argv[2] if len(sys.argv) > 2 else "jsonrpc"
PUBLIC_URL = sys.argv[3] if len(sys.argv) > 3 else None
FAILED_ONCE: set[str] = set()


class WordsExecutor(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task
        if task is None:
            task = new_task_from_user_message(context.message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        text = context.get_user_input()
        waiting = task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        if "ask me" in text.lower() and not waiting:
            await updater.requires_input(
                new_text_message("What should I echo?", context_id=task.context_id, task_id=task.id)
            )
            return
        await updater.start_work()
        if "fail once" in text.lower() and text not in FAILED_ONCE:
            FAILED_ONCE.add(text)
            await updater.failed(
                new_text_message("a simulated outage", context_id=task.context_id, task_id=task.id)
            )
            return
        words = text.split()
        for i, word in enumerate(words):
            await asyncio.sleep(DELAY)
            await updater.add_artifact(
                [new_text_part(word if i == 0 else " " + word)],
                artifact_id="words",
                name="words",
                append=i > 0,
                last_chunk=i == len(words) - 1,
            )
        done = new_text_message("done: " + text, context_id=task.context_id, task_id=task.id)
        if "report usage" in text.lower():
            # As an agent that calls a model reports it: OpenTelemetry GenAI's names.
            usage = {
                "gen_ai.usage.input_tokens": len(text),
                "gen_ai.usage.output_tokens": len(words),
                "gen_ai.request.model": "words-1",
            }
            await updater.update_status(TaskState.TASK_STATE_COMPLETED, message=done, metadata=usage)
        else:
            await updater.complete(done)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.cancel()


class RecordTraceContext:
    """What a traced caller sent, for the tests: a line for each request carrying a W3C
    trace context (plain ASGI, so streamed answers pass untouched)."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            for name, value in scope["headers"]:
                if name == b"traceparent":
                    print(f"TRACEPARENT {scope['path']} {value.decode()}", flush=True)
            if os.environ.get("LOG_REQUESTS"):
                print(f"REQUEST {scope['method']} {scope['path']}", flush=True)
        await self.app(scope, receive, send)


class RequireToken:
    """Bearer tokens checked as a resource server behind an OpenID Provider would:
    signature, issuer, audience, expiry (no leeway) and scope (plain ASGI)."""

    def __init__(self, app):
        import jwt

        self.app = app
        self.jwt = jwt
        self.issuer = os.environ["REQUIRE_TOKEN_ISSUER"]
        self.audience = os.environ["REQUIRE_TOKEN_AUDIENCE"]
        self.keys = jwt.PyJWKClient(f"{self.issuer}/jwks")
        self.used: set[str] = set()

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["path"].startswith("/.well-known/"):
            return await self.app(scope, receive, send)
        auth = dict(scope["headers"]).get(b"authorization", b"").decode()
        token = auth[7:] if auth.lower().startswith("bearer ") else ""
        try:
            key = self.keys.get_signing_key_from_jwt(token)
            claims = self.jwt.decode(
                token, key, algorithms=["RS256"], audience=self.audience, issuer=self.issuer
            )
            if "a2a" not in claims.get("scope", "").split():
                raise self.jwt.InvalidTokenError("the token lacks the scope a2a")
            if os.environ.get("REVOKE_AFTER_USE") and token in self.used:
                raise self.jwt.InvalidTokenError("the token was revoked")
        except Exception as e:  # noqa: BLE001 - every refusal is a 401 naming why
            print(f"REFUSED {e}", flush=True)
            body = f'{{"error": "invalid_token", "error_description": "{e}"}}'.encode()
            await send({
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"www-authenticate", b'Bearer error="invalid_token"'),
                ],
            })
            await send({"type": "http.response.body", "body": body})
            return
        self.used.add(token)
        act = claims.get("act", {}).get("sub", "-")
        print(f"TOKEN sub={claims['sub']} aud={claims['aud']} act={act} tail={token[-12:]}", flush=True)
        await self.app(scope, receive, send)


def main() -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    # Listening before the port is announced: connections wait for the server.
    sock.listen(128)
    port = sock.getsockname()[1]
    grpc_server = None
    # grpcio's server belongs to the loop it is made in: the one that runs everything.
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    if BINDING == "grpc":
        import grpc

        class RecordTraceMetadata(grpc.aio.ServerInterceptor):
            """The gRPC twin of RecordTraceContext: a line per call carrying a W3C trace
            context in its metadata."""

            async def intercept_service(self, continuation, details):
                for key, value in details.invocation_metadata or ():
                    if key == "traceparent":
                        print(f"TRACEPARENT {details.method} {value}", flush=True)
                return await continuation(details)

        grpc_server = grpc.aio.server(interceptors=[RecordTraceMetadata()])
        grpc_port = grpc_server.add_insecure_port("127.0.0.1:0")
        interface_url = f"127.0.0.1:{grpc_port}"
    else:
        interface_url = PUBLIC_URL or f"http://127.0.0.1:{port}/"
    card = AgentCard(
        name="SDK 1.x words agent",
        description="Streams words back (official a2a-sdk 1.x, v1.0 only)",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(
                url=interface_url,
                protocol_binding={"rest": "HTTP+JSON", "grpc": "GRPC"}.get(BINDING, "JSONRPC"),
                protocol_version="1.0",
            )
        ],
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
    if os.environ.get("REQUIRE_TOKEN_ISSUER"):
        issuer = os.environ["REQUIRE_TOKEN_ISSUER"]
        card.security_schemes["oauth"].CopyFrom(
            SecurityScheme(
                oauth2_security_scheme=OAuth2SecurityScheme(
                    flows=OAuthFlows(
                        client_credentials=ClientCredentialsOAuthFlow(
                            token_url=f"{issuer}/token", scopes={"a2a": "call the agent"}
                        )
                    )
                )
            )
        )
        card.security_requirements.append(SecurityRequirement(schemes={"oauth": StringList(list=["a2a"])}))
    if os.environ.get("SIGN_CARD_KEY"):
        from a2a.utils.signing import create_agent_card_signer

        with open(os.environ["SIGN_CARD_KEY"], "rb") as f:
            key = f.read()
        sign = create_agent_card_signer(
            key, {"alg": "ES256", "kid": os.environ.get("SIGN_CARD_KID", "py-key"), "typ": "JOSE"}
        )
        card = sign(card)
        if os.environ.get("TAMPER_CARD"):
            card.description = card.description + " (changed)"
    handler = DefaultRequestHandler(
        agent_executor=WordsExecutor(), task_store=InMemoryTaskStore(), agent_card=card
    )
    if BINDING == "rest":
        routes = create_agent_card_routes(card) + create_rest_routes(handler)
    elif BINDING == "grpc":
        from a2a.server.request_handlers.grpc_handler import GrpcHandler
        from a2a.types import a2a_pb2_grpc

        cut_after = int(os.environ.get("CUT_STREAM_AFTER", "0"))

        class Cutting(GrpcHandler):
            cut = False

            async def SendStreamingMessage(self, request, context):
                sent = 0
                async for event in super().SendStreamingMessage(request, context):
                    yield event
                    sent += 1
                    if cut_after and not Cutting.cut and sent >= cut_after:
                        Cutting.cut = True
                        print("CUT", flush=True)
                        await context.abort(grpc.StatusCode.UNAVAILABLE, "the connection was cut")

        a2a_pb2_grpc.add_A2AServiceServicer_to_server(Cutting(handler), grpc_server)
        routes = create_agent_card_routes(card)
    else:
        routes = create_agent_card_routes(card) + create_jsonrpc_routes(handler, "/")
    middleware = [Middleware(RecordTraceContext)]
    if os.environ.get("REQUIRE_TOKEN_ISSUER"):
        middleware.append(Middleware(RequireToken))
    app = Starlette(routes=routes, middleware=middleware)

    config = uvicorn.Config(app, log_level="warning")
    server = uvicorn.Server(config)

    async def serve() -> None:
        if grpc_server is not None:
            await grpc_server.start()
        print(f"PORT {port}", flush=True)
        await server.serve(sockets=[sock])

    loop.run_until_complete(serve())


if __name__ == "__main__":
    main()
