// Drives a running code-server with the extension installed through the e2e scenarios, in
// Debian's Chromium via playwright-core. Started by tests/editors/vscode/test_vscode.py, which
// owns the processes (code-server, the scripted model server) and reads one JSON line per
// scenario from stdout: {"scenario", "ok", "error"?, "screenshot"?, "seconds"}.
//
// Environment: PI_E2E_URL (code-server, with ?folder=), PI_E2E_LLM (the scripted model server's
// base URL, without /v1), PI_E2E_ARTIFACTS (where screenshots go), PI_E2E_WORKSPACE (the opened
// folder), PI_E2E_CHROMIUM (optional), PI_E2E_SUITE (optional: "bundled" runs the scenario of bundled.mjs instead of scenarios.mjs),
// PI_E2E_SCENARIOS (optional, for working on a scenario: the names to run, comma-separated, in
// the suite's order; the test module expects them all).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { chromium } from 'playwright-core';
import { bundledScenarios } from './bundled.mjs';
import { scenarios as allScenarios } from './scenarios.mjs';

const url = required('PI_E2E_URL');
const llm = required('PI_E2E_LLM');
const artifacts = required('PI_E2E_ARTIFACTS');
const workspace = required('PI_E2E_WORKSPACE');
const chosen = (process.env.PI_E2E_SCENARIOS ?? '').split(',').map((name) => name.trim()).filter(Boolean);
const scenarios = (process.env.PI_E2E_SUITE === 'bundled' ? bundledScenarios : allScenarios)
  .filter((scenario) => chosen.length === 0 || chosen.includes(scenario.name));

function required(name) {
  const value = process.env[name];
  if (!value) throw new Error(`drive.mjs: the environment variable ${name} is required`);
  return value;
}

function report(result) {
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

/** Errors the extension showed the user (a failed command, a broken server connection) fail the scenario. */
async function noErrorNotifications(page) {
  const messages = await page.locator('.notifications-toasts .notification-list-item-message').allInnerTexts();
  const errors = messages.filter((message) => /failed|error/i.test(message));
  if (errors.length) throw new Error(`error notifications: ${errors.join(' | ')}`);
}

async function main() {
  fs.mkdirSync(artifacts, { recursive: true });
  const browser = await chromium.launch({
    executablePath: process.env.PI_E2E_CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  });
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const consoleLog = fs.createWriteStream(path.join(artifacts, 'browser-console.log'));
  page.on('console', (message) => consoleLog.write(`[${message.type()}] ${message.text()}\n`));
  const context = { page, url, llm, artifacts, workspace };
  let failed = false;
  for (const scenario of scenarios) {
    const started = Date.now();
    if (failed) {
      report({ scenario: scenario.name, ok: false, error: 'skipped: an earlier scenario failed', seconds: 0 });
      continue;
    }
    try {
      const screenshot = await scenario.run(context);
      await noErrorNotifications(page);
      report({ scenario: scenario.name, ok: true, screenshot, seconds: (Date.now() - started) / 1000 });
    } catch (error) {
      failed = true;
      const shot = path.join(artifacts, `failure-${scenario.name}.png`);
      await page.screenshot({ path: shot }).catch(() => undefined);
      report({ scenario: scenario.name, ok: false, error: String(error?.stack ?? error), screenshot: shot, seconds: (Date.now() - started) / 1000 });
    }
  }
  consoleLog.end();
  await browser.close();
}

main().catch((error) => {
  report({ scenario: 'driver', ok: false, error: String(error?.stack ?? error) });
  process.exit(1);
});
