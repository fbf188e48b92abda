// The orchestrator's web view: the runs, and one run drawn live. It is an A2A client like
// any other: the agent card, then A2A 1.0 JSON-RPC (ListTasks, GetTask, SubscribeToTask,
// SendMessage, CancelTask) with the caller's token; nothing here bypasses auth. On a
// server whose users sign in (`/ui/config.json` names the OpenID Provider), the page
// signs them in with the authorization-code flow and PKCE and keeps the token in
// memory only; else it takes a pasted token (kept for the tab's session). It offers
// only what its user may do (docs/security.md). The run detail it draws is the one
// every task carries under `metadata.run` (docs/runs.md).
'use strict';

const $ = (sel) => document.querySelector(sel);
const main = $('#main');
const tokenInput = $('#token');
tokenInput.value = sessionStorage.getItem('a2a-token') || '';
// A new token takes effect at the page's next call: the page refreshes what it shows,
// without drawing itself again (the user may be typing elsewhere).
tokenInput.addEventListener('change', () => {
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
  if (body.error) throw new Error(`${method}: ${body.error.message} (code ${body.error.code})`);
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

// ---- wire names -------------------------------------------------------------------

const TASK_STATES = {
  TASK_STATE_SUBMITTED: 'submitted', TASK_STATE_WORKING: 'working', TASK_STATE_COMPLETED: 'completed',
  TASK_STATE_FAILED: 'failed', TASK_STATE_CANCELED: 'canceled', TASK_STATE_INPUT_REQUIRED: 'input-required',
  TASK_STATE_REJECTED: 'rejected', TASK_STATE_AUTH_REQUIRED: 'auth-required',
};
const stateName = (s) => TASK_STATES[s] || String(s || '').toLowerCase();
const terminal = (s) => ['completed', 'failed', 'canceled', 'rejected'].includes(s);

function esc(s) {
  return String(s == null ? '' : s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
}
const badge = (s) => `<span class="state s-${esc(s)}">${esc(s)}</span>`;

function duration(from, to) {
  const a = Date.parse(from);
  if (isNaN(a)) return '';
  const ms = Math.max(0, (to ? Date.parse(to) : Date.now()) - a);
  if (ms < 1000) return `${ms}ms`;
  if (ms < 60000) return `${(ms / 1000).toFixed(1)}s`;
  const s = Math.floor(ms / 1000);
  return s < 3600 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${Math.floor(s / 3600)}h${String(Math.floor(s / 60) % 60).padStart(2, '0')}m`;
}

// A chunk appended to an artifact: text running on in the same text part (a streamed
// answer reads as one text, not a line per chunk), anything else as parts of its own.
function appended(parts, more) {
  const out = parts.slice();
  for (const p of more) {
    const last = out[out.length - 1];
    if (last && last.text != null && p.text != null) out[out.length - 1] = Object.assign({}, last, { text: last.text + p.text });
    else out.push(p);
  }
  return out;
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

function partsText(parts) {
  return (parts || []).map((p) => {
    if (p.text != null) return p.text;
    if (p.data != null) return JSON.stringify(p.data, null, 2);
    if (p.url) return `(file ${p.filename || p.url})`;
    return '';
  }).join('\n');
}

// The workflows' sources, from the card extension that carries them: on the card of an
// open server, on the extended card (asked for with the token) of one with credentials.
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

// ---- pages ------------------------------------------------------------------------

function leave() {
  if (page) page.stop();
  page = null;
}

async function route() {
  leave();
  showError(null);
  const m = location.hash.match(/^#\/run\/(.+)$/);
  try {
    if (!card) await loadCard();
    if (signIn && !accessToken) {
      showWho();
      main.innerHTML = '<p class="muted" id="signed-out">Sign in to see and start your runs.</p>';
      return;
    }
    if (!me) await loadMe().catch(() => {});
    showWho();
    if (m) await runPage(decodeURIComponent(m[1]));
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

async function listPage() {
  // What the caller may start: the extended card lists it (the public card lists only
  // what anyone may).
  const skills = (extended || card).skills || [];
  const options = skills.map((s) => `<option value="${esc(s.id)}">${esc(s.name || s.id)}</option>`).join('');
  main.innerHTML = `
    <h1>Runs</h1>
    <form class="inline" id="start">
      <label>workflow to start <select name="workflow">${options}</select></label>
      <label>inputs (JSON) <textarea name="inputs" spellcheck="false">{}</textarea></label>
      <button class="primary" type="submit">Start</button>
    </form>
    <div class="filters">
      <label>show workflow <select id="f-workflow"><option value="">any</option>${options}</select></label>
      <label>state <select id="f-state"><option value="">any</option>
        ${['working', 'input-required', 'completed', 'failed', 'canceled'].map((s) => `<option>${s}</option>`).join('')}
      </select></label>
    </div>
    <table><thead><tr><th>run</th><th>workflow</th><th>state</th><th>started</th><th>duration</th><th>steps</th><th>waiting</th></tr></thead>
    <tbody id="runs"></tbody></table>`;
  $('#start').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const form = ev.target;
    try {
      const input = JSON.parse(form.inputs.value || '{}');
      const result = await rpc('SendMessage', {
        message: {
          messageId: crypto.randomUUID ? crypto.randomUUID() : String(Date.now() + Math.random()),
          role: 'ROLE_USER',
          parts: [{ data: { workflow: form.workflow.value, input } }],
        },
        configuration: { returnImmediately: true },
      });
      const task = result.task;
      if (task) location.hash = `#/run/${encodeURIComponent(task.id)}`;
    } catch (e) {
      showError(e);
    }
  });
  let timer = null;
  const refresh = async () => {
    try {
      await fillList();
      showError(null);
    } catch (e) {
      showError(e);
    }
    timer = setTimeout(refresh, 2000);
  };
  $('#f-workflow').addEventListener('change', fillList);
  $('#f-state').addEventListener('change', fillList);
  page = {
    stop: () => clearTimeout(timer),
    refresh: () => { clearTimeout(timer); refresh(); },
  };
  await refresh();
}

