// Finds the pi-lsp to start, in VS Code: builds the candidates of `interpreter.ts` from the
// settings, PATH and the Python extension, and probes them by running them (`--version`, or
// `bundled/launch.py --probe`). Every probe is bounded in time.
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { type Candidate, chooseServer, type Probes, type PythonProbe, type Selection } from './interpreter';
import { configuredServerPath, findOnPath, type SettingsGetter } from './settings';

const PROBE_TIMEOUT_MS = 20_000;

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/** `name` on PATH (with `.exe` on Windows). */
export function onPath(name: string): string | undefined {
  const file = process.platform === 'win32' ? `${name}.exe` : name;
  return findOnPath(file, process.env.PATH, isExecutable);
}

interface PythonExtensionApi {
  environments?: { getActiveEnvironmentPath(resource?: vscode.Uri): { path: string } | undefined };
}

/** The interpreter selected in the Python extension (else its python.defaultInterpreterPath), or why there is none. */
async function selectedPython(): Promise<{ command: string } | { absent: string }> {
  const extension = vscode.extensions.getExtension<PythonExtensionApi>('ms-python.python');
  try {
    const api = extension ? await extension.activate() : undefined;
    const active = api?.environments?.getActiveEnvironmentPath(vscode.workspace.workspaceFolders?.[0]?.uri)?.path;
    if (active && active !== 'python') return { command: active };
  } catch {
    // An older or broken Python extension: the setting below may still name an interpreter.
  }
  const configured = vscode.workspace.getConfiguration('python').get<string>('defaultInterpreterPath');
  if (configured && configured !== 'python') return { command: configured };
  return { absent: extension ? 'no interpreter selected' : 'the Python extension is not installed' };
}

function run(command: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { timeout: PROBE_TIMEOUT_MS, windowsHide: true }, (error, stdout, stderr) => {
      if (error) {
        const said = `${stderr}`.trim().split('\n').pop();
        reject(new Error(said ? `${error.message.split('\n')[0]}: ${said}` : error.message));
      } else {
        resolve(`${stdout}`);
      }
    });
  });
}

function probes(launcher: string): Probes {
  return {
    serverVersion: async (command) => (await run(command, ['--version'])).split('\n')[0],
    python: async (python) => {
      const output = await run(python, ['-I', launcher, '--probe']);
      try {
        return JSON.parse(output) as PythonProbe;
      } catch {
        throw new Error(`its probe printed no JSON: ${output.trim().slice(0, 200)}`);
      }
    },
  };
}

function candidates(get: SettingsGetter): Candidate[] {
  const located = (command: string | undefined, absent: string) => async () => (command ? { command } : { absent });
  const configured = configuredServerPath(get, vscode.workspace.workspaceFolders?.[0]?.uri.fsPath);
  return [
    { label: 'pi.server.path', kind: 'server', locate: located(configured, 'not set') },
    { label: 'pi-lsp on PATH', kind: 'server', locate: async () => located(onPath('pi-lsp'), 'not found')() },
    { label: "the Python extension's interpreter", kind: 'python', locate: selectedPython },
    { label: 'python3 on PATH', kind: 'python', locate: async () => located(onPath('python3'), 'not found')() },
    { label: 'python on PATH', kind: 'python', locate: async () => located(onPath('python'), 'not found')() },
  ];
}

/** The launcher the extension carries, next to its bundled libraries. */
export function launcherPath(extensionPath: string): string {
  return path.join(extensionPath, 'bundled', 'launch.py');
}

/** Chooses the server to start (see `interpreter.ts`). */
export function locateServer(get: SettingsGetter, extensionPath: string): Promise<Selection> {
  const launcher = launcherPath(extensionPath);
  return chooseServer(candidates(get), probes(launcher), launcher);
}
