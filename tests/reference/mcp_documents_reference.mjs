#!/usr/bin/env node
/**
 * mcp_documents_reference.mjs — when pi 1.6 identifies with its Client ID Metadata Documents on
 * pi.dev, and the server-specific redirect path it uses: pi-mcp's own
 * `offersClientMetadataDocument` (with pi's `isClientMetadataDocumentCallback`) and
 * `serverSpecificPath`.
 *
 * Usage: node mcp_documents_reference.mjs < REQUEST_JSON
 * REQUEST_JSON: {"settings": [oauth settings…], "serverUrls": [url…]}.
 * Prints {"offers": [boolean per settings], "paths": [the /callback path per URL]}.
 * The reference side of tests/conformance/test_mcp_auth_against_pi16.py.
 */
import { fileURLToPath, pathToFileURL } from "node:url";

const PI16_DIR = fileURLToPath(new URL("./node_modules/pi16/", import.meta.url));
const PI_MCP_DIR = fileURLToPath(new URL("./node_modules/@earendil-works/pi-mcp/", import.meta.url));
const load = (dir, path) => import(pathToFileURL(`${dir}${path}`).href);
const { isClientMetadataDocumentCallback } = await load(PI16_DIR, "dist/core/mcp-servers.js");
const { offersClientMetadataDocument, serverSpecificPath } = await load(
  PI_MCP_DIR,
  "dist/oauth/client-settings.js",
);

let input = "";
for await (const chunk of process.stdin) input += chunk;
const request = JSON.parse(input);
const documents = { baseUrl: "https://pi.dev/oauth", listsRedirectUrl: isClientMetadataDocumentCallback };
const offers = request.settings.map((settings) =>
  offersClientMetadataDocument(settings, documents, settings.callbackUrl),
);
const paths = request.serverUrls.map((url) => serverSpecificPath("/callback", url));
process.stdout.write(JSON.stringify({ offers, paths }));
