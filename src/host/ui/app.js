// The orchestrator's web view: the runs, and one run drawn live. It is an A2A client like
// any other: the agent card, then A2A 1.0 JSON-RPC (ListTasks, GetTask, SubscribeToTask,
// SendMessage, CancelTask) with the caller's token; nothing here bypasses auth. On a
// server whose users sign in (`/ui/config.json` names the OpenID Provider), the page
// signs them in with the authorization-code flow and PKCE and keeps the token in
// memory only; else it takes a pasted token (kept for the tab's session). It offers
// only what its user may do (docs/security.md). The run detail it draws is the one
// every task carries under `metadata.run` (docs/runs.md).
//
// Pages are built once and updated in place as events arrive (dom.js builds every
// element from text, never from HTML); forms come from the workflows' input schemas
// (forms.js); agents' output is rendered as markdown without HTML (markdown.js); the DAG
// and the timeline are graph.js.

import {
  h, add, setText, setAttr, stateName, terminal, badge, setBadge, duration, when, shortId,
  partsText, appended, usedText,
} from './dom.js';
import { inline, markdown } from './markdown.js';
import { schemaForm } from './forms.js';
import { dagView, timelineView, span } from './graph.js';

const $ = (sel) => document.querySelector(sel);
const main = $('#main');
const tokenInput = $('#token');
tokenInput.value = sessionStorage.getItem('a2a-token') || '';
// A new token takes effect at the page's next call: the page refreshes what it shows
// without drawing itself again (the user may be typing in it).
tokenInput.addEventListener('change', () => {
  if (tokenInput.value === (sessionStorage.getItem('a2a-token') || '') && me) return;
  sessionStorage.setItem('a2a-token', tokenInput.value);
  me = null;
  extended = null;
  sources = null;
  if (page && page.refresh) page.refresh();
  else route();
});

// ---- who is signed in --------------------------------------------------------------

let signIn = null; // the provider's endpoints and our client id, when users sign in
let accessToken = null; // in memory only: gone with the page
let me = null; // the caller, as the extended card names it: {id, subject, name, groups, roles}
let extended = null; // the extended card, fetched with the caller's token
const CALLER = 'https://github.com/a2a-orchestrator/a2a-orchestrator/blob/main/docs/security.md#the-caller';

const b64url = (bytes) => btoa(String.fromCharCode(...new Uint8Array(bytes)))
  .replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
function randomString() {
  const a = new Uint8Array(32);
  crypto.getRandomValues(a);
  return b64url(a);
}
const redirectUri = () => `${location.origin}/ui/`;

async function loadSignIn() {
  const config = await (await fetch('/ui/config.json')).json();
  if (!config.oidc) return;
  const issuer = config.oidc.issuer.replace(/\/$/, '');
  const meta = await (await fetch(`${issuer}/.well-known/openid-configuration`)).json();
  signIn = {
    clientId: config.oidc.clientId,
    scope: config.oidc.scope || 'openid profile',
    authorize: meta.authorization_endpoint,
    token: meta.token_endpoint,
  };
  $('#token-label').hidden = true;
  const params = new URLSearchParams(location.search);
  if (params.get('code') || params.get('error')) await finishSignIn(params);
}

async function startSignIn() {
  const verifier = randomString();
  const state = randomString();
  const challenge = b64url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)));
  // Only what the round trip needs, for this tab; the token itself is never stored.
  sessionStorage.setItem('a2a-sign-in', JSON.stringify({ verifier, state, hash: location.hash }));
  const url = new URL(signIn.authorize);
  url.search = new URLSearchParams({
    response_type: 'code', client_id: signIn.clientId, redirect_uri: redirectUri(), scope: signIn.scope,
    state, code_challenge: challenge, code_challenge_method: 'S256',
  }).toString();
  location.assign(url.href);
}

async function finishSignIn(params) {
  const pending = JSON.parse(sessionStorage.getItem('a2a-sign-in') || 'null');
  sessionStorage.removeItem('a2a-sign-in');
  history.replaceState(null, '', `/ui/${(pending && pending.hash) || ''}`);
  if (params.get('error')) throw new Error(`sign-in refused: ${params.get('error_description') || params.get('error')}`);
  if (!pending || pending.state !== params.get('state')) throw new Error('sign-in: the answer does not match this page\'s request; sign in again');
  const resp = await fetch(signIn.token, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code', code: params.get('code'), redirect_uri: redirectUri(),
      client_id: signIn.clientId, code_verifier: pending.verifier,
    }),
  });
  const body = await resp.json().catch(() => ({}));
  if (!resp.ok || !body.access_token) throw new Error(`sign-in: the provider answered ${resp.status} ${body.error || ''} ${body.error_description || ''}`);
  accessToken = body.access_token;
}

function signOut() {
  accessToken = null;
  me = null;
  extended = null;
  sources = null;
  showWho();
  route();
}

// Who the server says the caller is (the extended card's caller extension).
async function loadMe() {
  const offered = card && (card.supportsAuthenticatedExtendedCard || (card.capabilities || {}).extendedAgentCard);
  if (!offered || !(accessToken || tokenInput.value)) return;
  extended = await rpc('GetExtendedAgentCard', {});
  const ext = ((extended.capabilities || {}).extensions || []).find((e) => e.uri === CALLER);
  me = ext ? ext.params : null;
}

function showWho() {
  const who = $('#who');
  who.hidden = !me;
  who.textContent = me ? `Signed in as ${me.name}` : '';
  $('#sign-out').hidden = !(signIn && accessToken);
  $('#sign-in').hidden = !(signIn && !accessToken);
}
$('#sign-in').addEventListener('click', () => startSignIn().catch(showError));
$('#sign-out').addEventListener('click', signOut);

