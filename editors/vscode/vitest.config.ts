// vitest runs the unit tests in Node, with a stub standing in for the `vscode` module.
import * as path from 'node:path';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: { alias: { vscode: path.resolve(__dirname, 'test/unit/vscode-stub.ts') } },
  test: { include: ['test/unit/**/*.test.ts'], environment: 'node' },
});
