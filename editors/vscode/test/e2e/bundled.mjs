// The scenario of a new user: the packaged .vsix in a fresh profile, no pi-lsp anywhere and no
// Python that can import pi_lsp, only the system's python3. The extension must find that python3,
// run the server it carries, and answer a prompt. Run by drive.mjs when PI_E2E_SUITE=bundled.
import { chatFrame, enqueue, openPiContainer, screenshot, until, widenSideBar } from './workbench.mjs';

const ANSWER = 'Hello from the server this extension carries.';

async function text(frame, selector) {
  return frame.$$eval(selector, (elements) => elements.map((element) => element.textContent ?? '').join('\n'));
}

async function bundledServerAnswers(context) {
  const { page, llm } = context;
  await page.goto(context.url);
  await page.waitForSelector('.monaco-workbench', { timeout: 60_000 });
  await openPiContainer(page);
  await widenSideBar(page, 560);
  const frame = await chatFrame(page);
  // The first start compiles the bundled libraries' bytecode: give it time.
  await until('the server to answer pi/state', async () => (await text(frame, '[data-testid="model"]')).includes('openai/scripted'), 120_000);
  await enqueue(llm, { kind: 'text', text: ANSWER, chunks: 6, chunk_delay: 0.05 });
  await frame.fill('[data-testid="input"]', 'Say hello');
  await frame.press('[data-testid="input"]', 'Enter');
  await until('the scripted answer', async () => (await text(frame, '[data-testid="assistant-text"]')).includes(ANSWER), 60_000);
  await until('the turn to end', async () => (await frame.$('body[data-running="false"]')) !== null);
  return screenshot(context, 'bundled.png');
}

export const bundledScenarios = [{ name: 'bundled_server_answers', run: bundledServerAnswers }];
