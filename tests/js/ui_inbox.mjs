// The web view's inbox in a real browser: Chromium (Debian's, driven by playwright-core)
// opens /ui/#/inbox as each of three principals in turn and finds the questions that
// one may answer — the header counting them, each row linking to its run — and none for
// the one who may answer none.
//
//   node ui_inbox.mjs BASE_URL CHROMIUM EXPECTED_JSON
//   EXPECTED_JSON: [{ "token": …, "runs": [run ids, oldest first] }, …]
import { chromium } from 'playwright-core';

const [base, executablePath, expected] = process.argv.slice(2);
const browser = await chromium.launch({ executablePath, headless: true, args: ['--no-sandbox'] });
const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
const step = (name) => console.log(`ui_inbox: ${name}`);

try {
  await page.goto(new URL('ui/#/inbox', base).href);
  for (const { token, runs } of JSON.parse(expected)) {
    step(`as ${token.split('-')[0]}: ${runs.length} question(s)`);
    await page.fill('#token', token);
    await page.dispatchEvent('#token', 'change');
    if (runs.length === 0) {
      await page.locator('#inbox-none').waitFor({ state: 'visible', timeout: 10000 });
      if ((await page.locator('#inbox tr').count()) !== 0) throw new Error('rows for one who may answer none');
      if ((await page.innerText('#inbox-count')) !== '') throw new Error('a count for one who may answer none');
      continue;
    }
    await page.waitForFunction(
      (n) => document.querySelectorAll('#inbox tr').length === n,
      runs.length,
      { timeout: 10000 },
    );
    const shown = await page.locator('#inbox tr').evaluateAll((rows) => rows.map((r) => r.dataset.run));
    if (JSON.stringify(shown) !== JSON.stringify(runs)) throw new Error(`rows ${shown} for ${runs}`);
    const count = await page.innerText('#inbox-count');
    if (count !== `(${runs.length})`) throw new Error(`the header counts ${count}`);
    const link = await page.locator('#inbox tr a').first().getAttribute('href');
    if (link !== `#/run/${encodeURIComponent(runs[0])}`) throw new Error(`the first row links to ${link}`);
  }
  step('ok');
} catch (e) {
  console.log(`ui_inbox: failed: ${e.message}`);
  process.exitCode = 1;
} finally {
  await browser.close();
}
