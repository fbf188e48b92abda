// The web view's forms and its escaping, in Chromium (Debian's, driven by
// playwright-core), on an orchestrator serving the `hostile` workflow (tests/ui.rs): a
// task started without its inputs is listed, opened and answered from the form made
// from the workflow's input schema; an input step's question is a form too; everything
// the hostile agent sends — markup in its status, artifact name and text, question and
// failure — is shown as text, its markdown rendered without the HTML and the
// `javascript:` link, and no script of it runs.
//
//   node ui_forms.mjs BASE_URL CHROMIUM PAYLOAD FAILURE_SCREENSHOT
import { chromium } from 'playwright-core';

const [base, executablePath, payload, failureShot] = process.argv.slice(2);
const step = (name) => console.log(`ui-forms: ${name}`);
const check = (cond, what) => { if (!cond) throw new Error(what); };

async function rpc(method, params) {
  const resp = await fetch(base, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = await resp.json();
  if (body.error) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
  return body.result;
}

const browser = await chromium.launch({ executablePath, headless: true, args: ['--no-sandbox'] });
const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
const pageErrors = [];
page.on('pageerror', (e) => pageErrors.push(String(e)));
page.on('console', (m) => { if (m.type() === 'error') pageErrors.push(m.text()); });
// Any dialog is script the page did not mean to run.
page.on('dialog', (d) => { pageErrors.push(`a dialog: ${d.message()}`); d.dismiss(); });

let id = null;
try {
  step('a task started without its inputs waits for them');
  const started = await rpc('SendMessage', {
    message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ data: { workflow: 'hostile' } }] },
    configuration: { returnImmediately: true },
  });
  id = started.task.id;
  for (let i = 0; i < 100; i++) {
    const t = await rpc('GetTask', { id });
    if (t.status.state === 'TASK_STATE_INPUT_REQUIRED') break;
    await new Promise((r) => setTimeout(r, 100));
  }

  step('it is in the list, waiting for its inputs');
  await page.goto(new URL('ui/', base).href);
  const row = page.locator(`#runs tr[data-run="${id}"]`);
  await row.waitFor({ timeout: 15000 });
  check((await row.innerText()).includes('inputs to give'), `the row: ${await row.innerText()}`);
  // What the run says is its markdown: `hostile` as code, no backticks shown.
  await row.locator('td code', { hasText: 'hostile' }).first().waitFor({ timeout: 5000 });
  check(!(await row.innerText()).includes('`'), `backticks in the row: ${await row.innerText()}`);
  await row.locator('a').first().click();

  step('its form: a required field left empty is said beside it, and nothing is sent');
  const form = page.locator('form.start-answer');
  await form.waitFor({ timeout: 15000 });
  const order = await form.locator('[data-input]').evaluateAll((els) => els.map((e) => e.dataset.input));
  check(order.join() === 'who,count,mode,tags', `the fields in the file's order: ${order}`);
  await form.locator('button[type=submit]').click();
  await form.locator('.problem', { hasText: 'required' }).waitFor({ timeout: 5000 });
  const still = await rpc('GetTask', { id });
  check(!(still.metadata || {}).run, 'nothing was sent');

  step('filled in, the run starts');
  await form.locator('[data-input=who]').fill('Ann <i>not italic</i>');
  await form.locator('[data-input=count]').fill('3');
  await form.locator('[data-input=mode]').selectOption({ label: 'slow' });
  await form.locator('[data-input=tags]').fill('x\ny');
  await form.locator('button[type=submit]').click();

  step("the input step's question is a form from its fields");
  const details = page.locator('form.question[data-step="details"][data-kind="input"]');
  await details.waitFor({ timeout: 15000 });
  await details.locator('[data-input=size]').fill('2.5');
  await details.locator('button[data-act=answer]').click();
  await details.locator('.problem', { hasText: 'whole number' }).waitFor({ timeout: 5000 });
  await details.locator('[data-input=size]').fill('4');
  await details.locator('button[data-act=answer]').click();
  await details.waitFor({ state: 'detached', timeout: 15000 });
  const inputs = await page.locator('#inputs').innerText();
  for (const want of ['"count": 3', '"mode": "slow"', '"who": "Ann <i>not italic</i>"', '"x"', '"y"']) {
    check(inputs.includes(want), `the inputs as given (${want}): ${inputs}`);
  }

  step("the hostile agent's artifact: markdown rendered, its markup shown as text");
  const evil = page.locator('form.question[data-step="evil"]');
  await evil.waitFor({ timeout: 15000 });
  check((await evil.innerText()).includes(payload), `the question shows the markup as text: ${await evil.innerText()}`);
  const artifact = page.locator('tr[data-step="evil"] .artifact[data-artifact]');
  await artifact.locator('td', { hasText: '<img' }).waitFor({ timeout: 15000 });
  check(await artifact.locator('h3').count() === 1, 'the heading rendered');
  check((await artifact.locator('h3').innerText()).includes(payload), 'the heading keeps the markup as text');
  check(await artifact.locator('li strong').count() === 1, 'the list and its emphasis rendered');
  check((await artifact.innerText()).includes('<b>raw</b>'), 'raw HTML shown as text');
  check(await artifact.locator('a').count() === 0, 'no link made of javascript:');

  step("its question answered; it fails, its reason shown as text");
  await evil.locator('input[name=answer]').fill('go');
  await evil.locator('button[data-act=answer]').click();
  await page.locator('#run-state[data-state="failed"]').waitFor({ state: 'attached', timeout: 15000 });
  const error = await page.locator('.artifact.error').innerText();
  check(error.includes(`refused ${payload}`), `the failure as text: ${error}`);
  const history = await page.locator('#history li').allInnerTexts();
  check(history.length >= 4, `the history: ${history.join(' | ')}`);
  check(history.some((h) => h.includes('details started')), `details started in the history: ${history.join(' | ')}`);
  check(history.some((h) => h.includes('run failed')), `the run's end in the history: ${history.join(' | ')}`);

  step('no script of it ran, no element of it was made');
  check(await page.evaluate(() => window.__xss) === undefined, 'a payload ran');
  check(await page.locator('main img, main script, main iframe, main b, main i').count() === 0, 'an element from the payload');
  const hrefs = await page.locator('main a').evaluateAll((as) => as.map((a) => a.getAttribute('href')));
  check(hrefs.every((h) => /^(#|https?:|mailto:)/.test(h)), `links: ${hrefs}`);
  check(pageErrors.length === 0, `errors in the page: ${pageErrors.join('; ')}`);
  step('ok');
} catch (e) {
  await page.screenshot({ path: failureShot, fullPage: true }).catch(() => {});
  if (id) console.error(`the task: ${JSON.stringify(await rpc('GetTask', { id }).catch((e) => String(e))).slice(0, 4000)}`);
  console.error(`ui-forms: FAILED: ${e.stack || e}\n(screenshot: ${failureShot}; page errors: ${pageErrors.join('; ') || 'none'})`);
  process.exitCode = 1;
} finally {
  await browser.close();
}
