#!/usr/bin/env node
/**
 * mcp_reference.mjs — what pi 1.6 itself makes of MCP configuration, tool names and results.
 *
 * Usage: node mcp_reference.mjs < REQUEST_JSON
 * REQUEST_JSON: {"config": {"agentDir", "cwd", "trusted"}, "servers": [[server, [tool names]]],
 * "texts": [text], "search": {documents, queries, limit}}. Prints {"config": {"servers": [{name, source, enabled, exposure, kind}],
 * "errors": [message]}, "names": [{tool: name}] (one object per server, assigned in order, as
 * pi's MCP extension assigns them), "limited": [model-facing text of a result with that text]},
 * "ranked": [[names] per query]}, using pi 1.6's own loadMcpConfig, createMcpToolName,
 * limitMcpContent and tool_search's Bm25Ranker. Nothing is written but
 * the full-output files limitMcpContent saves (their paths are replaced by FULL). The reference
 * side of tests/conformance/test_mcp_against_pi16.py.
 */
import { fileURLToPath, pathToFileURL } from "node:url";

const PI16_DIR = fileURLToPath(new URL("./node_modules/pi16/", import.meta.url));
const PI_MCP_DIR = fileURLToPath(new URL("./node_modules/@earendil-works/pi-mcp/", import.meta.url));
const load = (dir, path) => import(pathToFileURL(`${dir}${path}`).href);
const { loadMcpConfig } = await load(PI16_DIR, "dist/extensions/mcp/config.js");
const { createMcpToolName, limitMcpContent } = await load(PI_MCP_DIR, "dist/index.js");
const { Bm25Ranker, createToolSearchDocument } = await load(PI16_DIR, "dist/extensions/tool-search/tool.js");

let input = "";
for await (const chunk of process.stdin) input += chunk;
const request = JSON.parse(input);

const { agentDir, cwd, trusted } = request.config;
const loaded = loadMcpConfig({ agentDir, cwd, projectTrusted: trusted });
const config = {
	servers: loaded.servers.map((server) => ({
		name: server.name,
		source: server.source,
		enabled: server.config.enabled ?? true,
		exposure: server.config.exposure ?? "codemode",
		kind: "url" in server.config ? "http" : "stdio",
	})),
	errors: loaded.errors,
};

// pi's MCP extension (dist/extensions/mcp/index.js) assigns names this way, owners across servers.
const toolOwners = new Map();
const names = request.servers.map(([server, tools]) => {
	const current = new Set();
	const plain = [...new Set(tools)].map((tool) => createMcpToolName(server, tool));
	const assigned = {};
	for (const tool of tools) {
		const owner = `${server}\0${tool}`;
		const name = createMcpToolName(server, tool, (candidate) => {
			const existing = toolOwners.get(candidate);
			return (
				(existing !== undefined && existing !== owner) ||
				current.has(candidate) ||
				plain.indexOf(candidate) !== plain.lastIndexOf(candidate)
			);
		});
		toolOwners.set(name, owner);
		current.add(name);
		assigned[tool] = name;
	}
	return assigned;
});

const limited = [];
for (const text of request.texts) {
	const { content } = await limitMcpContent([{ type: "text", text }], async () => "FULL");
	limited.push(content[0].text);
}

// tool_search's ranking: {documents: [{name, description, parameters, namespace}], queries, limit}.
const search = request.search ?? { documents: [], queries: [], limit: 8 };
const documents = search.documents.map((tool) =>
	createToolSearchDocument(tool, tool.namespace ? { name: tool.namespace, description: tool.namespaceDescription } : undefined),
);
const ranked = search.queries.map((query) =>
	new Bm25Ranker().rank(query, documents, search.limit).map((match) => match.name),
);

process.stdout.write(`${JSON.stringify({ config, names, limited, ranked })}\n`);
