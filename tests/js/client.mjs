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
import { TaskNotFoundError } from '@a2a-js/sdk/errors';

const [base, binding, scenario] = process.argv.slice(2);

function check(cond, what) {
  if (!cond) throw new Error(what);
}

const ROLE_USER = 1;
const WORKING = 2;
const COMPLETED = 3;
const CANCELED = 5;
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
// A send that answers at once with the task while it runs on.
const submit = (message) => ({
  tenant: '',
  message,
  configuration: {
    acceptedOutputModes: [],
    taskPushNotificationConfig: undefined,
    historyLength: undefined,
    returnImmediately: true,
  },
  metadata: undefined,
});

async function refused(call, what) {
  try {
    await call();
  } catch (e) {
    return e;
  }
  throw new Error(`${what}: not refused`);
}

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
  const c = await factory.createFromUrl(base);
  check(
    c.transport.constructor.name.toLowerCase().includes(binding === 'HTTP+JSON' ? 'rest' : binding.toLowerCase()),
    `the client uses ${binding}, not ${c.transport.constructor.name}`,
  );
  return c;
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
  // The task operations on the echo agent: get (historyLength 0 and not found), list
  // with paging, subscribe, push-config CRUD and cancel.
  async tasks() {
    const c = await client();
    const sent = await c.sendMessage(request(message([text('get me back')])));
    const none = await c.getTask({ tenant: '', id: sent.id, historyLength: 0 });
    check(none.id === sent.id && none.history.length === 0, `historyLength 0: ${JSON.stringify(none.history)}`);
    const whole = await c.getTask({ tenant: '', id: sent.id });
    check(whole.history.length >= 1, 'the history by default');
    const missing = await refused(() => c.getTask({ tenant: '', id: 'no-such-task' }), 'an unknown task');
    check(missing instanceof TaskNotFoundError, `TaskNotFoundError: ${missing}`);

    const contextId = randomUUID();
    const ids = [];
    for (const word of ['first', 'second', 'third']) {
      ids.push((await c.sendMessage(request(message([text(word)], { contextId })))).id);
    }
    const page = await c.listTasks({
      tenant: '', contextId, status: 0, pageSize: 2, pageToken: '', statusTimestampAfter: undefined,
    });
    check(page.totalSize === 3, `three in the context: ${page.totalSize}`);
    check(page.tasks.length === 2 && page.nextPageToken, 'a first page of two and a token');
    check(page.tasks.map((t) => t.id).join() === [ids[2], ids[1]].join(), 'newest first');
    const rest = await c.listTasks({
      tenant: '', contextId, status: 0, pageSize: 2, pageToken: page.nextPageToken,
      statusTimestampAfter: undefined, includeArtifacts: true,
    });
    check(rest.tasks.map((t) => t.id).join() === ids[0] && rest.nextPageToken === '', 'the last page');
    check(partsText(rest.tasks[0].artifacts[0].parts) === 'first', 'artifacts when asked');
    const working = await c.listTasks({
      tenant: '', contextId, status: WORKING, pageToken: '', statusTimestampAfter: undefined,
    });
    check(working.totalSize === 0, 'none of them is working');

    // Fifty words, a hundredth of a second each: still working when the subscription
    // arrives, however loaded the machine (a finished task cannot be subscribed to).
    const followed = await c.sendMessage(submit(message([text('follow these words from elsewhere '.repeat(10))])));
    const events = [];
    for await (const e of c.resubscribeTask({ tenant: '', id: followed.id })) events.push(e);
    check(events[0].payload?.$case === 'task', `the task first: ${JSON.stringify(events[0])}`);
    const end = events[events.length - 1].payload;
    check(end.$case === 'statusUpdate' && end.value.status.state === COMPLETED, 'followed to the end');

    const slow = await c.sendMessage(submit(message([text('slow '.repeat(200))])));
    const config = {
      tenant: '', id: 'hook-1', taskId: slow.id, url: 'http://127.0.0.1:9/hook', token: 'secret',
      authentication: undefined,
    };
    const made = await c.createTaskPushNotificationConfig(config);
    check(made.id === 'hook-1' && made.url === config.url, `created: ${JSON.stringify(made)}`);
    const got = await c.getTaskPushNotificationConfig({ tenant: '', taskId: slow.id, id: 'hook-1' });
    check(got.token === 'secret', `got: ${JSON.stringify(got)}`);
    const listed = await c.listTaskPushNotificationConfig({ tenant: '', taskId: slow.id, pageSize: 0, pageToken: '' });
    check(listed.configs.map((x) => x.id).join() === 'hook-1', `listed: ${JSON.stringify(listed)}`);
    await c.deleteTaskPushNotificationConfig({ tenant: '', taskId: slow.id, id: 'hook-1' });
    const after = await c.listTaskPushNotificationConfig({ tenant: '', taskId: slow.id, pageSize: 0, pageToken: '' });
    check(after.configs.length === 0, 'deleted');

    const canceled = await c.cancelTask({ tenant: '', id: slow.id, metadata: undefined });
    check(canceled.status.state === CANCELED, `canceled: ${JSON.stringify(canceled.status)}`);
  },
  // The extended card: refused without the token, the extended one with it.
  async extended() {
    const c = await client();
    const e = await refused(() => c.getAgentCard(), 'the extended card without a token');
    const said = String(e?.message ?? e).toLowerCase();
    // HTTP 401, or gRPC status 16 (UNAUTHENTICATED), however the transport words it.
    check(['401', 'unauth', 'authentication required', ': 16 '].some((w) => said.includes(w)), `refused as unauthenticated: ${e}`);
    const card = await c.getAgentCard({ serviceParameters: { authorization: 'Bearer s3cret' } });
    check(card.description === 'the extended description', `the extended card: ${card.description}`);
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
