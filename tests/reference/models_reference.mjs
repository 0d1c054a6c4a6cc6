#!/usr/bin/env node
/**
 * models_reference.mjs — what pi 0.84.2 itself makes of models.json, auth.json and its
 * configuration values.
 *
 * Usage: node models_reference.mjs AGENT_DIR REQUEST_JSON
 * REQUEST_JSON: {"values": [{"value", "env"}], "providers": [ids], "models": [["provider", "id"]]}
 * Prints {"values": [resolved or null], "available": ["provider/id" of the models.json providers
 * that pi lists as available], "keys": {provider: key or null}, "headers": {"provider/id":
 * headers or null}, "error": models.json error or null}, reading AGENT_DIR/models.json and
 * AGENT_DIR/auth.json with pi's own ModelRuntime (offline). Nothing is written. The reference side
 * of tests/conformance/test_models_against_pi.py.
 */
import { fileURLToPath, pathToFileURL } from "node:url";

const PI_PACKAGE_DIR =
	process.env.PI_REFERENCE_PI_DIR ??
	fileURLToPath(new URL("./node_modules/@earendil-works/pi-coding-agent/", import.meta.url));

const [agentDir, requestJson] = process.argv.slice(2);
if (!agentDir || !requestJson) {
	process.stderr.write("usage: models_reference.mjs AGENT_DIR REQUEST_JSON\n");
	process.exit(1);
}
const request = JSON.parse(requestJson);
const load = (path) => import(pathToFileURL(`${PI_PACKAGE_DIR}${path}`).href);
const pi = await load("dist/index.js");
const { resolveConfigValue } = await load("dist/core/resolve-config-value.js");

const values = request.values.map(({ value, env }) => resolveConfigValue(value, env) ?? null);
const runtime = await pi.ModelRuntime.create({
	authPath: `${agentDir}/auth.json`,
	modelsPath: `${agentDir}/models.json`,
	allowModelNetwork: false,
});
const custom = new Set(request.providers);
const available = (await runtime.getAvailable())
	.filter((model) => custom.has(model.provider))
	.map((model) => `${model.provider}/${model.id}`);
const registry = new pi.ModelRegistry(runtime);
const keys = {};
for (const provider of request.providers) keys[provider] = (await registry.getApiKeyForProvider(provider)) ?? null;
const headers = {};
for (const [provider, id] of request.models) {
	const model = runtime.getModel(provider, id);
	const auth = model ? await registry.getApiKeyAndHeaders(model) : undefined;
	headers[`${provider}/${id}`] = auth?.ok ? (auth.headers ?? {}) : null;
}
process.stdout.write(JSON.stringify({ values, available, keys, headers, error: runtime.getError() ?? null }));
