// The browser half of bench/chat_render_bench.py: in code-server, resumes the bench session in the
// Pi chat, loads all its pages by scrolling to the top, wheels through the whole transcript, and
// prints one JSON line of figures measured inside the chat webview (its clock, its long tasks).
// Run from editors/vscode (for playwright-core and the e2e helpers).
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { chatFrame, openPiContainer, runCommand, TIMEOUT, until, widenSideBar } from '../editors/vscode/test/e2e/workbench.mjs';

const { chromium } = createRequire(path.join(process.cwd(), 'package.json'))('playwright-core');
const url = process.env.PI_BENCH_URL;
const sessionName = process.env.PI_BENCH_SESSION_NAME;
const messages = Number(process.env.PI_BENCH_MESSAGES);
const WHEEL_STEP = 400;

/** Installed in the webview: its long tasks, and the frame times while `recording` is on. */
function instrument() {
  const probe = { longTasks: [], frames: [], recording: false };
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) probe.longTasks.push({ start: entry.startTime, duration: entry.duration });
  }).observe({ type: 'longtask', buffered: true });
  let last = performance.now();
  const tick = (now) => {
    if (probe.recording) probe.frames.push(now - last);
    last = now;
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
  window.__bench = probe;
}

/** Resolves, inside the webview, at the first frame painted after `text` is in the transcript. */
function paintedWhenShown(text) {
  return new Promise((resolve) => {
    const transcript = document.querySelector('[data-testid="transcript"]');
    const check = () => {
      if (!transcript.textContent.includes(text)) return false;
      requestAnimationFrame(() => setTimeout(() => resolve(Date.now())));
      return true;
    };
    if (check()) return;
    const observer = new MutationObserver(() => check() && observer.disconnect());
    observer.observe(transcript, { childList: true, subtree: true, characterData: true });
  });
}

const percentile = (values, share) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))] : 0;
};

function longTaskFigures(tasks, from) {
  const counted = tasks.filter((task) => task.start >= from);
  return {
    longTasks: counted.length,
    longTaskMs: counted.reduce((sum, task) => sum + task.duration, 0),
    worstLongTaskMs: counted.reduce((worst, task) => Math.max(worst, task.duration), 0),
  };
}

async function main() {
  const browser = await chromium.launch({
    executablePath: process.env.PI_E2E_CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-dev-shm-usage'],
  });
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  await page.goto(url);
  await page.waitForSelector('.monaco-workbench', { timeout: 60_000 });
  await openPiContainer(page);
  await widenSideBar(page, 560);
  let frame = await chatFrame(page);
  await until('the server', async () => (await frame.textContent('[data-testid="model"]')).includes('openai/scripted'), 60_000);
  await frame.evaluate(instrument);
  const session = process.env.PI_BENCH_SESSION;
  const sessions = path.join(process.env.PI_BENCH_WORKSPACE, '.pi', 'sessions');
  fs.mkdirSync(sessions, { recursive: true });
  fs.copyFileSync(session, path.join(sessions, path.basename(session)));

  // First render: from choosing the session to the last answer painted.
  const lastTurn = `Turn ${messages / 4 - 1}:`;
  await runCommand(page, 'Pi: Resume Session…');
  const picked = page.locator('.quick-input-list .monaco-list-row', { hasText: sessionName }).first();
  await picked.waitFor({ state: 'visible', timeout: TIMEOUT });
  const painted = frame.evaluate(paintedWhenShown, lastTurn);
  const chosen = Date.now();
  await picked.click();
  const firstRenderMs = (await painted) - chosen;
  frame = await chatFrame(page);
  const tailItems = await frame.$$eval('[data-item]', (items) => items.length);

  // Every earlier page, by scrolling to the top until the first prompt is there.
  const pagesFrom = await frame.evaluate(() => performance.now());
  const pagesStarted = Date.now();
  let loads = 0;
  await until('all pages', async () => {
    const done = await frame.evaluate(() => document.querySelector('[data-testid="transcript"]').textContent.includes('Turn 0: what does'));
    if (done) return true;
    const before = await frame.$$eval('[data-item]', (items) => items.length);
    await frame.$eval('[data-testid="transcript"]', (transcript) => {
      transcript.scrollTop = transcript.scrollHeight;
      transcript.dispatchEvent(new Event('scroll'));
      transcript.scrollTop = 0;
      transcript.dispatchEvent(new Event('scroll'));
    });
    await until('the page before', async () => (await frame.$$eval('[data-item]', (items) => items.length)) > before);
    loads += 1;
    return false;
  }, 600_000);
  const pagesMs = Date.now() - pagesStarted;
  const probe = await frame.evaluate(() => window.__bench.longTasks);
  const pages = { ms: pagesMs, loads, ...longTaskFigures(probe, pagesFrom) };
  const items = await frame.$$eval('[data-item]', (shown) => shown.length);

  // Scroll through: the wheel over the transcript, from the top to the bottom.
  await frame.$eval('[data-testid="transcript"]', (transcript) => (transcript.scrollTop = 0));
  const box = await (await frame.frameElement()).boundingBox();
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  const scrollFrom = await frame.evaluate(() => {
    window.__bench.frames = [];
    window.__bench.recording = true;
    return performance.now();
  });
  for (;;) {
    await page.mouse.wheel(0, WHEEL_STEP);
    const atBottom = await frame.evaluate(
      () =>
        new Promise((resolve) =>
          requestAnimationFrame(() => {
            const transcript = document.querySelector('[data-testid="transcript"]');
            resolve(transcript.scrollTop + transcript.clientHeight >= transcript.scrollHeight - 2);
          }),
        ),
    );
    if (atBottom) break;
  }
  const recorded = await frame.evaluate(() => {
    window.__bench.recording = false;
    return window.__bench;
  });
  const frames = recorded.frames;
  const scroll = {
    frames: frames.length,
    medianMs: percentile(frames, 0.5),
    p95Ms: percentile(frames, 0.95),
    worstMs: Math.max(0, ...frames),
    ...longTaskFigures(recorded.longTasks, scrollFrom),
  };
  await page.screenshot({ path: path.join(process.env.PI_BENCH_ARTIFACTS, 'chat-render.png') });
  process.stdout.write(`${JSON.stringify({ firstRenderMs, tailItems, items, pages, scroll })}\n`);
  await browser.close();
}

main().catch((error) => {
  process.stderr.write(`${error?.stack ?? error}\n`);
  process.exit(1);
});
