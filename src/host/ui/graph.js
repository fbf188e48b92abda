// A run drawn two ways: its DAG, and a timeline of its steps and their items.
//
// The DAG is layered left to right (a step's column is the longest chain of `needs`
// before it). An edge that skips columns passes through each column it crosses in a
// slot of its own, so no edge is ever drawn through a step it does not touch; within a
// column, steps are ordered near the steps they connect to (barycenters), which keeps
// crossings few. Both drawings are built once per shape and then updated in place.

import { h, setAttr, setText, duration } from './dom.js';

export const COLORS = {
  working: '#0969da', completed: '#1a7f37', failed: '#cf222e', rejected: '#cf222e', upstream_failed: '#cf222e',
  'input-required': '#bf8700', 'auth-required': '#bf8700', canceled: '#8c959f', skipped: '#8c959f', pending: '#8c959f',
};
const color = (state) => COLORS[state] || '#8c959f';

const W = 170, H = 46, GX = 60, GY = 18, PAD = 14;

// Columns of slots: each slot a step (`{step}`) or an edge passing through (`{edge}`).
export function layout(steps) {
  const byId = new Map(steps.map((s) => [s.step, s]));
  const layer = new Map();
  const depth = (s, seen) => {
    if (layer.has(s.step)) return layer.get(s.step);
    if (seen.has(s.step)) return 0;
    seen.add(s.step);
    const d = Math.max(-1, ...(s.needs || []).filter((n) => byId.has(n)).map((n) => depth(byId.get(n), seen))) + 1;
    layer.set(s.step, d);
    return d;
  };
  steps.forEach((s) => depth(s, new Set()));
  const columns = [];
  const at = (d) => (columns[d] = columns[d] || []);
  steps.forEach((s) => at(layer.get(s.step)).push({ step: s.step }));
  // Each edge as a chain of hops between adjacent columns, through passing slots.
  const edges = [];
  steps.forEach((s) => (s.needs || []).filter((n) => byId.has(n)).forEach((n) => {
    const from = layer.get(n), to = layer.get(s.step);
    const chain = [{ step: n }];
    for (let d = from + 1; d < to; d++) {
      const slot = { edge: `${n}->${s.step}@${d}` };
      at(d).push(slot);
      chain.push(slot);
    }
    chain.push({ step: s.step });
    edges.push({ from: n, to: s.step, chain });
  }));
  const key = (slot) => slot.step ?? slot.edge;
  // Neighbours of each slot in the previous and the next column.
  const left = new Map(), right = new Map();
  edges.forEach((e) => e.chain.forEach((slot, k) => {
    if (k > 0) (left.get(key(slot)) || left.set(key(slot), []).get(key(slot))).push(key(e.chain[k - 1]));
    if (k < e.chain.length - 1) (right.get(key(slot)) || right.set(key(slot), []).get(key(slot))).push(key(e.chain[k + 1]));
  }));
  const order = new Map();
  const number = () => columns.forEach((col) => col.forEach((slot, y) => order.set(key(slot), y)));
  number();
  const sweep = (range, near) => range.forEach((d) => {
    const col = columns[d];
    const centre = (slot) => {
      const ns = (near.get(key(slot)) || []).map((n) => order.get(n));
      return ns.length ? ns.reduce((a, b) => a + b, 0) / ns.length : order.get(key(slot));
    };
    const weights = new Map(col.map((slot) => [key(slot), centre(slot)]));
    col.sort((a, b) => weights.get(key(a)) - weights.get(key(b)) || order.get(key(a)) - order.get(key(b)));
    col.forEach((slot, y) => order.set(key(slot), y));
  });
  const down = [...columns.keys()].slice(1), up = [...columns.keys()].reverse().slice(1);
  for (let pass = 0; pass < 3; pass++) { sweep(down, left); sweep(up, right); }
  const pos = new Map();
  columns.forEach((col, x) => col.forEach((slot, y) => pos.set(key(slot), { x: PAD + x * (W + GX), y: PAD + y * (H + GY) })));
  const width = PAD * 2 + columns.length * (W + GX) - GX;
  const height = PAD * 2 + Math.max(1, ...columns.map((c) => c.length)) * (H + GY) - GY;
  return { columns, edges, pos, width, height, key };
}

// Each hop's path: a curve in the gap between two columns; through a passing slot, a
// straight line across the column at the slot's height.
function edgePath(edge, pos, key) {
  let d = '';
  edge.chain.forEach((slot, k) => {
    const p = pos.get(key(slot));
    const y = p.y + H / 2;
    if (k === 0) { d += `M${p.x + W},${y}`; return; }
    const prev = pos.get(key(edge.chain[k - 1]));
    const x1 = prev.x + W, y1 = prev.y + H / 2, x2 = p.x, mx = (x1 + x2) / 2;
    d += ` C${mx},${y1} ${mx},${y} ${x2},${y}`;
    if (slot.edge) d += ` L${p.x + W},${y}`;
  });
  return d;
}