// What the caller may do with a run: an open server lets anyone do anything; else its
// initiator and operators steer it, and a question's approvers answer it.
function names(pattern) {
  if (!me) return true;
  if (pattern === '*') return true;
  const at = pattern.indexOf(':');
  const kind = pattern.slice(0, at);
  const name = pattern.slice(at + 1);
  if (kind === 'group') return (me.groups || []).includes(name);
  if (kind === 'sub') return me.subject === name;
  if (kind === 'role') return (me.roles || []).includes(name);
  return false;
}
function maySteer(run) {
  return !me || !run.startedBy || run.startedBy.id === me.id
    || (me.roles || []).some((r) => r === 'operator' || r === 'admin');
}
function mayAnswer(q, run) {
  if (!me) return true;
  if (q.fourEyes && run.startedBy && run.startedBy.id === me.id) return false;
  if (!(q.approvers || []).length) return maySteer(run);
  return q.approvers.some(names);
}

let card = null;
let endpoint = '/';
let nextId = 1;
let page = null; // what the current page must stop when it is left

function headers(extra) {
  const h = Object.assign({ 'content-type': 'application/json', 'A2A-Version': '1.0' }, extra || {});
  const token = signIn ? accessToken : tokenInput.value;
  if (token) h.authorization = 'Bearer ' + token;
  return h;
}

function showError(e) {
  const box = $('#error');
  box.hidden = !e;
  box.textContent = e ? String(e.message || e) : '';
}

// The spec's TaskNotFoundError: a run that is not there, or not the caller's to read.
const TASK_NOT_FOUND = -32001;

async function rpc(method, params) {
  const resp = await fetch(endpoint, {
    method: 'POST',
    headers: headers(),
    body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }),
  });
  let body = null;
  try { body = await resp.json(); } catch (_) { /* reported below */ }
  if (resp.status === 401) {
    throw new Error(`${method}: 401 — the server wants credentials: ${signIn ? 'sign in' : 'give a token above'}`);
  }
  if (!body) throw new Error(`${method}: HTTP ${resp.status}`);
  if (body.error) {
    const e = new Error(`${method}: ${body.error.message} (code ${body.error.code})`);
    e.code = body.error.code;
    throw e;
  }
  return body.result;
}

// SubscribeToTask as server-sent events over a POST; calls `onEvent` with each
// StreamResponse. Resolves when the stream ends.
async function subscribe(id, onEvent, signal) {
  const resp = await fetch(endpoint, {
    method: 'POST',
    headers: headers({ accept: 'text/event-stream' }),
    body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method: 'SubscribeToTask', params: { id } }),
    signal,
  });
  if (!resp.ok || !resp.body) return;
  const reader = resp.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      const frame = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const data = frame.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim()).join('\n');
      if (!data) continue;
      const msg = JSON.parse(data);
      if (msg.result) onEvent(msg.result);
    }
  }
}

const messageId = () => (crypto.randomUUID ? crypto.randomUUID() : `${Date.now()}-${Math.random()}`);

// A message to the orchestrator: a new task, or (with `taskId`) an answer on one.
function send(parts, extra) {
  return rpc('SendMessage', {
    message: Object.assign({ messageId: messageId(), role: 'ROLE_USER', parts }, extra || {}),
    configuration: { returnImmediately: true },
  });
}

// A run's steps as done so far: how many completed of all, and how many ended
// otherwise (a canceled run does not read as all done).
function progress(run) {
  const steps = run.steps.filter((s) => s.item == null);
  const completed = steps.filter((s) => s.state === 'completed' || s.state === 'skipped').length;
  const other = ['failed', 'canceled', 'rejected', 'upstream_failed']
    .map((st) => [st, steps.filter((s) => s.state === st).length])
    .filter(([, n]) => n > 0)
    .map(([st, n]) => `${n} ${st.replace('_', ' ')}`);
  return `${completed}/${steps.length} steps done${other.length ? ` (${other.join(', ')})` : ''}`;
}

// The workflows' sources and input schemas, from the card extension that carries them:
// on the card of an open server, on the extended card (asked for with the token) of
// one with credentials.
const SOURCES = 'https://github.com/a2a-orchestrator/a2a-orchestrator/blob/main/docs/runs.md#workflow-sources';
let sources = null;
async function workflowSources() {
  if (sources) return sources;
  if (!card) throw new Error('the card is not loaded yet');
  const find = (c) => ((c && c.capabilities && c.capabilities.extensions) || []).find((e) => e.uri === SOURCES);
  let ext = find(card);
  const offered = card.supportsAuthenticatedExtendedCard || (card.capabilities || {}).extendedAgentCard;
  if (!ext && offered) ext = find(extended || await rpc('GetExtendedAgentCard', {}));
  sources = ext && ext.params ? ext.params.workflows || [] : [];
  return sources;
}
const schemaOf = (id) => ((sources || []).find((w) => w.id === id) || {}).inputSchema;

// What a task waits for before it has a run: a workflow to be chosen, or inputs (the
// data part of its status message, docs/runs.md).
function waitingData(task) {
  const parts = (task.status.message || {}).parts || [];
  const d = parts.find((p) => p.data != null);
  return d ? d.data : {};
}

// ---- pages ------------------------------------------------------------------------

function leave() {
  if (page) page.stop();
  page = null;
}

