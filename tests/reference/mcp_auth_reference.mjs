#!/usr/bin/env node
/**
 * mcp_auth_reference.mjs — pi 1.6's own reading and writing of an MCP server's OAuth state in
 * `mcp-auth.json`: its McpOAuthCredentialStore (pi's keys and lock) under pi-mcp's
 * McpOAuthProvider (pi's state format), exactly as pi's MCP connections use them.
 *
 * Usage: node mcp_auth_reference.mjs < REQUEST_JSON
 * REQUEST_JSON: {"file", "server", "url", "write"?: {"clientInformation", "tokens", "discovery"}}.
 * With `write`, saves them through the provider (tokens last, so `tokensExpireAt` is pi's);
 * then prints {"tokens", "clientInformation", "discovery"} as the provider reads them back, and
 * with `"refreshLock": true` also {"refreshLocks": [names]}: what pi's withRefreshLock holds in the
 * agent directory while it refreshes the server's tokens; or
 * {"error": code} when pi could not (`ELOCKED`: another process holds pi's lock on the file).
 * The reference side of tests/conformance/test_mcp_auth_against_pi16.py.
 */
import { readdirSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const PI16_DIR = fileURLToPath(new URL("./node_modules/pi16/", import.meta.url));
const PI_MCP_DIR = fileURLToPath(new URL("./node_modules/@earendil-works/pi-mcp/", import.meta.url));
const load = (dir, path) => import(pathToFileURL(`${dir}${path}`).href);
const { McpOAuthCredentialStore } = await load(PI16_DIR, "dist/extensions/mcp/oauth.js");
const { FileAuthStorageBackend } = await load(PI16_DIR, "dist/core/auth-storage.js");
const { McpOAuthProvider } = await load(PI_MCP_DIR, "dist/oauth/index.js");

let input = "";
for await (const chunk of process.stdin) input += chunk;
const request = JSON.parse(input);

const store = new McpOAuthCredentialStore(new FileAuthStorageBackend(request.file), dirname(request.file));
const held = () => readdirSync(dirname(request.file)).filter((name) => name.startsWith("mcp-auth-refresh-"));
const provider = new McpOAuthProvider({
	serverUrl: request.url,
	redirectUrl: "http://127.0.0.1/callback",
	clientMetadata: {},
	store: store.forServer(request.server, request.url),
	onRedirect() {},
});
try {
	if (request.write) {
		await provider.saveClientInformation(request.write.clientInformation);
		await provider.saveDiscoveryState(request.write.discovery);
		await provider.saveTokens(request.write.tokens);
	}
	const refreshLocks = request.refreshLock
		? await store.forServer(request.server, request.url).withRefreshLock(async () => held())
		: undefined;
	process.stdout.write(
		JSON.stringify({
			refreshLocks,
			tokens: (await provider.tokens()) ?? null,
			clientInformation: (await provider.clientInformation()) ?? null,
			discovery: (await provider.discoveryState()) ?? null,
		}),
	);
} catch (error) {
	process.stdout.write(JSON.stringify({ error: error?.code ?? String(error) }));
}