// The DAG of `run`: an element with `update(run)`; redrawn only when the workflow's
// shape changes (a reloaded workflow never changes a run's shape, but the detail of a
// run not yet described has no steps).
export function dagView() {
  const box = h('div', { class: 'dag' });
  let shape = null;
  const nodes = new Map();
  const update = (run) => {
    const steps = run.steps.filter((s) => s.item == null);
    const sig = JSON.stringify(steps.map((s) => [s.step, s.needs || []]));
    if (sig !== shape) {
      shape = sig;
      nodes.clear();
      const { edges, pos, width, height, key } = layout(steps);
      // As wide as its box allows, up to its natural size (then scaled down whole).
      const svg = h('svg', { width: '100%', viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': "the workflow's steps" },
        h('defs', null, h('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' },
          h('path', { d: 'M 0 0 L 10 5 L 0 10 z', fill: '#8c959f' }))),
        edges.map((e) => h('path', { class: 'edge', 'data-from': e.from, 'data-to': e.to, d: edgePath(e, pos, key), 'marker-end': 'url(#arrow)' })),
        steps.map((s) => {
          const p = pos.get(s.step);
          const rect = h('rect', { x: p.x, y: p.y, width: W, height: H, rx: 6 });
          const sub = h('text', { x: p.x + 10, y: p.y + 36 });
          const g = h('g', { class: 'node', 'data-step': s.step }, h('title', null, s.step), rect,
            h('text', { x: p.x + 10, y: p.y + 19, 'font-weight': 600 }, s.step.length > 22 ? `${s.step.slice(0, 21)}…` : s.step), sub);
          nodes.set(s.step, { g, rect, sub });
          return g;
        }));
      svg.style.maxWidth = `${width}px`;
      box.replaceChildren(svg);
    }
    for (const s of steps) {
      const n = nodes.get(s.step);
      if (!n) continue;
      const items = run.steps.filter((i) => i.step === s.step && i.item != null);
      const done = items.filter((i) => i.state === 'completed').length;
      const sub = items.length ? `${done}/${items.length} items` : (s.agent || '');
      setAttr(n.g, 'data-state', s.state);
      setAttr(n.rect, 'fill', `${color(s.state)}22`);
      setAttr(n.rect, 'stroke', color(s.state));
      setAttr(n.sub, 'fill', color(s.state));
      setText(n.sub, sub ? `${s.state} · ${sub}` : s.state);
    }
  };
  return { el: box, update };
}

// A fan-out parent's span: its own times, else its items' first start and last end.
export function span(s, run) {
  if (s.item != null || s.startedAt) return { start: s.startedAt, end: s.endedAt };
  const items = run.steps.filter((i) => i.step === s.step && i.item != null && i.startedAt);
  if (!items.length) return { start: null, end: null };
  const start = items.map((i) => i.startedAt).sort()[0];
  const ends = items.map((i) => i.endedAt);
  const end = ends.every(Boolean) && ['completed', 'failed', 'canceled', 'skipped', 'upstream_failed', 'rejected'].includes(s.state)
    ? ends.sort().at(-1) : null;
  return { start, end };
}

// The timeline: a row a step (and an item), a bar from its start to its end (or now),
// placed in percent of the run's time so it fits any width, colored by state, its
// time and attempts beside it. `update(run)` moves the bars in place; rows come and go
// with the steps.
export function timelineView() {
  const rows = new Map();
  const end = h('span', { class: 'axis-end' });
  const body = h('div', { class: 'rows' });
  const el = h('div', { class: 'timeline', role: 'img', 'aria-label': 'when each step ran' },
    h('div', { class: 'axis' }, h('span', null, '0s'), end), body);
  const update = (run) => {
    const t0 = Date.parse(run.startedAt);
    const t1 = run.endedAt ? Date.parse(run.endedAt) : Date.now();
    const total = Math.max(1, t1 - t0);
    setText(end, duration(run.startedAt, run.endedAt));
    const keep = new Set();
    run.steps.forEach((s, k) => {
      const id = `${s.step}/${s.item == null ? '' : s.item}`;
      keep.add(id);
      let r = rows.get(id);
      if (!r) {
        const bar = h('span', { class: 'bar' });
        const note = h('span', { class: 'note' });
        const row = h('div', { class: s.item == null ? 'row' : 'row item', 'data-step': s.step, 'data-item': s.item == null ? '' : s.item },
          h('span', { class: 'label' }, s.item == null ? s.step : `${s.step}[${s.item}]`),
          h('span', { class: 'track' }, bar, note));
        r = { row, bar, note };
        rows.set(id, r);
      }
      if (body.children[k] !== r.row) body.insertBefore(r.row, body.children[k] || null);
      const { start, end: stop } = span(s, run);
      const a = start ? Math.min(total, Math.max(0, Date.parse(start) - t0)) : null;
      const b = start ? Math.min(total, Math.max(a, (stop ? Date.parse(stop) : t1) - t0)) : null;
      const left = a == null ? 0 : (a / total) * 100;
      const width = a == null ? 0 : ((b - a) / total) * 100;
      r.bar.hidden = a == null;
      r.bar.style.left = `${left.toFixed(2)}%`;
      r.bar.style.width = `max(3px, ${width.toFixed(2)}%)`;
      r.bar.style.background = color(s.state);
      // The note after the bar, or before it when the bar reaches the end.
      r.note.style.left = left + width > 70 ? '' : `calc(${(left + width).toFixed(2)}% + 6px)`;
      r.note.style.right = left + width > 70 ? `calc(${(100 - left).toFixed(2)}% + 6px)` : '';
      setAttr(r.row, 'data-state', s.state);
      const attempts = s.attempts > 1 ? ` · ${s.attempts} attempts` : '';
      setText(r.note, start ? `${duration(start, stop)}${attempts}` : s.state === 'pending' ? '' : s.state);
      setAttr(r.row, 'title', `${s.step}${s.item == null ? '' : `[${s.item}]`}: ${s.state}${start ? `, ${duration(start, stop)}` : ''}${attempts}`);
    });
    for (const [id, r] of rows) if (!keep.has(id)) { r.row.remove(); rows.delete(id); }
  };
  return { el, update };
}