async function route() {
  leave();
  showError(null);
  const m = location.hash.match(/^#\/run\/(.+)$/);
  const inbox = location.hash === '#/inbox';
  try {
    if (!card) await loadCard();
    if (signIn && !accessToken) {
      showWho();
      main.replaceChildren(h('p', { class: 'muted', id: 'signed-out' }, 'Sign in to see and start your runs.'));
      return;
    }
    if (!me) await loadMe().catch(() => {});
    showWho();
    countInbox();
    if (m) await runPage(decodeURIComponent(m[1]));
    else if (inbox) await inboxPage();
    else await listPage();
  } catch (e) {
    showError(e);
  }
}

async function loadCard() {
  const resp = await fetch('/.well-known/agent-card.json');
  card = await resp.json();
  $('#agent-name').textContent = card.name || '';
  // The card's A2A 1.0 JSON-RPC interface, reached on this page's own origin.
  const iface = (card.supportedInterfaces || []).find((i) => i.protocolBinding === 'JSONRPC' && String(i.protocolVersion).startsWith('1'));
  if (iface) endpoint = new URL(iface.url, location.href).pathname;
}

// ---- the list -----------------------------------------------------------------------

// ---- the inbox ------------------------------------------------------------------------

// Every question the caller may answer, across runs, oldest first (`GET /inbox`, with
// the caller's token).
async function fetchInbox() {
  const r = await fetch('/inbox', { headers: headers() });
  if (!r.ok) throw new Error(`the inbox answered HTTP ${r.status}`);
  return r.json();
}

// The header's count of questions waiting for the caller.
function countInbox() {
  fetchInbox().then(
    (inbox) => setText($('#inbox-count'), inbox.count ? `(${inbox.count})` : ''),
    () => setText($('#inbox-count'), ''),
  );
}

async function inboxPage() {
  const list = h('tbody', { id: 'inbox' });
  const none = h('p', { class: 'muted', id: 'inbox-none', hidden: true }, 'No question waits for you.');
  main.replaceChildren(
    h('h2', {}, 'Inbox'),
    h('p', { class: 'muted' }, 'The questions you may answer, across runs, oldest first. Open a run to answer.'),
    none,
    h('table', { class: 'runs' },
      h('thead', {}, h('tr', {}, ['Run', 'Workflow', 'Step', 'Question', 'Asked', 'Until', 'Started by'].map((t) => h('th', {}, t)))),
      list),
  );
  let timer = null;
  const refresh = async () => {
    clearTimeout(timer);
    const inbox = await fetchInbox();
    setText($('#inbox-count'), inbox.count ? `(${inbox.count})` : '');
    none.hidden = inbox.count > 0;
    list.replaceChildren(...inbox.questions.map((q) => h('tr', { 'data-run': q.run, 'data-step': q.step },
      h('td', {}, shortId(q.run, `#/run/${encodeURIComponent(q.run)}`)),
      h('td', {}, q.workflow || '', q.parent && h('div', { class: 'muted' }, 'for ',
        shortId(q.parent.run, `#/run/${encodeURIComponent(q.parent.run)}`), ` · ${q.parent.step}`)),
      h('td', {}, q.at),
      h('td', { class: 'prompt' }, q.prompt),
      h('td', {}, when(q.askedAt)),
      h('td', {}, when(q.until)),
      h('td', {}, q.startedBy || ''))));
    timer = setTimeout(() => refresh().catch(showError), 5000);
  };
  page = { stop: () => clearTimeout(timer), refresh: () => refresh().then(() => showError(null), showError) };
  await refresh();
}

async function listPage() {
  // The start form: what the caller may start (the extended card lists it; the public
  // card lists only what anyone may), each workflow's inputs a form from its schema.
  // Drawn again only when that changes (a token given, a workflow reloaded).
  const startBox = h('div');
  let startShape = null;
  let skills = [];
  let describe = () => {};
  const drawStart = () => {
    skills = (extended || card).skills || [];
    const shape = JSON.stringify([skills.map((s) => s.id), sources && sources.map((w) => [w.id, w.version])]);
    if (shape === startShape) return;
    startShape = shape;
    if (!skills.length) {
      // Nothing to offer: no form, and no Start button to make a task that asks which.
      startBox.replaceChildren(h('p', { class: 'muted', id: 'start-none' }, 'There is no workflow here you may start.'));
      return;
    }
    const fields = h('div', { class: 'start-fields' });
    const about = h('p', { class: 'muted about' });
    const chosen = startBox.querySelector('select[name=workflow]');
    const pick = h('select', { name: 'workflow', id: 'start-workflow' },
      skills.map((s) => h('option', { value: s.id, selected: chosen && chosen.value === s.id }, s.name || s.id)));
    let form = null;
    // What the workflow does, and whether its agents can be called now (the card's
    // word, fetched again now and then).
    describe = () => {
      const skill = skills.find((s) => s.id === pick.value);
      const source = (sources || []).find((w) => w.id === pick.value) || {};
      const down = source.availability && source.availability !== 'available'
        ? ` (${source.availability} now: ${(source.waitingFor || []).join('; ')})` : '';
      setText(about, skill ? `${(skill.description || '').split('\n\nUnavailable now:')[0]}${down}` : '');
    };
    const choose = () => {
      describe();
      form = schemaForm(schemaOf(pick.value) || { properties: {} });
      fields.replaceChildren(form.el);
    };
    pick.addEventListener('change', choose);
    const start = h('form', { id: 'start', class: 'start', novalidate: true },
      h('label', { class: 'field' }, h('span', { class: 'name' }, 'Workflow to start'), pick),
      about, fields,
      h('div', { class: 'actions' }, h('button', { class: 'primary', type: 'submit' }, 'Start')));
    start.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      const input = form.read();
      if (!input) return;
      try {
        const result = await send([{ data: { workflow: pick.value, input } }]);
        if (result.task) location.hash = `#/run/${encodeURIComponent(result.task.id)}`;
      } catch (e) {
        showError(e);
      }
    });
    startBox.replaceChildren(start);
    choose();
  };
  await workflowSources().catch(() => {});
  drawStart();
  const fWorkflow = h('select', { id: 'f-workflow' }, h('option', { value: '' }, 'any'),
    skills.map((s) => h('option', { value: s.id }, s.name || s.id)));
  const fState = h('select', { id: 'f-state' }, h('option', { value: '' }, 'any'),
    ['working', 'input-required', 'completed', 'failed', 'canceled'].map((s) => h('option', null, s)));
  const body = h('tbody', { id: 'runs' });
  main.replaceChildren(
    h('h1', null, 'Runs'),
    h('details', { class: 'start-box', open: true }, h('summary', null, 'Start a run'), startBox),
    h('div', { class: 'filters' },
      h('label', { class: 'field' }, h('span', { class: 'name' }, 'Show runs of'), fWorkflow),
      h('label', { class: 'field' }, h('span', { class: 'name' }, 'State'), fState)),
    h('table', { class: 'runs' },
      h('thead', null, h('tr', null, ['run', 'workflow', 'state', 'started', 'duration', 'steps', 'waiting for']
        .map((t) => h('th', null, t)))),
      body));
  const rows = new Map();
  const fill = async () => {
    const state = fState.value;
    const params = { pageSize: 100, historyLength: 0, includeArtifacts: false };
    if (state) params.status = 'TASK_STATE_' + state.toUpperCase().replace('-', '_');
    const result = await rpc('ListTasks', params);
    const shown = [];
    for (const t of result.tasks || []) {
      const run = (t.metadata || {}).run;
      const waiting = run ? null : waitingData(t);
      const workflow = run ? run.workflow : waiting.workflow || '';
      if (fWorkflow.value && workflow !== fWorkflow.value) continue;
      if (!run && !waiting.workflow && !waiting.workflows) continue; // not a run's task
      let r = rows.get(t.id);
      if (!r) {
        const cells = Array.from({ length: 6 }, () => h('td'));
        r = { tr: h('tr', { 'data-run': t.id }, h('td', null, shortId(t.id, `#/run/${encodeURIComponent(t.id)}`)), cells), cells, state: badge('') };
        cells[1].append(r.state);
        rows.set(t.id, r);
      }
      const state = run ? run.state : stateName(t.status.state);
      setText(r.cells[0], run ? run.workflow : waiting.workflows ? '(choosing)' : workflow);
      setBadge(r.state, state);
      setText(r.cells[2], run ? when(run.startedAt) : when(t.status.timestamp));
      setText(r.cells[3], run ? duration(run.startedAt, run.endedAt) : '');
      setText(r.cells[4], run ? progress(run) : waiting.workflows ? 'a workflow to choose' : 'inputs to give');
      const q = run ? (run.pendingQuestions || [])[0] : null;
      const said = q ? `${q.step}: ${q.prompt}` : run ? '' : partsText(((t.status.message || {}).parts || []).filter((p) => p.text != null)).split('\n')[0];
      // A line of the agent's markdown: `code` as code, not as backticks.
      if (r.said !== said) {
        r.said = said;
        r.cells[5].replaceChildren(...inline(said));
      }
      shown.push(r.tr);
    }
    const keep = new Set(shown);
    for (const [id, r] of rows) if (!keep.has(r.tr)) { r.tr.remove(); rows.delete(id); }
    if (!shown.length) body.replaceChildren(h('tr', null, h('td', { colspan: 7, class: 'muted' }, 'no runs')));
    else {
      const none = body.querySelector('td[colspan]');
      if (none) none.parentElement.remove();
      // In the list's order (newest first), moving only rows out of place.
      shown.forEach((tr, k) => { if (body.children[k] !== tr) body.insertBefore(tr, body.children[k] || null); });
    }
  };
  let timer = null;
  let refreshes = 0;
  const refresh = async () => {
    clearTimeout(timer);
    try {
      // A token given since: who the caller is, and what it may start.
      if (!me) await loadMe().catch(() => {});
      showWho();
      // The workflows' sources and availability, asked for again every half minute.
      if (++refreshes % 15 === 0) {
        sources = null;
        extended = null;
        await loadCard().catch(() => {});
        await loadMe().catch(() => {});
      }
      await workflowSources().catch(() => {});
      drawStart();
      describe();
      await fill();
      showError(null);
    } catch (e) {
      showError(e);
    }
    timer = setTimeout(refresh, 2000);
  };
  fWorkflow.addEventListener('change', refresh);
  fState.addEventListener('change', refresh);
  page = { stop: () => clearTimeout(timer), refresh };
  await refresh();
}