async function fillList() {
  const state = $('#f-state').value;
  const workflow = $('#f-workflow').value;
  const params = { pageSize: 100, historyLength: 0, includeArtifacts: false };
  if (state) params.status = 'TASK_STATE_' + state.toUpperCase().replace('-', '_');
  const result = await rpc('ListTasks', params);
  const rows = (result.tasks || [])
    .map((t) => ({ t, run: (t.metadata || {}).run }))
    .filter((r) => r.run && (!workflow || r.run.workflow === workflow))
    .map(({ t, run }) => {
      const q = (run.pendingQuestions || [])[0];
      return `<tr data-run="${esc(t.id)}"><td><a class="mono" href="#/run/${encodeURIComponent(t.id)}">${esc(t.id)}</a></td>
        <td>${esc(run.workflow)}</td><td>${badge(run.state)}</td>
        <td>${esc(new Date(run.startedAt).toLocaleString())}</td><td>${duration(run.startedAt, run.endedAt)}</td>
        <td>${esc(progress(run))}</td><td>${q ? esc(`${q.step}: ${q.prompt}`) : ''}</td></tr>`;
    });
  const body = $('#runs');
  if (body) body.innerHTML = rows.join('') || '<tr><td colspan="7" class="muted">no runs</td></tr>';
}

