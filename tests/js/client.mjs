// The official JavaScript SDK's client (@a2a-js/sdk 1.x) sends to and streams from an
// A2A server over v1.0 — a second independent implementation beside the Python SDK.
//
//     node client.mjs BASE_URL BINDING SCENARIO
//
// BINDING is JSONRPC, HTTP+JSON or GRPC (the SDK's gRPC transport on @grpc/grpc-js, to
// the card's `host:port`). Exits non-zero with the reason when the server does
// not do what a conforming one must; prints "ok" otherwise.

import { randomUUID } from 'node:crypto';
import {
  ClientFactory,
  ClientFactoryOptions,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from '@a2a-js/sdk/client';
import { GrpcTransportFactory } from '@a2a-js/sdk/client/grpc';

const [base, binding, scenario] = process.argv.slice(2);

function check(cond, what) {
  if (!cond) throw new Error(what);
}

const ROLE_USER = 1;
const COMPLETED = 3;
const INPUT_REQUIRED = 6;

function message(parts, extra = {}) {
  return {
    messageId: randomUUID(),
    contextId: '',
    taskId: '',
    role: ROLE_USER,
    parts: parts.map((p) => ({ metadata: undefined, filename: '', mediaType: '', ...p })),
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
    ...extra,
  };
}

const request = (message) => ({ tenant: '', message, configuration: undefined, metadata: undefined });

const text = (value) => ({ content: { $case: 'text', value } });
const data = (value) => ({ content: { $case: 'data', value } });
const partsText = (parts) =>
  parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');

async function client() {
  const transports = {
    JSONRPC: new JsonRpcTransportFactory(),
    'HTTP+JSON': new RestTransportFactory(),
    GRPC: new GrpcTransportFactory(),
  };
  check(transports[binding], `unknown binding ${binding}`);
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [transports[binding]],
      preferredTransports: [binding],
    }),
  );
  return factory.createFromUrl(base);
}

const scenarios = {
  // The echo agent: a blocking send, then a stream with its chunks in order.
  async echo() {
    const c = await client();
    const sent = await c.sendMessage(
      request(message([text('hello from javascript')])),
    );
    check(sent.status?.state === COMPLETED, `completed: ${JSON.stringify(sent.status)}`);
    const echoed = sent.artifacts.map((a) => partsText(a.parts)).join('');
    check(echoed === 'hello from javascript', `echoed: ${echoed}`);
    const events = [];
    for await (const e of c.sendMessageStream(
      request(message([text('streamed by js')])),
    )) {
      events.push(e);
    }
    const chunks = events
      .filter((e) => e.payload?.$case === 'artifactUpdate')
      .map((e) => e.payload.value);
    check(chunks.length === 3, `one chunk a word: ${JSON.stringify(events)}`);
    check(chunks.map((u) => partsText(u.artifact.parts)).join('') === 'streamed by js', 'in order');
    check(chunks[2].lastChunk && chunks[1].append, 'append and lastChunk');
    const last = events[events.length - 1].payload;
    check(
      last.$case === 'statusUpdate' && last.value.status.state === COMPLETED,
      `ends completed: ${JSON.stringify(last)}`,
    );
  },
  // The orchestrator: a workflow run streamed, its approval answered on the same task.
  async host() {
    const c = await client();
    const events = [];
    const start = message([data({ workflow: 'approve', input: {} })]);
    for await (const e of c.sendMessageStream(request(start))) {
      events.push(e);
    }
    const last = events[events.length - 1].payload;
    check(
      last.$case === 'statusUpdate' && last.value.status.state === INPUT_REQUIRED,
      `waits for the approval: ${JSON.stringify(last)}`,
    );
    const answer = message([text('yes')], {
      taskId: last.value.taskId,
      contextId: last.value.contextId,
    });
    const done = await c.sendMessage(request(answer));
    check(done.status?.state === COMPLETED, `completed: ${JSON.stringify(done.status)}`);
    const result = done.artifacts.find((a) => a.artifactId === 'result');
    check(result && partsText(result.parts).includes('approved and echoed'), 'the result');
  },
};

try {
  check(scenarios[scenario], `unknown scenario ${scenario}`);
  await scenarios[scenario]();
  console.log('ok');
} catch (e) {
  console.error(e?.stack ?? e);
  process.exit(1);
}