// ---- one run ----------------------------------------------------------------------

async function runPage(id) {
  const controller = new AbortController();
  let task = null;
  let stopped = false;
  let timer = null;
  let tick = null;
  let view = null; // the drawn page: waiting (no run yet) or run
  const redraw = () => {
    if (!task) return;
    const run = (task.metadata || {}).run;
    const kind = run ? 'run' : 'waiting';
    if (!view || view.kind !== kind) {
      view = kind === 'run' ? runView(id, follow) : waitingView(id, follow);
      main.replaceChildren(view.el);
    }
    view.update(task);
  };
  const refresh = async () => {
    task = await rpc('GetTask', { id });
    redraw();
    return task;
  };
  page = {
    stop: () => { stopped = true; controller.abort(); clearTimeout(timer); clearInterval(tick); },
    refresh: () => refresh().then(() => showError(null), showError),
  };
  // Live: a subscription while the run goes on, each event applied at once; a poll
  // catches what a closed stream (a question, a restart) would miss.
  let following = false;
  async function follow() {
    if (following) return;
    following = true;
    try {
      while (!stopped) {
        let t;
        try {
          t = await refresh();
        } catch (e) {
          if (e.code === TASK_NOT_FOUND && task) {
            // Read before, and no longer: an approver whose question is answered.
            main.replaceChildren(h('p', { class: 'notice', id: 'no-longer' },
              'You may no longer read this run: an approver reads a run only while a question of theirs waits, and yours has been answered.'));
            return;
          }
          if (!task) {
            // Never loaded: the page says why, not "loading…".
            main.replaceChildren(h('p', { class: 'problem', id: 'not-loaded' }, `This run could not be shown: ${e.message || e}`));
          } else {
            showError(e);
          }
          t = task;
        }
        if (!t || terminal(stateName(t.status.state))) return;
        try {
          await subscribe(id, apply, controller.signal);
        } catch (_) { /* the poll below goes on */ }
        if (stopped) return;
        await new Promise((r) => { timer = setTimeout(r, 500); });
      }
    } finally {
      following = false;
    }
  }
  const apply = (ev) => {
    if (!task) return;
    if (ev.task) task = ev.task;
    if (ev.statusUpdate) {
      task.status = ev.statusUpdate.status;
      // A step's update is its move (docs/runs.md); the run's own updates carry the
      // whole detail.
      const meta = ev.statusUpdate.metadata || {};
      if (meta.run) task.metadata = Object.assign(task.metadata || {}, { run: meta.run });
      const u = meta.step && meta.state ? meta : null;
      const run = (task.metadata || {}).run;
      if (u && run) {
        let s = run.steps.find((x) => x.step === u.step && (x.item == null ? u.item == null : x.item === u.item));
        if (!s) { s = { step: u.step, item: u.item, needs: [], attempts: 0 }; run.steps.push(s); }
        const at = task.status.timestamp || new Date().toISOString();
        if (view && view.note && (s.state !== u.state || (u.attempt || 0) > (s.attempts || 0))) view.note(s, u, at);
        s.state = u.state;
        s.attempts = Math.max(s.attempts || 0, u.attempt || 0);
        if (u.agent) s.agent = u.agent;
        if (u.downstreamTaskId) s.downstreamTaskId = u.downstreamTaskId;
        if (!s.startedAt && u.state !== 'pending') s.startedAt = at;
        if (terminal(u.state) || ['skipped', 'upstream_failed'].includes(u.state)) s.endedAt = s.endedAt || at;
        s.message = u.message;
      }
    }
    if (ev.artifactUpdate) {
      const a = ev.artifactUpdate.artifact;
      task.artifacts = task.artifacts || [];
      const have = task.artifacts.find((x) => x.artifactId === a.artifactId);
      if (have && ev.artifactUpdate.append) have.parts = appended(have.parts, a.parts);
      else if (have) Object.assign(have, a);
      else task.artifacts.push(a);
      if (view && view.noteArtifact) view.noteArtifact(a, ev.artifactUpdate);
    }
    redraw();
  };
  main.replaceChildren(h('p', { class: 'muted' }, 'loading…'));
  // The sources (the workflows' inputs and files), fetched beside the run; a failed
  // fetch (the card not loaded yet, a request cut) is tried again a few times.
  const loadSources = (tries) => workflowSources().then(
    () => redraw(),
    () => { if (tries > 0) setTimeout(() => loadSources(tries - 1), 1000); },
  );
  loadSources(10);
  // Times that run on (durations, the timeline's now) move once a second.
  tick = setInterval(() => { if (task && !terminal(stateName(task.status.state))) redraw(); }, 1000);
  follow();
}

