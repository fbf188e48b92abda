// The web view in a real browser: Chromium (Debian's, driven by playwright-core) opens
// /ui/ on an orchestrator that wants a bearer token, is refused until the token is
// given, starts the travel workflow from the form its input schema makes, watches its
// steps turn completed live, answers the hotel's question in the page, sees the
// itinerary rendered, the timeline and a DAG whose edges cross no step, retries the run
// (which keeps every completed step), and finds the run in the list.
//
//   node ui.mjs BASE_URL CHROMIUM TOKEN SCREENSHOT FAILURE_SCREENSHOT
import { chromium } from 'playwright-core';

const [base, executablePath, token, screenshot, failureShot] = process.argv.slice(2);
const inputs = {
  origin: 'London', destination: 'Lisbon', depart: '2027-03-10', nights: 5, travellers: 2,
  budget: 2500, currency: 'GBP', interests: ['food', 'history'],
};

const browser = await chromium.launch({ executablePath, headless: true, args: ['--no-sandbox'] });
const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
const consoleErrors = [];
page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
page.on('pageerror', (e) => consoleErrors.push(String(e)));
const step = (name) => console.log(`ui: ${name}`);

try {
  await page.goto(new URL('ui/', base).href);
  step('without the token the server refuses, and the page says so');
  await page.locator('#error').filter({ hasText: 'give a token above' }).waitFor({ timeout: 10000 });

  step('with the token the list loads');
  await page.fill('#token', token);
  await page.dispatchEvent('#token', 'change');
  await page.locator('#runs td', { hasText: 'no runs' }).waitFor({ timeout: 10000 });
  await page.locator('#error').waitFor({ state: 'hidden' });
  // The refusals before the token are the browser's console errors; none after it.
  consoleErrors.length = 0;

  step('start the travel workflow from the form its input schema makes');
  await page.selectOption('#start select[name=workflow]', 'travel-planning');
  // Defaults filled in: the nights and the interests the workflow declares.
  if (await page.inputValue('#start [data-input=nights]') !== '5') throw new Error('the default of nights');
  for (const [name, value] of Object.entries(inputs)) {
    await page.fill(`#start [data-input=${name}]`, Array.isArray(value) ? value.join('\n') : String(value));
  }
  await page.click('#start button[type=submit]');
  await page.waitForURL(/#\/run\//, { timeout: 10000 });
  const runId = decodeURIComponent(page.url().split('#/run/')[1]);
  step(`run ${runId}`);
  // The copy button beside an id is a drawn icon, not a glyph a font may lack.
  await page.locator('button.copy svg.copy-icon rect').first().waitFor({ state: 'attached', timeout: 10000 });

  step('steps turn completed live, in the DAG');
  await page.locator('.dag g.node[data-step="flights"][data-state="completed"]').waitFor({ timeout: 30000 });
  await page.locator('.dag g.node[data-step="currency"][data-state="completed"]').waitFor({ timeout: 30000 });
  const flights = page.locator('tr[data-step="flights"] .artifact');
  await flights.first().waitFor();
  if (!/Lisbon/.test(await flights.first().innerText())) throw new Error('the flights artifact is not shown');

  step("answer the hotel's question in the page");
  const question = page.locator('form.question[data-step="hotel"]');
  await question.waitFor({ timeout: 30000 });
  await question.locator('input[name=answer]').fill('2');
  await question.locator('button[data-act=answer]').click();
  await question.waitFor({ state: 'detached', timeout: 15000 });

  step('the run completes with the itinerary');
  await page.locator('#run-state[data-state="completed"]').waitFor({ state: 'attached', timeout: 60000 });
  const result = await page.locator('#result').innerText();
  if (!/Lisbon/.test(result)) throw new Error(`the itinerary is not shown: ${result.slice(0, 200)}`);
  const states = await page.locator('.dag g.node').evaluateAll((ns) => ns.map((n) => n.dataset.state));
  if (states.length < 5 || states.some((s) => s !== 'completed')) throw new Error(`steps: ${states}`);
  const used = await page.locator('#used').innerText();
  if (!/^\s*· \d+ calls, \d+ tokens in, \d+ out$/.test(used)) throw new Error(`what the run used: ${used}`);
  const progress = await page.locator('#progress').innerText();
  if (progress !== `${states.length}/${states.length} steps done`) throw new Error(`progress: ${progress}`);
  step('the output is rendered markdown; the timeline has a bar a step');
  if (await page.locator('#result h3').count() !== 1 || await page.locator('#result h4').count() < 5) {
    throw new Error('the itinerary\'s headings are not rendered');
  }
  const bars = await page.locator('.timeline .row .bar').evaluateAll((bs) => bs.map((b) => b.getBoundingClientRect().width));
  if (bars.length < states.length || bars.some((w) => !(w >= 3))) throw new Error(`timeline bars: ${bars}`);

  step('no edge of the DAG is drawn across a step it does not join');
  const crossings = await page.evaluate(() => {
    const boxes = [...document.querySelectorAll('.dag g.node')].map((g) => {
      const r = g.querySelector('rect');
      const [x, y, w, h] = ['x', 'y', 'width', 'height'].map((a) => Number(r.getAttribute(a)));
      return { step: g.dataset.step, x, y, w, h };
    });
    const found = [];
    for (const p of document.querySelectorAll('.dag path.edge')) {
      const length = p.getTotalLength();
      for (let k = 0; k <= 100; k++) {
        const pt = p.getPointAtLength((length * k) / 100);
        for (const b of boxes) {
          if (b.step === p.dataset.from || b.step === p.dataset.to) continue;
          if (pt.x > b.x + 1 && pt.x < b.x + b.w - 1 && pt.y > b.y + 1 && pt.y < b.y + b.h - 1) {
            found.push(`${p.dataset.from}->${p.dataset.to} through ${b.step}`);
          }
        }
      }
    }
    return [...new Set(found)];
  });
  if (crossings.length) throw new Error(`edges through steps: ${crossings.join(', ')}`);
  await page.screenshot({ path: screenshot, fullPage: false });
  step("the workflow's source, from the extended card");
  await page.click('#source summary');
  // The page fetches the extended card on its own: wait (bounded) for the source to arrive.
  await page
    .waitForFunction(
      () => (document.querySelector('#source pre')?.innerText ?? '').includes('id = "travel-planning"'),
      null,
      { timeout: 10000 },
    )
    .catch(() => {});
  const source = await page.locator('#source pre').innerText();
  if (!source.includes('id = "travel-planning"')) throw new Error(`the source: ${source.slice(0, 200)}`);

  step('retry it: a new run keeps every completed step and sends nothing again');
  await page.click('button[data-act=retry]');
  await page.waitForURL((u) => u.hash.startsWith('#/run/') && !u.hash.endsWith(encodeURIComponent(runId)), { timeout: 10000 });
  await page.locator('#run-state[data-state="completed"]').waitFor({ state: 'attached', timeout: 30000 });
  await page.locator(`a[href="#/run/${encodeURIComponent(runId)}"]`).waitFor({ timeout: 10000 });
  const kept = await page.locator('tr[data-step="flights"]').innerText();
  if (!kept.includes(`kept from run ${runId}`)) throw new Error(`flights in the retry: ${kept}`);

  step('the run is in the list, completed');
  await page.goto(new URL('ui/#/', base).href);
  await page.locator(`tr[data-run="${runId}"] .s-completed`).waitFor({ timeout: 10000 });
  if (consoleErrors.length) throw new Error(`errors in the page: ${consoleErrors.join('; ')}`);
  step('ok');
} catch (e) {
  await page.screenshot({ path: failureShot, fullPage: true }).catch(() => {});
  const typed = await page.inputValue('#token').catch(() => '?');
  console.error(`ui: FAILED: ${e.message}\n(token field: ${typed.length} characters; screenshot: ${failureShot}; page errors: ${consoleErrors.join('; ') || 'none'})`);
  process.exitCode = 1;
} finally {
  await browser.close();
}
