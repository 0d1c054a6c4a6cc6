// JSON Schema -> TypeScript through json-schema-to-typescript (the VS Code extension's
// devDependency): reads the protocol's schema on stdin and prints one declaration per definition,
// in the schema's order, each naming the others by their titles.
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const extension = fileURLToPath(new URL('../../editors/vscode/package.json', import.meta.url));
const { compile } = createRequire(extension)('json-schema-to-typescript');

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const schema = JSON.parse(Buffer.concat(chunks).toString('utf8'));

const options = {
  bannerComment: '',
  additionalProperties: false,
  declareExternallyReferenced: false,
  format: true,
  style: { singleQuote: true, printWidth: 100, trailingComma: 'all' },
};

const declarations = [];
for (const [name, definition] of Object.entries(schema.$defs)) {
  const root = { ...definition, $defs: schema.$defs };
  declarations.push((await compile(root, name, options)).trim());
}
process.stdout.write(declarations.join('\n\n') + '\n');