async function runPage(id) {
  const controller = new AbortController();
  let task = null;
  let stopped = false;
  let timer = null;
  page = {
    stop: () => { stopped = true; controller.abort(); clearTimeout(timer); },
    refresh: () => refresh().then(() => showError(null), showError),
  };

  const refresh = async () => {
    task = await rpc('GetTask', { id });
    draw(task);
    return task;
  };
  // Live: a subscription while the run goes on, each event redrawn at once; a poll
  // catches what a closed stream (a question, a restart) would miss.
  const follow = async () => {
    while (!stopped) {
      let t;
      try {
        t = await refresh();
      } catch (e) {
        showError(e);
        t = task;
      }
      if (!t || terminal(stateName(t.status.state))) return;
      try {
        await subscribe(id, (ev) => apply(ev), controller.signal);
      } catch (_) { /* the poll below goes on */ }
      if (stopped) return;
      await new Promise((r) => { timer = setTimeout(r, 500); });
    }
  };
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
        s.state = u.state;
        s.attempts = Math.max(s.attempts || 0, u.attempt || 0);
        if (u.agent) s.agent = u.agent;
        if (u.downstreamTaskId) s.downstreamTaskId = u.downstreamTaskId;
        if (!s.startedAt && u.state !== 'pending') s.startedAt = new Date().toISOString();
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
    }
    draw(task);
  };
  main.innerHTML = '<p class="muted">loading…</p>';
  // The sources, fetched beside the run; a failed fetch (the card not loaded yet, a
  // request cut) is tried again a few times rather than leaving the panel empty.
  const loadSources = (tries) => workflowSources().then(
    () => task && draw(task),
    () => { if (tries > 0) setTimeout(() => loadSources(tries - 1), 1000); },
  );
  loadSources(10);
  follow();

  main.onclick = async (ev) => {
    const b = ev.target.closest('button[data-act]');
    if (!b) return;
    try {
      if (b.dataset.act === 'cancel') {
        await rpc('CancelTask', { id });
      } else if (b.dataset.act === 'retry') {
        // A new run that keeps what this one completed (docs/runs.md).
        const result = await rpc('SendMessage', {
          message: {
            messageId: String(Date.now()) + Math.random(), role: 'ROLE_USER',
            parts: [{ text: `retry run ${id}` }], metadata: { retryOf: id },
          },
          configuration: { returnImmediately: true },
        });
        if (result.task) location.hash = `#/run/${encodeURIComponent(result.task.id)}`;
        return;
      } else {
        const form = b.closest('form');
        const text = b.dataset.act === 'answer' ? form.answer.value : b.dataset.act;
        const metadata = { step: form.dataset.step };
        if (form.dataset.item !== '') metadata.item = Number(form.dataset.item);
        await rpc('SendMessage', {
          message: { messageId: String(Date.now()) + Math.random(), role: 'ROLE_USER', taskId: id, parts: [{ text }], metadata },
          configuration: { returnImmediately: true },
        });
      }
      showError(null);
      if (!stopped) follow();
    } catch (e) {
      showError(e);
    }
  };
  main.onsubmit = (ev) => {
    ev.preventDefault();
    const b = ev.target.querySelector('button[data-act="answer"]');
    if (b) b.click();
  };
}

// ---- one run ----------------------------------------------------------------------

