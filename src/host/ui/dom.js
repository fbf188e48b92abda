// Building the page's elements. Everything shown is made with `h` from text nodes and
// attributes — never from HTML strings — so whatever an agent or a user sent is shown
// as text, however it is written: escaping is not something a template can forget.

const SVG = 'http://www.w3.org/2000/svg';
const SVG_TAGS = new Set(['svg', 'g', 'rect', 'text', 'path', 'line', 'defs', 'marker', 'title', 'tspan']);

// An element: `attrs` are attributes (`class`, `data-*`, `aria-*`…), `on…` listeners,
// and a few properties set as such (`value`, `checked`, `hidden`, `disabled`);
// children are nodes or text.
export function h(tag, attrs, ...children) {
  const svg = SVG_TAGS.has(tag);
  const el = svg ? document.createElementNS(SVG, tag) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v == null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (!svg && ['value', 'checked', 'hidden', 'disabled', 'selected'].includes(k)) el[k] = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  add(el, children);
  return el;
}

// Appends children (nodes, text, arrays of them; null and false left out).
export function add(el, children) {
  for (const c of [children].flat(Infinity)) {
    if (c == null || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

// Sets an element's text only when it changed (no needless layout).
export function setText(el, text) {
  const t = String(text == null ? '' : text);
  if (el.textContent !== t) el.textContent = t;
}

// Sets an attribute only when it changed.
export function setAttr(el, name, value) {
  const v = String(value);
  if (el.getAttribute(name) !== v) el.setAttribute(name, v);
}

export const TASK_STATES = {
  TASK_STATE_SUBMITTED: 'submitted', TASK_STATE_WORKING: 'working', TASK_STATE_COMPLETED: 'completed',
  TASK_STATE_FAILED: 'failed', TASK_STATE_CANCELED: 'canceled', TASK_STATE_INPUT_REQUIRED: 'input-required',
  TASK_STATE_REJECTED: 'rejected', TASK_STATE_AUTH_REQUIRED: 'auth-required',
};
export const stateName = (s) => TASK_STATES[s] || String(s || '').toLowerCase();
export const terminal = (s) => ['completed', 'failed', 'canceled', 'rejected'].includes(s);

// A state as a colored badge; `badge.update` changes it in place.
export function badge(state) {
  const el = h('span', { class: `state s-${state}` }, state);
  return el;
}
export function setBadge(el, state) {
  setAttr(el, 'class', `state s-${state}`);
  setText(el, state);
}

export function duration(from, to) {
  const a = Date.parse(from);
  if (isNaN(a)) return '';
  const ms = Math.max(0, (to ? Date.parse(to) : Date.now()) - a);
  if (ms < 1000) return `${ms}ms`;
  if (ms < 60000) return `${(ms / 1000).toFixed(1)}s`;
  const s = Math.floor(ms / 1000);
  return s < 3600
    ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`
    : `${Math.floor(s / 3600)}h${String(Math.floor(s / 60) % 60).padStart(2, '0')}m`;
}

// What a run or a step used: `3 calls, 5000 tokens in, 4500 out, cost 1.1000 USD`
// (the currency when the prices name one).
export function usedText(u, currency) {
  const parts = [];
  if (u.calls) parts.push(`${u.calls} call${u.calls === 1 ? '' : 's'}`);
  if (u.inputTokens || u.outputTokens) parts.push(`${u.inputTokens || 0} tokens in, ${u.outputTokens || 0} out`);
  if (u.cost) parts.push(`cost ${u.cost.toFixed(4)}${currency ? ` ${currency}` : ''}`);
  return parts.join(', ');
}

export const when = (t) => (t ? new Date(t).toLocaleString() : '');

// A long id shown short, whole in its title, with a button that copies it.
export function shortId(id, href) {
  const text = id.length > 13 ? `${id.slice(0, 8)}…` : id;
  const label = href ? h('a', { class: 'mono', href, title: id }, text) : h('span', { class: 'mono', title: id }, text);
  const copy = h('button', {
    type: 'button', class: 'copy', title: `copy ${id}`, 'aria-label': `copy ${id}`,
    onclick: (ev) => {
      ev.preventDefault();
      ev.stopPropagation();
      navigator.clipboard?.writeText(id).then(() => {
        copy.classList.add('copied');
        setTimeout(() => copy.classList.remove('copied'), 1200);
      }, () => {});
    },
  }, copyIcon());
  return h('span', { class: 'id' }, label, copy);
}

// Two overlapping sheets, drawn: a glyph (⧉) needs a font that has it, and many
// systems' have not.
function copyIcon() {
  return h('svg', { viewBox: '0 0 16 16', width: 12, height: 12, 'aria-hidden': 'true', class: 'copy-icon' },
    h('rect', { x: 5, y: 5, width: 9, height: 9, rx: 1.5, fill: 'none', stroke: 'currentColor', 'stroke-width': 1.5 }),
    h('path', { d: 'M3 11V3.5A1.5 1.5 0 0 1 4.5 2H11', fill: 'none', stroke: 'currentColor', 'stroke-width': 1.5 }));
}

// The text of a message's or an artifact's parts (data as indented JSON).
export function partsText(parts) {
  return (parts || []).map((p) => {
    if (p.text != null) return p.text;
    if (p.data != null) return JSON.stringify(p.data, null, 2);
    if (p.url) return `(file ${p.filename || p.url})`;
    if (p.raw != null) return `(file ${p.filename || 'bytes'})`;
    return '';
  }).join('\n');
}

// A chunk appended to an artifact: text running on in the same text part (a streamed
// answer reads as one text, not a line per chunk), anything else as parts of its own.
export function appended(parts, more) {
  const out = parts.slice();
  for (const p of more) {
    const last = out[out.length - 1];
    if (last && last.text != null && p.text != null) out[out.length - 1] = Object.assign({}, last, { text: last.text + p.text });
    else out.push(p);
  }
  return out;
}
