// Forms made from an input schema — the JSON Schema a workflow publishes for its inputs
// (`{type: object, properties, required}`, each property a `type` of string, integer,
// number, boolean, array or object, with `enum`, `default`, `description`) — and read
// back into values, each problem said beside its field.

import { h } from './dom.js';

// One field: its control, and how to read it (a value, undefined when left empty, or a
// thrown message saying what is wrong).
function field(name, spec, required, value) {
  const type = spec.type || 'string';
  const id = `in-${name}-${Math.random().toString(36).slice(2, 8)}`;
  const given = value !== undefined ? value : spec.default;
  let control;
  let read;
  if (Array.isArray(spec.enum)) {
    control = h('select', { id, 'data-input': name },
      required && given === undefined ? h('option', { value: '' }, 'choose…') : h('option', { value: '' }, '—'),
      spec.enum.map((v, k) => h('option', { value: String(k), selected: given !== undefined && JSON.stringify(given) === JSON.stringify(v) },
        typeof v === 'string' ? v : JSON.stringify(v))));
    read = () => (control.value === '' ? undefined : spec.enum[Number(control.value)]);
  } else if (type === 'boolean') {
    control = h('input', { id, type: 'checkbox', 'data-input': name, checked: given === true });
    // A checkbox always says something: unchecked is false.
    read = () => control.checked;
  } else if (type === 'integer' || type === 'number') {
    control = h('input', {
      id, type: 'number', 'data-input': name, step: type === 'integer' ? '1' : 'any',
      value: given === undefined ? '' : String(given), inputmode: type === 'integer' ? 'numeric' : 'decimal',
    });
    read = () => {
      const raw = control.value.trim();
      if (raw === '') {
        if (control.validity && control.validity.badInput) throw new Error('not a number');
        return undefined;
      }
      const n = Number(raw);
      if (!Number.isFinite(n)) throw new Error('not a number');
      if (type === 'integer' && !Number.isInteger(n)) throw new Error('a whole number, please');
      return n;
    };
  } else if (type === 'array' || type === 'object') {
    const shown = given === undefined ? '' : JSON.stringify(given, null, type === 'object' ? 2 : 0);
    const hint = type === 'array' ? 'a JSON list, e.g. ["a", "b"] — or one item a line' : 'a JSON object, e.g. {"key": "value"}';
    control = h('textarea', { id, 'data-input': name, spellcheck: 'false', placeholder: hint, rows: type === 'object' ? 4 : 2, value: shown });
    read = () => {
      const raw = control.value.trim();
      if (raw === '') return undefined;
      let v;
      try {
        v = JSON.parse(raw);
      } catch (e) {
        if (type !== 'array') throw new Error(`not JSON: ${e.message}`);
        // A list may be given one item a line.
        v = raw.split('\n').map((s) => s.trim()).filter(Boolean);
      }
      if (type === 'array' && !Array.isArray(v)) throw new Error('a list, please: [ … ]');
      if (type === 'object' && (v === null || typeof v !== 'object' || Array.isArray(v))) throw new Error('an object, please: { … }');
      return v;
    };
  } else {
    control = h('input', { id, type: 'text', 'data-input': name, value: given === undefined ? '' : String(given), autocomplete: 'off' });
    read = () => (control.value === '' ? undefined : control.value);
  }
  const problem = h('span', { class: 'problem', role: 'alert', hidden: true });
  const label = h('label', { for: id, class: 'field' },
    h('span', { class: 'name' }, name, required ? h('span', { class: 'required', title: 'required' }, ' *') : null,
      h('span', { class: 'type' }, ` ${Array.isArray(spec.enum) ? 'one of' : type}`)),
    control,
    spec.description ? h('span', { class: 'hint' }, spec.description) : null,
    problem);
  const check = () => {
    let v;
    try {
      v = read();
      if (v === undefined && required) throw new Error('required');
      problem.hidden = true;
      problem.textContent = '';
      control.removeAttribute('aria-invalid');
      return { ok: true, value: v };
    } catch (e) {
      problem.hidden = false;
      problem.textContent = e.message;
      control.setAttribute('aria-invalid', 'true');
      return { ok: false };
    }
  };
  // Said when the field is left; unsaid as soon as it is right (while typing, so the
  // form does not move under a click on its button).
  control.addEventListener('change', check);
  control.addEventListener('input', () => { if (!problem.hidden) check(); });
  return { el: label, check, name };
}

// A fieldset for `schema`, prefilled with `values` (else the defaults). `read()` gives
// the values (empty optional fields left out), or null after marking what is wrong.
export function schemaForm(schema, values) {
  const props = (schema && schema.properties) || {};
  const required = new Set((schema && schema.required) || []);
  // In the order the workflow's file gives (`x-order`), then any the order leaves out.
  const order = ((schema && schema['x-order']) || []).filter((n) => n in props);
  const names = order.concat(Object.keys(props).filter((n) => !order.includes(n)));
  const fields = names.map((name) => field(name, props[name] || {}, required.has(name), (values || {})[name]));
  const el = h('fieldset', { class: 'inputs' },
    fields.length ? fields.map((f) => f.el) : h('p', { class: 'muted' }, 'This workflow takes no inputs.'));
  const read = () => {
    const out = {};
    let ok = true;
    for (const f of fields) {
      const r = f.check();
      if (!r.ok) ok = false;
      else if (r.value !== undefined) out[f.name] = r.value;
    }
    if (!ok) {
      const bad = el.querySelector('[aria-invalid="true"]');
      if (bad) bad.focus();
      return null;
    }
    return out;
  };
  return { el, read };
}