function draw(task) {
  const run = (task.metadata || {}).run;
  const state = stateName(task.status.state);
  if (!run) {
    const said = task.status.message ? partsText(task.status.message.parts) : '';
    main.innerHTML = `<h1 class="mono">${esc(task.id)}</h1><p>${badge(state)} This task has no run yet. ${esc(said)}</p>`;
    return;
  }
  // Keep what the user is typing in a question's field across redraws.
  const typing = {};
  main.querySelectorAll('form.question').forEach((f) => { if (f.answer) typing[f.dataset.key] = f.answer.value; });
  const focused = document.activeElement && document.activeElement.closest && document.activeElement.closest('form.question');
  const focusKey = focused ? focused.dataset.key : null;
  // And an open panel open.
  const sourceOpen = !!(main.querySelector('#source') || {}).open;

  const result = (task.artifacts || []).find((a) => a.artifactId === 'result');
  const questions = (run.pendingQuestions || []).map((q) => {
    const key = `${q.step}/${q.item == null ? '' : q.item}`;
    const whom = (q.approvers || []).length ? `for ${q.approvers.join(' or ')}` : 'for whoever may steer the run';
    const buttons = !mayAnswer(q, run)
      ? `<div class="muted not-yours">Waiting ${esc(whom)}${q.fourEyes ? ', not the one who started it' : ''}: not you.</div>`
      : q.kind === 'approval'
        ? '<button type="button" class="primary" data-act="yes">Approve</button><button type="button" class="danger" data-act="no">Reject</button>'
        : `<input name="answer" placeholder="your answer" value="${esc(typing[key] || '')}"><button type="button" class="primary" data-act="answer">Answer</button>`;
    return `<form class="question" data-key="${esc(key)}" data-step="${esc(q.step)}" data-item="${q.item == null ? '' : q.item}">
      <div><strong>${esc(q.step)}${q.item == null ? '' : `[${q.item}]`}</strong> asks:</div>
      <div class="artifact">${esc(q.prompt)}</div>${buttons}</form>`;
  }).join('');
  const rows = run.steps.map((s) => {
    const label = s.item == null ? s.step : `&nbsp;&nbsp;${esc(s.step)}[${s.item}]`;
    const arts = (task.artifacts || []).filter((a) => {
      const m = a.metadata || {};
      return m.step === s.step && (m.item == null ? s.item == null : m.item === s.item);
    });
    const shown = arts.map((a) => `<div class="artifact" data-artifact="${esc(a.artifactId)}">${esc(partsText(a.parts))}</div>`).join('');
    return `<tr data-step="${esc(s.step)}" data-item="${s.item == null ? '' : s.item}" data-state="${esc(s.state)}">
      <td>${s.item == null ? esc(s.step) : label}</td><td>${badge(s.state)}</td>
      <td>${esc(s.agent || '')}${s.agentUrl ? `<div class="muted mono">${esc(s.agentUrl)}</div>` : ''}</td>
      <td>${s.attempts || ''}</td><td>${s.startedAt ? duration(s.startedAt, s.endedAt) : ''}</td>
      <td class="mono">${esc(s.downstreamTaskId || '')}</td>
      <td>${s.message ? `<div class="muted">${esc(s.message)}</div>` : ''}${shown}</td></tr>`;
  }).join('');
  main.innerHTML = `
    <h1>${esc(run.workflow)} <span class="mono muted">${esc(task.id)}</span></h1>
    <p>${badge(run.state)} <span id="run-state" data-state="${esc(state)}"></span>
      <span id="progress">${esc(progress(run))}</span> · started ${esc(new Date(run.startedAt).toLocaleString())} · ${duration(run.startedAt, run.endedAt)}
      · version <span class="mono">${esc(run.workflowVersion.slice(0, 12))}</span>
      ${!maySteer(run) ? '' : terminal(state) ? '<button type="button" data-act="retry">Retry</button>' : '<button type="button" class="danger" data-act="cancel">Cancel</button>'}
      ${run.startedBy ? `· started by <span id="started-by">${esc(run.startedBy.name)}</span>` : ''}
      ${run.retryOf ? `· retry of <a class="mono" href="#/run/${encodeURIComponent(run.retryOf)}">${esc(run.retryOf)}</a>` : ''}</p>
    ${run.error ? `<p class="artifact">${esc(run.error)}</p>` : ''}
    ${questions ? `<h2>Waiting for you</h2>${questions}` : ''}
    <div class="dag">${dag(run)}</div>
    ${result ? `<h2>Output</h2><div class="artifact result" id="result">${esc(partsText(result.parts))}</div>` : ''}
    <h2>Steps</h2>
    <table><thead><tr><th>step</th><th>state</th><th>agent</th><th>attempts</th><th>time</th><th>downstream task</th><th>artifacts</th></tr></thead><tbody>${rows}</tbody></table>
    <h2>Inputs</h2><div class="artifact mono">${esc(JSON.stringify(run.inputs, null, 2))}</div>
    ${(run.audit || []).length ? `<h2>Audit</h2><ul id="audit">${run.audit.map((a) => `<li>${esc(new Date(a.at).toLocaleString())} · ${esc(a.action)}${a.step ? ` ${esc(a.step)}${a.item == null ? '' : `[${a.item}]`}` : ''} by ${esc(a.by.name)}</li>`).join('')}</ul>` : ''}
    ${sourceOf(run)}`;
  if (sourceOpen && main.querySelector('#source')) main.querySelector('#source').open = true;
  if (focusKey) {
    const f = main.querySelector(`form.question[data-key="${CSS.escape(focusKey)}"]`);
    if (f && f.answer) f.answer.focus();
  }
}

