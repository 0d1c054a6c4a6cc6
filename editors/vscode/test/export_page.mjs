// export_page.mjs PAGE ENTRY_ID — open an exported session page (pi/exportSession, html) in
// headless Chromium, then click ENTRY_ID in its tree; prints what the page showed, as JSON:
// {title, before: {leaf, ids}, after: {leaf, ids, hash}, requests, errors}. Used by
// tests/e2e/test_session_files.py to check the page offline in a real browser.
import { chromium } from 'playwright-core';
import { pathToFileURL } from 'node:url';

const [page_path, entry_id] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: process.env.PI_E2E_CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run'],
});
try {
  const page = await browser.newPage();
  const requests = [];
  const errors = [];
  page.on('request', (request) => {
    if (!/^(file|data|about):/.test(request.url())) requests.push(request.url());
  });
  page.on('pageerror', (error) => errors.push(String(error)));
  await page.goto(pathToFileURL(page_path).href);
  const shown = () =>
    page.evaluate(() => ({
      leaf: document.getElementById('conversation').dataset.leaf,
      ids: [...document.querySelectorAll('#conversation > [data-id]')].map((node) => node.dataset.id),
      texts: [...document.querySelectorAll('#conversation > [data-id]')].map((node) => node.textContent),
      hash: location.hash,
    }));
  const before = await shown();
  await page.click(`#tree a[data-id="${entry_id}"]`);
  await page.waitForFunction(
    (wanted) => document.querySelector('#conversation > [data-id="' + wanted + '"]') !== null,
    entry_id,
  );
  const after = await shown();
  console.log(JSON.stringify({ title: await page.title(), before, after, requests, errors }));
} finally {
  await browser.close();
}