// A task that waits, before its run starts, for a workflow to be chosen or for inputs:
// the form that answers it on the same task.
function waitingView(id, follow) {
  const head = h('h1', null, 'A run to start ', shortId(id));
  const stateBadge = badge('');
  const runState = h('span', { id: 'run-state' });
  const said = h('div', { class: 'said md' });
  const formBox = h('div');
  const el = h('div', null, head, h('p', null, stateBadge, runState), said, formBox);
  let shownFor = null;
  const update = (task) => {
    const state = stateName(task.status.state);
    setBadge(stateBadge, state);
    setAttr(runState, 'data-state', state);
    const msg = partsText(((task.status.message || {}).parts || []).filter((p) => p.text != null));
    const data = waitingData(task);
    const key = `${state}|${msg}|${sourcesLoaded()}`;
    if (key === shownFor) return;
    shownFor = key;
    said.replaceChildren(markdown(msg));
    if (state !== 'input-required') { formBox.replaceChildren(); return; }
    formBox.replaceChildren(answerStart(id, data, follow));
  };
  return { kind: 'waiting', el, update };
}
const sourcesLoaded = () => (sources ? sources.length : -1);

// The form for a task that waits to start: a workflow to choose (with its inputs), or
// the inputs the chosen one still needs.
function answerStart(id, data, follow) {
  const choices = data.workflows || null;
  const box = h('div', { class: 'fields' });
  const pick = choices ? h('select', { name: 'workflow' }, choices.map((w) => h('option', { value: w.id }, `${w.name || w.id} — ${w.description || ''}`))) : null;
  let form = null;
  const draw = () => {
    const schema = choices ? (choices.find((w) => w.id === pick.value) || {}).inputSchema : data.inputSchema;
    form = schemaForm(schema || { properties: {} });
    box.replaceChildren(form.el);
  };
  if (pick) pick.addEventListener('change', draw);
  draw();
  const problems = (data.problems || []).length
    ? h('ul', { class: 'problems' }, data.problems.map((p) => h('li', null, p))) : null;
  const f = h('form', { class: 'question start-answer', novalidate: true },
    h('div', null, h('strong', null, choices ? 'Which workflow should run?' : `Inputs for ${data.workflow || 'the workflow'}`)),
    problems,
    pick ? h('label', { class: 'field' }, h('span', { class: 'name' }, 'Workflow'), pick) : null,
    box,
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary', 'data-act': 'start' }, choices ? 'Run it' : 'Give the inputs')));
  f.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const input = form.read();
    if (!input) return;
    try {
      const d = choices ? { workflow: pick.value, input } : { input };
      await send([{ data: d }], { taskId: id });
      showError(null);
      follow();
    } catch (e) {
      showError(e);
    }
  });
  return f;
}

