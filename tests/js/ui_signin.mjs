// The web view signing its users in, in a real browser: Chromium (Debian's, driven by
// playwright-core) opens /ui/ on an orchestrator whose users sign in with an OpenID
// Provider (oidc-provider, idp.mjs). Bob signs in on the provider's own login page
// (authorization code + PKCE), is shown by name, and the token is nowhere in the page's
// storage; he approves a step he may approve, and is offered no approval on his own
// four-eyes request; he signs out. Alice, in a browser of her own, signs in and sees
// none of Bob's runs.
//
//   node ui_signin.mjs BASE_URL CHROMIUM FAILURE_SCREENSHOT
import { chromium } from 'playwright-core';

const [base, executablePath, failureShot] = process.argv.slice(2);
const browser = await chromium.launch({ executablePath, headless: true, args: ['--no-sandbox'] });
const step = (name) => console.log(`ui-signin: ${name}`);
let page = null;

async function signInAs(login, name) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  page.on('pageerror', (e) => console.log(`page error: ${e}`));
  await page.goto(new URL('ui/', base).href);
  await page.locator('#signed-out').waitFor({ timeout: 15000 });
  if (await page.locator('#token').isVisible()) throw new Error('the pasted-token box is shown beside sign-in');
  await page.click('#sign-in');
  await page.locator('input[name=login]').waitFor({ timeout: 15000 });
  await page.fill('input[name=login]', login);
  await page.fill('input[name=password]', 'any password');
  await page.click('button[type=submit]');
  // The provider asks for consent the first time.
  const consent = page.locator('button[type=submit]', { hasText: 'Continue' });
  await Promise.race([
    consent.waitFor({ timeout: 15000 }).then(() => consent.click()),
    page.waitForURL(/\/ui\//, { timeout: 15000 }),
  ]);
  await page.locator('#who', { hasText: `Signed in as ${name}` }).waitFor({ timeout: 15000 });
  if (page.url().includes('code=')) throw new Error('the authorization code stays in the address bar');
  const stored = await page.evaluate(() => JSON.stringify([Object.entries(localStorage), Object.entries(sessionStorage)]));
  if (/eyJ/.test(stored)) throw new Error(`a token is kept in the page's storage: ${stored}`);
}

async function start(workflow) {
  await page.goto(new URL('ui/#/', base).href);
  await page.locator('#runs').waitFor({ timeout: 15000 });
  await page.selectOption('#start select[name=workflow]', workflow);
  await page.click('#start button[type=submit]');
  await page.waitForURL(/#\/run\//, { timeout: 15000 });
  return decodeURIComponent(page.url().split('#/run/')[1]);
}

try {
  step('Bob signs in on the provider\'s page');
  await signInAs('bob', 'Bob Baker');

  step('he approves a step IT managers approve');
  const approved = await start('self-approved');
  await page.locator('form.question button[data-act="yes"]').waitFor({ timeout: 15000 });
  await page.locator('#started-by', { hasText: 'Bob Baker' }).waitFor();
  await page.click('form.question button[data-act="yes"]');
  await page.locator('#run-state[data-state="completed"]').waitFor({ state: 'attached', timeout: 15000 });
  await page.locator('#audit li', { hasText: 'approved approve by Bob Baker' }).waitFor({ timeout: 15000 });

  step('his own four-eyes request offers him no approval');
  const own = await start('laptop');
  await page.locator('form.question .not-yours').waitFor({ timeout: 15000 });
  await page.locator('#questions-head', { hasText: 'Waiting for someone else' }).waitFor();
  if (await page.locator('form.question button[data-act="yes"]').count() !== 0) {
    throw new Error('an approve button on a request the user may not approve');
  }

  step('he signs out');
  await page.click('#sign-out');
  await page.locator('#sign-in').waitFor({ state: 'visible' });
  await page.locator('#signed-out').waitFor();

  step('Alice signs in and sees none of his runs');
  await signInAs('alice', 'Alice Archer');
  await page.goto(new URL('ui/#/', base).href);
  await page.locator('#runs td', { hasText: 'no runs' }).waitFor({ timeout: 15000 });
  for (const id of [approved, own]) {
    if (await page.locator(`#runs tr[data-run="${id}"]`).count() !== 0) throw new Error(`Alice sees Bob's run ${id}`);
  }

  step('she asks for a laptop, which an IT manager approves');
  const hers = await start('laptop');
  await page.locator('form.question .not-yours').waitFor({ timeout: 15000 });

  step('Olga, who may start nothing, is offered no form and no Start button');
  await signInAs('olga', 'Olga Ops');
  await page.goto(new URL('ui/#/', base).href);
  await page.locator('#start-none').waitFor({ timeout: 15000 });
  if (await page.locator('#start button').count() !== 0) throw new Error('a Start button for someone who may start nothing');

  step("Bob approves Alice's request, and is told he may no longer read it");
  await signInAs('bob', 'Bob Baker');
  await page.goto(new URL(`ui/#/run/${encodeURIComponent(hers)}`, base).href);
  await page.locator('#questions-head', { hasText: 'Waiting for you' }).waitFor({ timeout: 15000 });
  await page.click('form.question button[data-act="yes"]');
  await page.locator('#no-longer').waitFor({ timeout: 15000 });
  if (await page.locator('#error').isVisible()) throw new Error(`an error banner: ${await page.locator('#error').innerText()}`);
  console.log('ui-signin: ok');
} catch (e) {
  if (page) await page.screenshot({ path: failureShot, fullPage: true }).catch(() => {});
  console.log(`ui-signin: FAILED: ${e.stack || e}`);
  if (page) console.log(await page.content().catch(() => ''));
  process.exitCode = 1;
} finally {
  await browser.close();
}