// The run's workflow source, when the card carries it: the version the run started
// with, or the loaded one with a note when the file changed since.
function sourceOf(run) {
  const all = (sources || []).filter((w) => w.id === run.workflow);
  const same = all.find((w) => w.version === run.workflowVersion);
  const shown = same || all[0];
  if (!shown) return '';
  const note = same ? '' : '<p class="muted">The file changed since this run started; this is the version loaded now.</p>';
  return `<h2>Workflow</h2><details id="source"><summary class="mono">${esc(shown.file)}</summary>${note}
    <pre class="artifact mono">${esc(shown.source)}</pre></details>`;
}

const COLORS = {
  working: '#0969da', completed: '#1a7f37', failed: '#cf222e', rejected: '#cf222e', upstream_failed: '#cf222e',
  'input-required': '#bf8700', 'auth-required': '#bf8700', canceled: '#8c959f', skipped: '#8c959f', pending: '#8c959f',
};

// The DAG, layered left to right: a step's column is the longest chain of needs before it.
function dag(run) {
  const steps = run.steps.filter((s) => s.item == null);
  const byId = new Map(steps.map((s) => [s.step, s]));
  const layer = new Map();
  const depth = (s, seen) => {
    if (layer.has(s.step)) return layer.get(s.step);
    if (seen.has(s.step)) return 0;
    seen.add(s.step);
    const d = Math.max(-1, ...(s.needs || []).map((n) => (byId.has(n) ? depth(byId.get(n), seen) : -1))) + 1;
    layer.set(s.step, d);
    return d;
  };
  steps.forEach((s) => depth(s, new Set()));
  const columns = [];
  steps.forEach((s) => { const d = layer.get(s.step); (columns[d] = columns[d] || []).push(s); });
  const W = 170, H = 46, GX = 60, GY = 18, PAD = 14;
  const pos = new Map();
  columns.forEach((col, x) => col.forEach((s, y) => pos.set(s.step, { x: PAD + x * (W + GX), y: PAD + y * (H + GY) })));
  const width = PAD * 2 + columns.length * (W + GX) - GX;
  const height = PAD * 2 + Math.max(1, ...columns.map((c) => c.length)) * (H + GY) - GY;
  const edges = steps.flatMap((s) => (s.needs || []).filter((n) => pos.has(n)).map((n) => {
    const a = pos.get(n), b = pos.get(s.step);
    const x1 = a.x + W, y1 = a.y + H / 2, x2 = b.x, y2 = b.y + H / 2, mx = (x1 + x2) / 2;
    return `<path class="edge" d="M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2},${y2}" marker-end="url(#arrow)"/>`;
  }));
  const nodes = steps.map((s) => {
    const p = pos.get(s.step);
    const color = COLORS[s.state] || '#8c959f';
    const items = run.steps.filter((i) => i.step === s.step && i.item != null);
    const itemsDone = items.filter((i) => i.state === 'completed').length;
    const sub = items.length ? `${itemsDone}/${items.length} items` : (s.agent || s.state);
    return `<g class="node" data-step="${esc(s.step)}" data-state="${esc(s.state)}">
      <rect x="${p.x}" y="${p.y}" width="${W}" height="${H}" fill="${color}22" stroke="${color}"/>
      <text x="${p.x + 10}" y="${p.y + 19}" font-weight="600">${esc(s.step)}</text>
      <text x="${p.x + 10}" y="${p.y + 36}" fill="${color}">${esc(s.state)} · ${esc(sub)}</text></g>`;
  });
  return `<svg width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="the workflow's steps">
    <defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
    <path d="M 0 0 L 10 5 L 0 10 z" fill="#8c959f"/></marker></defs>${edges.join('')}${nodes.join('')}</svg>`;
}

window.addEventListener('hashchange', route);
loadSignIn().then(route, (e) => route().then(() => showError(e)));
