// A downstream A2A agent written with the official JavaScript SDK (@a2a-js/sdk 1.x) and
// its defaults: A2A v1.0, JSON-RPC and HTTP+JSON mounted with the SDK's Express
// handlers, a card with `supportedInterfaces`. It streams the words of the text it
// receives back as chunks of one artifact, DELAY_MS apart, and honours cancel. Asked
// "please ask me", it asks what to say (`input-required`) and streams the answer back.
//
//     node agent.mjs [DELAY_MS] [jsonrpc|rest|grpc]
//
// The binding named is listed first on the card; with grpc, the card (still served over
// HTTP) lists only a GRPC interface: the SDK's grpcService on a @grpc/grpc-js server of
// its own port (`127.0.0.1:PORT`, as grpc-js dials). It binds 127.0.0.1 on a free port and
// prints `PORT <n>` once it is serving. With SIGN_CARD_KEY (a PKCS#8 PEM file, ES256) its
// card is signed with the SDK's own signer (kid SIGN_CARD_KID); with TAMPER_CARD set,
// the description is changed after signing.

import { readFileSync } from 'node:fs';
import { createPrivateKey } from 'node:crypto';

import express from 'express';
import * as grpc from '@grpc/grpc-js';
import { AGENT_CARD_PATH, Role, TaskState, generateAgentCardSignature } from '@a2a-js/sdk';
import {
  AgentEvent,
  DefaultRequestHandler,
  InMemoryTaskStore,
} from '@a2a-js/sdk/server';
import {
  UserBuilder,
  agentCardHandler,
  jsonRpcHandler,
  restHandler,
} from '@a2a-js/sdk/server/express';
import { A2AService, grpcService, UserBuilder as GrpcUserBuilder } from '@a2a-js/sdk/server/grpc';

const DELAY_MS = Number(process.argv[2] ?? 50);
const FIRST = process.argv[3] ?? 'jsonrpc';

const text = (value) => ({
  content: { $case: 'text', value },
  metadata: undefined,
  filename: '',
  mediaType: 'text/plain',
});

class WordsExecutor {
  canceled = new Set();

  cancelTask = async (taskId) => {
    this.canceled.add(taskId);
  };

  async execute(ctx, bus) {
    const { taskId, contextId, userMessage } = ctx;
    const status = (state) =>
      AgentEvent.statusUpdate({
        taskId,
        contextId,
        status: { state, timestamp: new Date().toISOString(), message: undefined },
        metadata: undefined,
      });
    if (ctx.task) {
      // The SDK wants a stream to open with the task (or a message), an answer too.
      bus.publish(AgentEvent.task(ctx.task));
    } else {
      bus.publish(
        AgentEvent.task({
          id: taskId,
          contextId,
          status: { state: TaskState.TASK_STATE_SUBMITTED, timestamp: new Date().toISOString(), message: undefined },
          artifacts: [],
          history: [userMessage],
          metadata: undefined,
        })
      );
    }
    bus.publish(status(TaskState.TASK_STATE_WORKING));
    const said = userMessage.parts
      .filter((p) => p.content?.$case === 'text')
      .map((p) => p.content.value)
      .join(' ');
    const answering = ctx.task?.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED;
    if (!answering && said.includes('please ask me')) {
      bus.publish(
        AgentEvent.statusUpdate({
          taskId,
          contextId,
          status: {
            state: TaskState.TASK_STATE_INPUT_REQUIRED,
            timestamp: new Date().toISOString(),
            message: {
              messageId: `ask-${taskId}`,
              contextId,
              taskId,
              role: Role.ROLE_AGENT,
              parts: [text('What should I say?')],
              metadata: undefined,
              extensions: [],
              referenceTaskIds: [],
            },
          },
          metadata: undefined,
        })
      );
      return;
    }
    const words = said.split(/\s+/).filter((w) => w.length > 0);
    try {
      for (let i = 0; i < words.length; i++) {
        await new Promise((r) => setTimeout(r, DELAY_MS));
        if (this.canceled.has(taskId)) {
          bus.publish(status(TaskState.TASK_STATE_CANCELED));
          return;
        }
        bus.publish(
          AgentEvent.artifactUpdate({
            taskId,
            contextId,
            artifact: {
              artifactId: 'words',
              name: 'words',
              description: '',
              parts: [text(i === 0 ? words[i] : ' ' + words[i])],
              metadata: undefined,
              extensions: [],
            },
            append: i > 0,
            lastChunk: i === words.length - 1,
            metadata: undefined,
          })
        );
      }
      bus.publish(status(TaskState.TASK_STATE_COMPLETED));
    } finally {
      this.canceled.delete(taskId);
    }
  }
}

const app = express();
const server = app.listen(0, '127.0.0.1', async () => {
  const port = server.address().port;
  const base = `http://127.0.0.1:${port}`;
  const interfaces = [
    { url: `${base}/a2a/jsonrpc`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' },
    { url: `${base}/a2a/rest`, protocolBinding: 'HTTP+JSON', tenant: '', protocolVersion: '1.0' },
  ];
  if (FIRST === 'rest') interfaces.reverse();
  let grpcServer;
  if (FIRST === 'grpc') {
    grpcServer = new grpc.Server();
    const grpcPort = await new Promise((resolve, reject) =>
      grpcServer.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) =>
        e ? reject(e) : resolve(p),
      ),
    );
    interfaces.splice(0, interfaces.length, {
      url: `127.0.0.1:${grpcPort}`, protocolBinding: 'GRPC', tenant: '', protocolVersion: '1.0',
    });
  }
  const card = {
    name: 'JS SDK words agent',
    description: 'Streams words back (official @a2a-js/sdk 1.x)',
    supportedInterfaces: interfaces,
    version: '1.0.0',
    capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [
      { id: 'words', name: 'Words', description: 'Streams the words back', tags: ['test'], examples: [], inputModes: [], outputModes: [], securityRequirements: [] },
    ],
    documentationUrl: '',
    signatures: [],
  };
  let served = card;
  if (process.env.SIGN_CARD_KEY) {
    const key = createPrivateKey(readFileSync(process.env.SIGN_CARD_KEY));
    const sign = generateAgentCardSignature(key, {
      alg: 'ES256',
      kid: process.env.SIGN_CARD_KID ?? 'js-key',
      typ: 'JOSE',
    });
    served = await sign(card);
    if (process.env.TAMPER_CARD) served = { ...served, description: `${served.description} (changed)` };
  }
  const requestHandler = new DefaultRequestHandler(served, new InMemoryTaskStore(), new WordsExecutor());
  const userBuilder = UserBuilder.noAuthentication;
  app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: requestHandler }));
  app.use('/a2a/jsonrpc', jsonRpcHandler({ requestHandler, userBuilder }));
  app.use('/a2a/rest', restHandler({ requestHandler, userBuilder }));
  if (grpcServer) {
    grpcServer.addService(
      A2AService,
      grpcService({ requestHandler, userBuilder: GrpcUserBuilder.noAuthentication }),
    );
  }
  console.log(`PORT ${port}`);
});
