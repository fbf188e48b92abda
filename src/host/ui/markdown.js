// Markdown as agents write it — headings, paragraphs, lists, quotes, code, tables,
// emphasis, links — turned into elements, never into HTML: raw HTML in the text stays
// text, and a link is made only for http(s) and mailto addresses. Small on purpose; what
// it does not know reads as the plain text it is.

import { h } from './dom.js';

const SAFE_LINK = /^(https?:\/\/|mailto:)/i;

// The inline spans of one line: `code`, **strong**, *emphasis*, [links](url).
export function inline(text) {
  const out = [];
  // Underscores only around words, never inside them (`snake_case`, `window.__x`), as
  // CommonMark has it.
  const re = /`([^`]+)`|\*\*([^*\s](?:[^*]*[^*\s])?)\*\*|(?<![\w])__([^_\s](?:[^_]*[^_\s])?)__(?![\w])|\*([^*\s](?:[^*]*[^*\s])?)\*|(?<![\w])_([^_\s](?:[^_]*[^_\s])?)_(?![\w])|\[([^\]]+)\]\(([^)\s]+)\)/g;
  let at = 0;
  for (let m; (m = re.exec(text));) {
    if (m.index > at) out.push(text.slice(at, m.index));
    if (m[1] != null) out.push(h('code', null, m[1]));
    else if (m[2] != null || m[3] != null) out.push(h('strong', null, inline(m[2] ?? m[3])));
    else if (m[4] != null || m[5] != null) out.push(h('em', null, inline(m[4] ?? m[5])));
    else if (SAFE_LINK.test(m[7])) out.push(h('a', { href: m[7], rel: 'noopener noreferrer nofollow', target: '_blank' }, inline(m[6])));
    else out.push(m[0]);
    at = m.index + m[0].length;
  }
  if (at < text.length) out.push(text.slice(at));
  return out;
}

// Lines joined inside a block, each break kept (agents break lines on purpose).
function lines(ls) {
  return ls.flatMap((l, i) => (i ? [h('br'), ...inline(l)] : inline(l)));
}

const cells = (row) => row.trim().replace(/^\||\|$/g, '').split('|').map((c) => c.trim());
const isRule = (l) => /^\s{0,3}([-*_])(\s*\1){2,}\s*$/.test(l);
const item = (l) => l.match(/^\s{0,3}([-*+]|\d{1,9}[.)])\s+(.*)$/);

// `text` as a fragment of block elements.
export function markdown(text) {
  const src = String(text == null ? '' : text).replace(/\r\n?/g, '\n').split('\n');
  const out = document.createDocumentFragment();
  let i = 0;
  while (i < src.length) {
    const l = src[i];
    if (!l.trim()) { i++; continue; }
    const fence = l.match(/^\s{0,3}(```|~~~)\s*([\w+-]*)\s*$/);
    if (fence) {
      const body = [];
      for (i++; i < src.length && !src[i].trim().startsWith(fence[1]); i++) body.push(src[i]);
      i++;
      out.append(h('pre', { class: 'code' }, h('code', fence[2] ? { 'data-lang': fence[2] } : null, body.join('\n'))));
      continue;
    }
    const heading = l.match(/^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/);
    if (heading) {
      out.append(h(`h${Math.min(6, heading[1].length + 2)}`, { class: 'md-h' }, inline(heading[2])));
      i++;
      continue;
    }
    if (isRule(l)) { out.append(h('hr')); i++; continue; }
    if (/^\s{0,3}>/.test(l)) {
      const quoted = [];
      for (; i < src.length && /^\s{0,3}>/.test(src[i]); i++) quoted.push(src[i].replace(/^\s{0,3}>\s?/, ''));
      out.append(h('blockquote', null, markdown(quoted.join('\n'))));
      continue;
    }
    if (l.includes('|') && i + 1 < src.length && /^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$/.test(src[i + 1])) {
      const head = cells(l);
      const rows = [];
      for (i += 2; i < src.length && src[i].includes('|') && src[i].trim(); i++) rows.push(cells(src[i]));
      out.append(h('table', { class: 'md-table' },
        h('thead', null, h('tr', null, head.map((c) => h('th', null, inline(c))))),
        h('tbody', null, rows.map((r) => h('tr', null, head.map((_, k) => h('td', null, inline(r[k] || ''))))))));
      continue;
    }
    const first = item(l);
    if (first) {
      const ordered = /\d/.test(first[1]);
      const list = h(ordered ? 'ol' : 'ul');
      if (ordered && parseInt(first[1], 10) !== 1) list.setAttribute('start', String(parseInt(first[1], 10)));
      while (i < src.length) {
        const m = item(src[i]);
        if (!m || /\d/.test(m[1]) !== ordered) break;
        const body = [m[2]];
        // An item's continuation lines are indented.
        for (i++; i < src.length && /^\s{2,}\S/.test(src[i]) && !item(src[i]); i++) body.push(src[i].trim());
        list.append(h('li', null, lines(body)));
      }
      out.append(list);
      continue;
    }
    const para = [];
    for (; i < src.length && src[i].trim() && !item(src[i]) && !isRule(src[i])
      && !/^\s{0,3}(#{1,6}\s|>|```|~~~)/.test(src[i]); i++) para.push(src[i]);
    if (!para.length) { para.push(src[i]); i++; }
    out.append(h('p', null, lines(para)));
  }
  return out;
}