// A run's page, built once and updated in place by `update(task)`.
function runView(id, follow) {
  const title = h('span', { class: 'workflow' });
  const stateBadge = badge('');
  const runState = h('span', { id: 'run-state' });
  const prog = h('span', { id: 'progress' });
  const started = h('span');
  const took = h('span');
  const used = h('span', { id: 'used' });
  const version = h('span', { class: 'mono' });
  const who = h('span');
  const retryOf = h('span');
  const actions = h('span', { class: 'actions' });
  const error = h('div', { class: 'artifact error', hidden: true });
  const questions = h('div', { id: 'questions' });
  const questionsHead = h('h2', { id: 'questions-head' });
  const questionsBox = h('section', { hidden: true }, questionsHead, questions);
  const dag = dagView();
  const timeline = timelineView();
  const output = h('div', { class: 'artifact result md', id: 'result' });
  const outputBox = h('section', { hidden: true }, h('h2', null, 'Output'), output);
  const stepsBody = h('tbody');
  const inputs = h('pre', { class: 'artifact mono', id: 'inputs' });
  const history = h('ol', { id: 'history', class: 'history' });
  const audit = h('ul', { id: 'audit' });
  const auditBox = h('section', { hidden: true }, h('h2', null, 'Audit'), audit);
  const sourceBox = h('section');
  const el = h('div', { class: 'run' },
    h('h1', null, title, ' ', shortId(id)),
    h('p', { class: 'summary' }, stateBadge, runState, ' ', prog, ' · started ', started, ' · ', took, used,
      ' · version ', version, who, retryOf, ' ', actions),
    error, questionsBox,
    h('div', { class: 'views' },
      h('section', null, h('h2', null, 'Steps'), dag.el),
      h('section', null, h('h2', null, 'Timeline'), timeline.el)),
    outputBox,
    h('section', null, h('h2', null, 'Step details'),
      h('table', { class: 'steps' },
        h('thead', null, h('tr', null, ['step', 'state', 'agent', 'attempts', 'time', 'downstream task', 'output']
          .map((t) => h('th', null, t)))),
        stepsBody)),
    h('section', null, h('h2', null, 'Inputs'), inputs),
    h('section', null, h('h2', null, 'History'), history),
    auditBox, sourceBox);

  // -- actions: cancel or retry, as the caller may
  let shownActions = null;
  const drawActions = (run, state) => {
    const key = `${maySteer(run)}|${terminal(state)}`;
    if (key === shownActions) return;
    shownActions = key;
    if (!maySteer(run)) { actions.replaceChildren(); return; }
    actions.replaceChildren(terminal(state)
      ? h('button', { type: 'button', 'data-act': 'retry', onclick: () => act(retry) }, 'Retry')
      : h('button', { type: 'button', class: 'danger', 'data-act': 'cancel', onclick: () => act(() => rpc('CancelTask', { id })) }, 'Cancel'));
  };
  const act = async (f) => {
    try {
      await f();
      showError(null);
      follow();
    } catch (e) {
      showError(e);
    }
  };
  const retry = async () => {
    // A new run that keeps what this one completed (docs/runs.md).
    const result = await send([{ text: `retry run ${id}` }], { metadata: { retryOf: id } });
    if (result.task) location.hash = `#/run/${encodeURIComponent(result.task.id)}`;
  };

  // -- questions, keyed by step and item: a form stays as it is (and what is typed in
  // it) until its question is answered
  const forms = new Map();
  const drawQuestions = (run) => {
    const pending = run.pendingQuestions || [];
    const keep = new Set();
    pending.forEach((q, k) => {
      const key = `${q.step}/${q.item == null ? '' : q.item}/${q.prompt}`;
      keep.add(key);
      let f = forms.get(key);
      if (!f) {
        f = question(id, q, run, follow);
        forms.set(key, f);
      }
      if (questions.children[k] !== f) questions.insertBefore(f, questions.children[k] || null);
    });
    for (const [key, f] of forms) if (!keep.has(key)) { f.remove(); forms.delete(key); }
    questionsBox.hidden = !pending.length;
    // "for you" only when the caller may answer one (not an initiator four eyes leaves out).
    setText(questionsHead, pending.some((q) => mayAnswer(q, run)) ? 'Waiting for you' : 'Waiting for someone else');
  };

  // -- the steps' rows, keyed by step and item
  const rows = new Map();
  const drawSteps = (task, run) => {
    run.steps.forEach((s, k) => {
      const key = `${s.step}/${s.item == null ? '' : s.item}`;
      let r = rows.get(key);
      if (!r) {
        const cells = Array.from({ length: 6 }, () => h('td'));
        const state = badge('');
        cells[0].append(state);
        const agent = h('span');
        const agentUrl = h('div', { class: 'muted mono' });
        cells[1].append(agent, agentUrl);
        const message = h('div', { class: 'muted' });
        const arts = h('div');
        cells[5].append(message, arts);
        cells[4].classList.add('mono');
        r = {
          tr: h('tr', { 'data-step': s.step, 'data-item': s.item == null ? '' : s.item },
            h('td', { class: s.item == null ? '' : 'item' }, s.item == null ? s.step : `${s.step}[${s.item}]`), cells),
          cells, state, agent, agentUrl, message, arts, shown: new Map(),
        };
        rows.set(key, r);
      }
      if (stepsBody.children[k] !== r.tr) stepsBody.insertBefore(r.tr, stepsBody.children[k] || null);
      setAttr(r.tr, 'data-state', s.state);
      setBadge(r.state, s.state);
      setText(r.agent, s.agent || '');
      setText(r.agentUrl, s.agentUrl || '');
      setText(r.cells[2], s.attempts || '');
      const { start, end } = span(s, run);
      const items = s.item == null ? run.steps.filter((i) => i.step === s.step && i.item != null) : [];
      const spent = s.usage && (s.usage.inputTokens || s.usage.outputTokens || s.usage.cost) ? ` · ${usedText(s.usage, run.currency)}` : '';
      setText(r.cells[3], `${start ? duration(start, end) : ''}${items.length ? ` · ${items.filter((i) => i.state === 'completed').length}/${items.length} items` : ''}${spent}`);
      setText(r.cells[4], s.downstreamTaskId || '');
      setText(r.message, s.message || '');
      // Its artifacts, each re-rendered only when it changed.
      const arts = (task.artifacts || []).filter((a) => {
        const m = a.metadata || {};
        return m.step === s.step && (m.item == null ? s.item == null : m.item === s.item);
      });
      for (const a of arts) {
        const text = partsText(a.parts);
        let shown = r.shown.get(a.artifactId);
        if (!shown) {
          shown = { el: h('div', { class: 'artifact md', 'data-artifact': a.artifactId }), text: null };
          r.shown.set(a.artifactId, shown);
          r.arts.append(shown.el);
        }
        if (shown.text !== text) {
          shown.text = text;
          shown.el.replaceChildren(markdown(text));
        }
      }
    });
  };

  // -- the history: what happened, in time order; what the detail says (starts, ends,
  // human actions) and what this page saw happen (attempts, artifacts)
  const events = new Map();
  const record = (key, at, text, kind) => {
    if (events.has(key) || !at) return;
    const li = h('li', { class: `ev ev-${kind}`, 'data-kind': kind },
      h('time', { datetime: at }, new Date(at).toLocaleTimeString()), ' ', text);
    events.set(key, { at, li });
    // In time order: before the first entry that is later.
    const t = Date.parse(at);
    const later = [...events.values()]
      .filter((e) => e.li !== li && Date.parse(e.at) > t)
      .sort((a, b) => Date.parse(a.at) - Date.parse(b.at))[0];
    history.insertBefore(li, later ? later.li : null);
  };
  const drawHistory = (run) => {
    record('run:start', run.startedAt, `run of ${run.workflow} started${run.startedBy ? ` by ${run.startedBy.name}` : ''}`, 'run');
    for (const s of run.steps) {
      const name = s.item == null ? s.step : `${s.step}[${s.item}]`;
      if (s.startedAt) record(`start:${name}`, s.startedAt, `${name} started${s.agent ? ` on ${s.agent}` : ''}`, 'step');
      if (s.endedAt) record(`end:${name}`, s.endedAt, `${name} ${s.state.replace('_', ' ')}${s.message ? `: ${s.message}` : ''}`, s.state === 'completed' ? 'step' : 'problem');
    }
    for (const a of run.audit || []) {
      const what = `${a.action}${a.step ? ` ${a.step}${a.item == null ? '' : `[${a.item}]`}` : ''} by ${a.by.name}`;
      record(`audit:${a.at}:${what}`, a.at, what, 'human');
    }
    if (run.endedAt) record('run:end', run.endedAt, `run ${run.state}${run.error ? `: ${run.error}` : ''}`, run.state === 'completed' ? 'run' : 'problem');
  };
  const note = (s, u, at) => {
    const name = s.item == null ? s.step : `${s.step}[${s.item}]`;
    if ((u.attempt || 0) > 1 && (u.attempt || 0) > (s.attempts || 0)) record(`attempt:${name}:${u.attempt}`, at, `${name}: attempt ${u.attempt}`, 'problem');
    if (u.state === 'input-required') record(`ask:${name}:${at}`, at, `${name} asks${u.message ? `: ${u.message}` : ''}`, 'ask');
  };
  const noteArtifact = (a, upd) => {
    const m = a.metadata || {};
    const name = m.step ? (m.item == null ? m.step : `${m.step}[${m.item}]`) : 'the run';
    const now = new Date().toISOString();
    if (!upd.append) record(`art:${a.artifactId}`, now, `${name}: artifact ${a.name || a.artifactId}`, 'artifact');
    if (upd.lastChunk) record(`art-end:${a.artifactId}`, now, `${name}: artifact ${a.name || a.artifactId} complete`, 'artifact');
  };

  let shownSource = null;
  let shownAudit = -1;
  let shownInputs = null;
  let shownOutput = null;
  const update = (task) => {
    const run = task.metadata.run;
    const state = stateName(task.status.state);
    setText(title, run.workflow);
    setBadge(stateBadge, run.state);
    setAttr(runState, 'data-state', state);
    setText(prog, progress(run));
    setText(started, when(run.startedAt));
    setText(took, duration(run.startedAt, run.endedAt));
    setText(used, run.usage ? ` · ${usedText(run.usage, run.currency)}` : '');
    setText(version, (run.workflowVersion || '').slice(0, 12));
    if (run.startedBy && !who.firstChild) add(who, [' · started by ', h('span', { id: 'started-by' }, run.startedBy.name)]);
    if (run.retryOf && !retryOf.firstChild) add(retryOf, [' · retry of ', shortId(run.retryOf, `#/run/${encodeURIComponent(run.retryOf)}`)]);
    drawActions(run, state);
    error.hidden = !run.error;
    setText(error, run.error || '');
    drawQuestions(run);
    dag.update(run);
    timeline.update(run);
    const result = (task.artifacts || []).find((a) => a.artifactId === 'result');
    const out = result ? partsText(result.parts) : null;
    if (out !== shownOutput) {
      shownOutput = out;
      outputBox.hidden = out == null;
      output.replaceChildren(markdown(out || ''));
    }
    drawSteps(task, run);
    const ins = JSON.stringify(run.inputs, null, 2);
    if (ins !== shownInputs) { shownInputs = ins; setText(inputs, ins); }
    drawHistory(run);
    if ((run.audit || []).length !== shownAudit) {
      shownAudit = (run.audit || []).length;
      auditBox.hidden = !shownAudit;
      audit.replaceChildren(...(run.audit || []).map((a) => h('li', null,
        `${when(a.at)} · ${a.action}${a.step ? ` ${a.step}${a.item == null ? '' : `[${a.item}]`}` : ''} by ${a.by.name}`)));
    }
    const src = sourceOf(run);
    const srcKey = src ? `${src.shown.version}|${src.same}` : null;
    if (srcKey !== shownSource) {
      shownSource = srcKey;
      sourceBox.replaceChildren(...(src ? [h('h2', null, 'Workflow'), h('details', { id: 'source' },
        h('summary', { class: 'mono' }, src.shown.file),
        src.same ? null : h('p', { class: 'muted' }, 'The file changed since this run started; this is the version loaded now.'),
        h('pre', { class: 'artifact mono' }, src.shown.source))] : []));
    }
  };
  return { kind: 'run', el, update, note, noteArtifact };
}

