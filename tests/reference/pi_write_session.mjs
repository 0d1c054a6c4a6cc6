#!/usr/bin/env node
/**
 * pi_write_session.mjs CWD [SESSION_FILE] -- TEXT... — write a conversation with pi 0.84.2's own
 * SessionManager, in pi's own session directory for CWD (PI_CODING_AGENT_DIR is honoured), or
 * append it to SESSION_FILE. Each TEXT becomes a user message answered by an assistant message
 * ("Noted: TEXT"). Prints the session file's path and the entry ids, as JSON.
 */
import { fileURLToPath } from "node:url";

const PI_PACKAGE_DIR = fileURLToPath(
	new URL("./node_modules/@earendil-works/pi-coding-agent/dist/index.js", import.meta.url),
);
const { SessionManager } = await import(PI_PACKAGE_DIR);

const separator = process.argv.indexOf("--");
const [cwd, sessionFile] = process.argv.slice(2, separator);
const texts = process.argv.slice(separator + 1);
const manager = sessionFile ? SessionManager.open(sessionFile) : SessionManager.create(cwd);
const ids = [];
for (const text of texts) {
	ids.push(manager.appendMessage({ role: "user", content: text, timestamp: Date.now() }));
	ids.push(
		manager.appendMessage({
			role: "assistant",
			content: [{ type: "text", text: `Noted: ${text}` }],
			api: "openai-completions",
			provider: "openai",
			model: "gpt-4o",
			usage: {
				input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2,
				cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
			},
			stopReason: "stop",
			timestamp: Date.now(),
		}),
	);
}
console.log(JSON.stringify({ path: manager.getSessionFile(), ids }));
