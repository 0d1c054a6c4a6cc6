// Helpers for driving the VS Code workbench in code-server: the Pi views, the command palette,
// quick picks, the chat webview's frame, and the scripted model server's control endpoints.
import * as path from 'node:path';

export const TIMEOUT = 30_000;

/** Queues scripted model replies (`{"kind": …}` entries, see pi_lsp/scripted_llm/replies.py). */
export async function enqueue(llm, ...replies) {
  const response = await fetch(`${llm}/__enqueue`, { method: 'POST', body: JSON.stringify(replies) });
  if (!response.ok) throw new Error(`enqueue failed: ${response.status} ${await response.text()}`);
}

/** The request bodies the scripted model server received. */
export async function modelRequests(llm) {
  const response = await fetch(`${llm}/__requests`);
  return response.json();
}

/** The names of the gates an answer of the scripted model server waits at (or waited at). */
export async function gatesReached(llm) {
  const response = await fetch(`${llm}/__gates`);
  return response.json();
}

/** Lets the answer held at gate `name` finish. */
export async function releaseGate(llm, name) {
  await fetch(`${llm}/__release`, { method: 'POST', body: JSON.stringify({ gate: name }) });
}

/** The headers of each request the scripted model server received (the API key among them). */
export async function modelHeaders(llm) {
  const response = await fetch(`${llm}/__headers`);
  return response.json();
}

/** A screenshot of the window, and one of the side bar alone (`<name>-sidebar.png`, for the README). */
export async function screenshot(context, name, clip) {
  const file = path.join(context.artifacts, name);
  await context.page.screenshot({ path: file, clip });
  const sideBar = await context.page.locator('.part.sidebar').boundingBox();
  if (sideBar && !clip) {
    await context.page.screenshot({
      path: file.replace(/\.png$/, '-sidebar.png'),
      clip: { x: 0, y: 0, width: sideBar.x + sideBar.width, height: sideBar.y + sideBar.height + 22 },
    });
  }
  return file;
}

/** Waits until `check` returns a truthy value, polling; fails with `what` after `timeout`. */
export async function until(what, check, timeout = TIMEOUT) {
  const deadline = Date.now() + timeout;
  let last;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value) return value;
    } catch (error) {
      last = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  throw new Error(`timed out waiting for ${what}${last ? ` (last error: ${last.message})` : ''}`);
}

/** The chat webview's inner frame (webviews sit in nested iframes; it changes when the view is re-created). */
export async function chatFrame(page) {
  return until('the chat webview', async () => {
    for (const frame of page.frames()) {
      if (await frame.$('[data-testid="transcript"]').catch(() => null)) return frame;
    }
    return undefined;
  });
}

export async function openPiContainer(page) {
  await page.locator('.activitybar .action-label[aria-label^="Pi"]').first().click();
}

/** Drags the side bar's edge so the chat gets room (and the screenshots show it well). */
export async function widenSideBar(page, width) {
  const sideBar = await page.locator('.part.sidebar').boundingBox();
  if (!sideBar) return;
  const edge = sideBar.x + sideBar.width;
  const y = sideBar.y + sideBar.height / 2;
  await page.mouse.move(edge + 1, y);
  await page.mouse.down();
  await page.mouse.move(sideBar.x + width, y, { steps: 5 });
  await page.mouse.up();
}

/** Runs a palette command by its title ("Pi: Show Session Tree"). */
export async function runCommand(page, title) {
  await page.locator('.monaco-workbench .part.statusbar').click({ position: { x: 5, y: 5 } }).catch(() => undefined);
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget .quick-input-box input');
  await input.waitFor({ state: 'visible', timeout: TIMEOUT });
  await input.fill(`>${title}`);
  await page.locator('.quick-input-list .monaco-list-row', { hasText: title.replace(/^.*?: /, '') }).first().waitFor({ timeout: TIMEOUT });
  await page.keyboard.press('Enter');
}

/** Chooses the quick pick row whose label is exactly `label`. */
export async function chooseQuickPick(page, label) {
  const row = page.locator('.quick-input-list .monaco-list-row').filter({
    has: page.locator('.label-name', { hasText: new RegExp(`^\\s*${escapeRegExp(label)}\\s*$`) }),
  });
  await row.first().waitFor({ state: 'visible', timeout: TIMEOUT });
  await row.first().click();
}

/** Types into an open input box (showInputBox) and accepts it. */
export async function answerInputBox(page, text) {
  const input = page.locator('.quick-input-widget .quick-input-box input');
  await input.waitFor({ state: 'visible', timeout: TIMEOUT });
  await input.fill(text);
  await page.keyboard.press('Enter');
}

export function treeRows(page) {
  return page.locator('.pane:has(.pane-header[aria-label*="Session Tree"]) .monaco-list-row');
}

export function treeRow(page, text) {
  return treeRows(page).filter({ hasText: text }).first();
}

function escapeRegExp(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Scrolls the session tree to its first entry (it keeps the leaf, at the bottom, in view). */
export async function scrollTreeToTop(page) {
  const list = page.locator('.pane:has(.pane-header[aria-label*="Session Tree"]) .monaco-list');
  await list.hover();
  await page.mouse.wheel(0, -100_000);
  // The wheel alone can stop short of the first row (the list measures rows it has not drawn yet
  // as it scrolls); Home moves the list's focus to its first row and scrolls it into view.
  await list.focus();
  await page.keyboard.press('Home');
}
