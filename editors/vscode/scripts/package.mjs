// `npm run package [-- --target <vscode target>] [-- -o file.vsix]`: builds the platform-specific
// .vsix that carries the pi-lsp server. First `tools/bundle_server.py` (run by a Python with pip:
// $PI_BUNDLE_PYTHON, else the repository's .venv, else python3) fills bundled/libs for CPython
// 3.11–3.13 on the target, then `vsce package --target` packs the extension with it.
// The default target is this machine's (`linux-x64` here).
//
// vsce's secret scan would read the 200 MB of third-party libraries (and take many minutes); it
// runs here over the extension's own files instead, and vsce is told to skip it.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const root = path.resolve(here, '..', '..');
const TARGETS = ['linux-x64', 'linux-arm64', 'darwin-arm64', 'darwin-x64', 'win32-x64'];
// The size the README promises; a bigger .vsix fails the tests (tests/editors/vscode).
const SIZE_GOAL_MB = 60;

function option(names, fallback) {
  const args = process.argv.slice(2);
  const index = args.findIndex((arg) => names.includes(arg));
  return index >= 0 && args[index + 1] ? args[index + 1] : fallback;
}

function python() {
  if (process.env.PI_BUNDLE_PYTHON) return process.env.PI_BUNDLE_PYTHON;
  const venv = path.join(root, '.venv', process.platform === 'win32' ? 'Scripts/python.exe' : 'bin/python');
  return fs.existsSync(venv) ? venv : 'python3';
}

function run(command, args, cwd = here) {
  const result = spawnSync(command, args, { cwd, stdio: 'inherit', shell: process.platform === 'win32' });
  if (result.status !== 0) {
    console.error(`package: ${command} ${args.join(' ')} failed (${result.error?.message ?? `exit ${result.status}`})`);
    process.exit(1);
  }
}

const target = option(['--target', '-t'], `${process.platform}-${process.arch}`);
if (!TARGETS.includes(target)) {
  console.error(`package: unknown target ${target}; known: ${TARGETS.join(', ')}`);
  process.exit(1);
}
const output = path.resolve(process.env.INIT_CWD ?? here, option(['-o', '--out'], `pi-lsp-${target}.vsix`));

/** The extension's own files in the package: everything but the bundled libraries. */
function ownFiles() {
  const inFolder = (folder) => fs.readdirSync(path.join(here, folder)).map((name) => path.join(folder, name));
  return ['package.json', 'README.md', 'bundled/launch.py', ...inFolder('out'), ...inFolder('media')]
    .filter((file) => fs.statSync(path.join(here, file)).isFile());
}

async function scanOwnFilesForSecrets() {
  const { lintFiles, prettyPrintLintResult } = createRequire(import.meta.url)('@vscode/vsce/out/secretLint.js');
  const result = await lintFiles(ownFiles().map((file) => path.join(here, file)), true, true);
  if (!result.ok) {
    console.error(`package: secrets found:\n${result.results.map(prettyPrintLintResult).join('\n')}`);
    process.exit(1);
  }
}

fs.mkdirSync(path.dirname(output), { recursive: true });
run(python(), [path.join(root, 'tools', 'bundle_server.py'), '--target', target]);
run('node', ['esbuild.mjs', '--production']);
await scanOwnFilesForSecrets();
run('npx', [
  'vsce', 'package', '--no-dependencies', '--no-rewrite-relative-links', '--allow-missing-repository', '--skip-license',
  '--allow-package-all-secrets', '--allow-package-env-file', '--target', target, '-o', output,
]);
const megabytes = fs.statSync(output).size / 1e6;
console.log(`package: ${path.relative(process.cwd(), output) || output}: ${megabytes.toFixed(1)} MB (goal: at most ${SIZE_GOAL_MB} MB)`);