// One question of a run: approve or reject; a form from the question's input schema; or
// a text answer (an agent's question).
function question(id, q, run, follow) {
  const whom = (q.approvers || []).length ? `for ${q.approvers.join(' or ')}` : 'for whoever may steer the run';
  const f = h('form', {
    class: 'question', 'data-step': q.step, 'data-item': q.item == null ? '' : q.item,
    'data-kind': q.kind, novalidate: true,
  });
  const answer = async (parts) => {
    const metadata = { step: q.step };
    if (q.item != null) metadata.item = q.item;
    try {
      await send(parts, { taskId: id, metadata });
      showError(null);
      f.classList.add('sent');
      follow();
    } catch (e) {
      showError(e);
    }
  };
  add(f, [
    h('div', null, h('strong', null, q.item == null ? q.step : `${q.step}[${q.item}]`), ' asks:'),
    h('div', { class: 'artifact md prompt' }, markdown(q.prompt)),
  ]);
  if (!mayAnswer(q, run)) {
    f.append(h('div', { class: 'muted not-yours' }, `Waiting ${whom}${q.fourEyes ? ', not the one who started it' : ''}: not you.`));
    return f;
  }
  if (q.kind === 'approval') {
    f.append(h('div', { class: 'actions' },
      h('button', { type: 'button', class: 'primary', 'data-act': 'yes', onclick: () => answer([{ text: 'yes' }]) }, 'Approve'),
      h('button', { type: 'button', class: 'danger', 'data-act': 'no', onclick: () => answer([{ text: 'no' }]) }, 'Reject')));
  } else if (q.kind === 'input' && q.inputSchema) {
    const form = schemaForm(q.inputSchema);
    f.append(form.el, h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary', 'data-act': 'answer' }, 'Answer')));
    f.addEventListener('submit', (ev) => {
      ev.preventDefault();
      const values = form.read();
      if (values) answer([{ data: values }]);
    });
  } else {
    const input = h('input', { name: 'answer', placeholder: 'your answer', autocomplete: 'off' });
    f.append(h('div', { class: 'actions' }, input, h('button', { type: 'submit', class: 'primary', 'data-act': 'answer' }, 'Answer')));
    f.addEventListener('submit', (ev) => {
      ev.preventDefault();
      if (input.value.trim()) answer([{ text: input.value }]);
    });
  }
  return f;
}

// The run's workflow source, when the card carries it: the version the run started
// with, or the loaded one with a note when the file changed since.
function sourceOf(run) {
  const all = (sources || []).filter((w) => w.id === run.workflow);
  const same = all.find((w) => w.version === run.workflowVersion);
  const shown = same || all[0];
  return shown ? { shown, same: !!same } : null;
}

window.addEventListener('hashchange', route);
loadSignIn().then(route, (e) => route().then(() => showError(e)));
