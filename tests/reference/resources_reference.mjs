#!/usr/bin/env node
/**
 * resources_reference.mjs — which skill and prompt-template files pi 0.84.2 itself enables.
 *
 * Usage: node resources_reference.mjs WORKSPACE AGENT_DIR
 * Prints {"skills": [paths], "prompts": [paths], "contextFiles": [paths]}: the enabled resource
 * files of pi's own DefaultPackageManager.resolve() with a SettingsManager reading
 * WORKSPACE/.pi/settings.json and AGENT_DIR/settings.json (the home directory, for
 * ~/.agents/skills, is $HOME), and the context files of loadProjectContextFiles in prompt order.
 * Nothing is written. The reference side of tests/conformance/test_resources_against_pi.py.
 */
import { fileURLToPath, pathToFileURL } from "node:url";

const PI_PACKAGE_DIR =
	process.env.PI_REFERENCE_PI_DIR ??
	fileURLToPath(new URL("./node_modules/@earendil-works/pi-coding-agent/", import.meta.url));

const [workspace, agentDir] = process.argv.slice(2);
if (!workspace || !agentDir) {
	process.stderr.write("usage: resources_reference.mjs WORKSPACE AGENT_DIR\n");
	process.exit(1);
}
const pi = await import(pathToFileURL(`${PI_PACKAGE_DIR}dist/index.js`).href);
const settingsManager = pi.SettingsManager.create(workspace, agentDir);
const manager = new pi.DefaultPackageManager({ cwd: workspace, agentDir, settingsManager });
const resolved = await manager.resolve();
const enabled = (entries) => entries.filter((entry) => entry.enabled).map((entry) => entry.path);
const contextFiles = pi.loadProjectContextFiles({ cwd: workspace, agentDir }).map((file) => file.path);
process.stdout.write(
	JSON.stringify({ skills: enabled(resolved.skills), prompts: enabled(resolved.prompts), contextFiles }),
);
