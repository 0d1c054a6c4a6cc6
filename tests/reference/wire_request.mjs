#!/usr/bin/env node
/**
 * wire_request.mjs — one streamed request by pi 1.6's own provider code (pi-ai 1.6.0), for the
 * wire-API conformance tests (tests/conformance/test_wire_apis_against_pi16.py).
 *
 * Reads one JSON object on stdin (the system prompt becomes pi 1.6's leading system message,
 * adding the tools):
 *   {"api", "provider", "modelId", "baseUrl", "reasoning", "input", "systemPrompt", "messages",
 *    "tools", "thinkingLevel", "maxTokens", "sessionId", "apiKey"}
 * and streams it with pi-ai's `streamSimple` of that API against `baseUrl` (the scripted server
 * on 127.0.0.1, which records the request body). Prints pi's final assistant message as one JSON
 * line.
 */
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const PI16_DIR = process.env.PI16_REFERENCE_PI_DIR ?? fileURLToPath(new URL("./node_modules/pi16/", import.meta.url));
const PI_AI_DIR = join(PI16_DIR, "node_modules/@earendil-works/pi-ai/");
const importPiAi = (relativePath) => import(pathToFileURL(join(PI_AI_DIR, relativePath)).href);

const APIS = {
	"openai-completions": ["dist/api/openai-completions.lazy.js", "openAICompletionsApi"],
	"openai-responses": ["dist/api/openai-responses.lazy.js", "openAIResponsesApi"],
	"anthropic-messages": ["dist/api/anthropic-messages.lazy.js", "anthropicMessagesApi"],
	"google-generative-ai": ["dist/api/google-generative-ai.lazy.js", "googleGenerativeAIApi"],
};

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const request = JSON.parse(Buffer.concat(chunks).toString("utf8"));
const [modulePath, factory] = APIS[request.api];
const api = (await importPiAi(modulePath))[factory]();
const model = {
	id: request.modelId,
	name: request.modelId,
	api: request.api,
	provider: request.provider,
	baseUrl: request.baseUrl,
	reasoning: request.reasoning,
	input: request.input ?? ["text", "image"],
	cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
	contextWindow: 200000,
	maxTokens: request.maxTokens ?? 8192,
};
// pi 1.6's transcript: the system prompt is the leading system message, which adds the tools.
const system = { role: "system", content: request.systemPrompt ?? "", toolsAdded: request.tools ?? [], timestamp: 0 };
const context = { messages: [system, ...request.messages] };
const options = {
	apiKey: request.apiKey,
	maxTokens: request.maxTokens,
	sessionId: request.sessionId,
	reasoning: request.thinkingLevel === "off" ? undefined : request.thinkingLevel,
};
const stream = api.streamSimple(model, context, options);
let final;
for await (const event of stream) {
	if (event.type === "done") final = event.message;
	if (event.type === "error") final = event.error;
}
process.stdout.write(`${JSON.stringify(final)}\n`);
