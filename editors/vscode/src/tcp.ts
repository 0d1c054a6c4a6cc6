// Connecting to a running `pi-lsp --tcp` server (`pi.server.tcp`) instead of starting one: the
// address, the token read from the file that server wrote (`pi.server.tokenFile`), and the
// socket. The token goes into initializationOptions only, never into workspace/configuration.
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { type SettingsGetter, SettingsError } from './settings';

export interface TcpServer {
  host: string;
  port: number;
  tokenFile: string;
}

function setting(get: SettingsGetter, key: string): string | undefined {
  const value = get(key);
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw new SettingsError(`pi.${key} must be a string, got ${JSON.stringify(value)}`);
  return value.trim() || undefined;
}

/** `HOST:PORT` or `[IPV6]:PORT`; undefined when malformed. */
export function parseAddress(address: string): { host: string; port: number } | undefined {
  const match = /^\[([^\]]+)\]:(\d+)$/.exec(address) ?? /^([^:[\]]+):(\d+)$/.exec(address);
  const port = match ? Number(match[2]) : NaN;
  return match && port >= 1 && port <= 65535 ? { host: match[1], port } : undefined;
}

/** The server named by `pi.server.tcp` and `pi.server.tokenFile`, or undefined to start one. */
export function tcpServer(get: SettingsGetter, workspaceFolder?: string): TcpServer | undefined {
  const address = setting(get, 'server.tcp');
  if (!address) return undefined;
  const parsed = parseAddress(address);
  if (!parsed) throw new SettingsError(`pi.server.tcp must be HOST:PORT such as 127.0.0.1:7777, got "${address}"`);
  const configured = setting(get, 'server.tokenFile');
  if (!configured) {
    throw new SettingsError('pi.server.tokenFile must name the token file the server printed at start ("pi-lsp: token file: …")');
  }
  const expanded = configured.startsWith('~/') ? path.join(os.homedir(), configured.slice(2)) : configured;
  const tokenFile = workspaceFolder && !path.isAbsolute(expanded) ? path.resolve(workspaceFolder, expanded) : expanded;
  return { ...parsed, tokenFile };
}

/** The token in `tokenFile` (read at every start: a restarted server writes a new one). */
export function readToken(tokenFile: string, readFile: (file: string) => string = (file) => fs.readFileSync(file, 'utf8')): string {
  let text: string;
  try {
    text = readFile(tokenFile);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new SettingsError(`cannot read the token file of pi.server.tokenFile (${reason}); is pi-lsp --tcp running?`);
  }
  const token = text.trim();
  if (!token) throw new SettingsError(`the token file ${tokenFile} is empty`);
  return token;
}

/** A socket to the server, for the language client's `ServerOptions`. */
export function connect(server: TcpServer): Promise<{ reader: net.Socket; writer: net.Socket }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: server.host, port: server.port });
    socket.once('connect', () => {
      socket.off('error', reject);
      resolve({ reader: socket, writer: socket });
    });
    socket.once('error', reject);
  });
}
