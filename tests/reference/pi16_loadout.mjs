#!/usr/bin/env node
/**
 * pi16_loadout.mjs FILE — the tool loadout pi 1.6 restores when it continues the session FILE:
 * pi-ai's getCurrentTools over the system messages of the branch, as AgentSession's
 * _restoreToolsFromTranscript replays them. Prints {"tools": [names]} (null when the branch
 * declares no loadout and pi keeps its default tools).
 * The reference side of tests/conformance/test_mcp_round_trip.py.
 */
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const PI16_DIR = fileURLToPath(new URL("./node_modules/pi16/", import.meta.url));
const importFrom = (path) => import(pathToFileURL(join(PI16_DIR, path)).href);
const { SessionManager } = await importFrom("dist/core/session-manager.js");
const { getCurrentTools } = await importFrom("node_modules/@earendil-works/pi-ai/dist/utils/transcript.js");

const file = resolve(process.argv[2]);
const manager = SessionManager.open(file, dirname(file));
const systemMessages = manager
	.getBranch()
	.flatMap((entry) => (entry.type === "message" && entry.message.role === "system" ? [entry.message] : []));
const tools = systemMessages.length === 0 ? null : getCurrentTools(systemMessages).map((tool) => tool.name);
process.stdout.write(JSON.stringify({ tools }) + "\n");
