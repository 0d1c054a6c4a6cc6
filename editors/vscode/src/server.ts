// The pi-lsp server process and its language client: start (with the server `locateServer`
// chooses and the options from the `pi.*` settings), restart, typed `pi/*` requests, and the
// `pi/event` stream. Errors are logged to the "pi-lsp" output channel; callers decide which ones
// the user must see.
import * as vscode from 'vscode';
import { LanguageClient, type LanguageClientOptions, ResponseError, type ServerOptions, ShowMessageRequest, State } from 'vscode-languageclient/node';
import {
  EVENT_NOTIFICATION,
  type EventNotification,
  type Method,
  type ParamsOf,
  RESOURCES_CHANGED_NOTIFICATION,
  type ResourcesChanged,
  type ResultOf,
  SET_CREDENTIALS_NOTIFICATION,
  type SetCredentialsParams,
} from './protocol';
import { noServerMessage, type ServerChoice } from './interpreter';
import { locateServer } from './locateServer';
import { permissionQuestions } from './permissions';
import { initializationOptions, SettingsError } from './settings';
import { connect, readToken, type TcpServer, tcpServer } from './tcp';

function settingsGetter(): (key: string) => unknown {
  const configuration = vscode.workspace.getConfiguration('pi');
  return (key) => configuration.get(key);
}

/** How one start reaches the server: a process it starts, or a TCP connection (pi.server.tcp). */
interface Connection {
  serverOptions: ServerOptions;
  /** The output channel's line before the start. */
  starting: string;
  /** Where the server came from, for the "is running" line. */
  origin: string;
  /** The notification when the start fails. */
  failed: (error: string) => string;
}

function tcpConnection(server: TcpServer): Connection {
  const address = `${server.host}:${server.port}`;
  return {
    serverOptions: () => connect(server),
    starting: `Connecting to pi-lsp at ${address} (pi.server.tcp)`,
    origin: `pi.server.tcp: ${address}`,
    failed: (error) => `pi-lsp at ${address} (pi.server.tcp) refused or failed: ${error}`,
  };
}

function processConnection(choice: ServerChoice, serverOptions: ServerOptions): Connection {
  const commandLine = [choice.command, ...choice.args].join(' ');
  return {
    serverOptions,
    starting: `Starting ${commandLine} (${choice.label}: ${choice.detail})`,
    origin: `${choice.label}: ${choice.detail}`,
    failed: (error) => `pi-lsp failed to start (${choice.label}: ${commandLine}): ${error}. Set pi.server.path to a working pi-lsp, or see the output.`,
  };
}

/** More the extension does with each language client it starts (the editor's models: languageModels/). */
export interface ClientParticipant {
  /** A new client, before it starts: the capabilities it advertises and the requests it answers. */
  attach(client: LanguageClient): void;
  /** The client is running (started here, or restarted by itself). */
  running(client: LanguageClient): Promise<void>;
}

/** The keys the user stored in VS Code for pi (see apiKeys.ts). */
export type CredentialsSource = () => Promise<Record<string, string>>;

export class PiServer implements vscode.Disposable {
  readonly output = vscode.window.createOutputChannel('pi-lsp');
  private client: LanguageClient | undefined;
  private starting: Promise<void> | undefined;
  /** The change of the stored keys under way; requests wait for it (see updateCredentials). */
  private credentialsUpdate: Promise<void> = Promise.resolve();
  private generation = 0;
  /** Why the server is not running, when its last start failed; requests repeat it. */
  private problem: string | undefined;
  private readonly events = new vscode.EventEmitter<EventNotification>();
  private readonly resources = new vscode.EventEmitter<ResourcesChanged>();
  private readonly started = new vscode.EventEmitter<number>();
  private readonly stopped = new vscode.EventEmitter<void>();
  /** Every `pi/event` notification, of every session. */
  readonly onEvent = this.events.event;
  readonly onResourcesChanged = this.resources.event;
  /** Fires each time the server is (re)started and initialized, with the count of starts so far. */
  readonly onDidStart = this.started.event;
  readonly onDidStop = this.stopped.event;
  private readonly participants: ClientParticipant[] = [];


  get isRunning(): boolean {
    return this.client?.state === State.Running;
  }

  /** Neither running nor starting: nothing was started, or the start failed. */
  get isStopped(): boolean {
    return this.client === undefined && this.starting === undefined;
  }

  /** Why the server is not running, when its last start failed. */
  get lastProblem(): string | undefined {
    return this.problem;
  }

  /** `extensionPath` holds `bundled/launch.py` and the server's libraries. */
  constructor(
    private readonly extensionPath: string,
    private readonly credentials: CredentialsSource = async () => ({}),
  ) {}

  /** `participant` takes part in every client started from now on. */
  addParticipant(participant: ClientParticipant): void {
    this.participants.push(participant);
  }

  /** Starts the server; requests sent meanwhile wait for it. */
  start(): Promise<void> {
    const starting = this.startClient().finally(() => {
      if (this.starting === starting) this.starting = undefined;
    });
    this.starting = starting;
    return starting;
  }

  private async startClient(): Promise<void> {
    let connection: Connection;
    let options: ReturnType<typeof initializationOptions>;
    let token: string | undefined;
    this.problem = undefined;
    try {
      const get = settingsGetter();
      options = initializationOptions(get, vscode.workspace.isTrusted);
      const tcp = tcpServer(get, vscode.workspace.workspaceFolders?.[0]?.uri.fsPath);
      token = tcp && readToken(tcp.tokenFile);
      if (tcp) {
        connection = tcpConnection(tcp);
      } else {
        const selection = await locateServer(get, this.extensionPath);
        this.output.appendLine(`Choosing the pi-lsp server:\n${selection.report.map((line) => `  ${line}`).join('\n')}`);
        if (!selection.choice) {
          this.fail(noServerMessage(selection), 'Open Setting', () =>
            vscode.commands.executeCommand('workbench.action.openSettings', 'pi.server.path'));
          return;
        }
        connection = processConnection(selection.choice, this.serverOptions(selection.choice));
      }
    } catch (error) {
      if (error instanceof SettingsError) {
        this.fail(`pi-lsp was not started: ${error.message}`, 'Open Settings', () =>
          vscode.commands.executeCommand('workbench.action.openSettings', 'pi.'));
        return;
      }
      throw error;
    }
    this.output.appendLine(connection.starting);
    // Over TCP the token proves this client may drive the server; only the start options carry it.
    const client = new LanguageClient('pi-lsp', 'pi-lsp', connection.serverOptions, this.clientOptions(token ? { ...options, token } : options));
    client.onNotification(EVENT_NOTIFICATION, (params: EventNotification) => this.events.fire(params));
    client.onNotification(RESOURCES_CHANGED_NOTIFICATION, (params: ResourcesChanged) => this.resources.fire(params));
    // Replaces the client's own handler: pi's permission questions are asked in the chat's card or a modal.
    client.onRequest(ShowMessageRequest.type, (params, token) => permissionQuestions.answer(params, token));
    for (const participant of this.participants) participant.attach(client);
    // The client restarts a crashed server by itself: every start and stop is told from here.
    client.onDidChangeState(({ newState }) => {
      if (this.client !== client) return;
      // A server the client restarted by itself gets the keys again (a start of ours sends them).
      if (newState === State.Running && this.starting === undefined) void this.sendCredentials(client).then(() => this.announce(client));
      if (newState === State.Running) this.started.fire(++this.generation);
      if (newState === State.Stopped) this.stopped.fire();
    });
    this.client = client;
    try {
      await client.start();
      // Before any request of ours: the first prompt already has the keys.
      await this.sendCredentials(client);
      await this.announce(client);
    } catch (error) {
      if (this.client === client) this.client = undefined;
      this.output.appendLine(`pi-lsp failed to start: ${describeError(error)}`);
      this.fail(connection.failed(describeError(error)), 'Show Output', () => this.output.show());
      return;
    }
    const info = client.initializeResult?.serverInfo;
    this.output.appendLine(`${info?.name ?? 'pi-lsp'} ${info?.version ?? '(version unknown)'} is running (${connection.origin})`);
  }

  /** Tells the user, once, why the server is not running; requests repeat it. */
  private fail(message: string, action: string, run: () => unknown): void {
    this.problem = message;
    this.output.appendLine(message);
    this.stopped.fire();
    void vscode.window.showErrorMessage(message, action).then((choice) => {
      if (choice) void run();
    });
  }

  /** Tells the participants the client runs; one that fails is logged, not fatal. */
  private async announce(client: LanguageClient): Promise<void> {
    await Promise.all(
      this.participants.map((participant) =>
        participant.running(client).catch((error) => this.output.appendLine(`starting a participant failed: ${describeError(error)}`)),
      ),
    );
  }

  /** Hands the server every key stored in VS Code (never logged: only the providers are). */
  async sendCredentials(client = this.client): Promise<void> {
    if (!client || client.state !== State.Running) return;
    const credentials = await this.credentials();
    const params: SetCredentialsParams = { credentials };
    await client.sendNotification(SET_CREDENTIALS_NOTIFICATION, params);
    const providers = Object.keys(credentials);
    this.output.appendLine(`API keys in VS Code for: ${providers.length ? providers.join(', ') : 'no provider'}`);
  }

  /**
   * Runs `change` (a change of the stored keys), then hands the server the keys. Requests sent
   * meanwhile wait for both: a prompt sent right after "Pi: Set API Key…" uses the new key, though
   * storing a secret takes a round trip to the window (the browser, in code-server).
   */
  updateCredentials(change: () => Promise<unknown>): Promise<void> {
    const update = this.credentialsUpdate.then(change).then(() => this.sendCredentials());
    this.credentialsUpdate = update.catch(() => undefined);
    return update;
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.stopped.fire();
    if (client?.isRunning()) await client.stop(5000).catch((error) => this.output.appendLine(`stop: ${describeError(error)}`));
  }

  async restart(): Promise<void> {
    this.output.appendLine('Restarting pi-lsp');
    const restarting = this.stop().then(() => this.startClient());
    this.starting = restarting;
    await restarting.finally(() => {
      if (this.starting === restarting) this.starting = undefined;
    });
  }

  async request<M extends Method>(method: M, params: ParamsOf<M>, token?: vscode.CancellationToken): Promise<ResultOf<M>> {
    await this.starting;
    await this.credentialsUpdate;
    const client = this.client;
    if (!client || !this.isRunning) {
      const reason = this.problem ?? 'run "Pi: Restart Server"';
      this.output.appendLine(`${method} not sent: pi-lsp is not running`);
      throw new Error(`pi-lsp is not running: ${reason}`);
    }
    try {
      // vscode-jsonrpc sends every extra argument as a param: pass the token only when there is one.
      const result = token ? await client.sendRequest(method, params, token) : await client.sendRequest(method, params);
      return result as ResultOf<M>;
    } catch (error) {
      this.output.appendLine(`${method} failed: ${describeError(error)}`);
      throw error;
    }
  }

  dispose(): void {
    void this.stop();
    this.events.dispose();
    this.resources.dispose();
    this.started.dispose();
    this.stopped.dispose();
    this.output.dispose();
  }

  private serverOptions(choice: ServerChoice): ServerOptions {
    return { command: choice.command, args: choice.args, options: { env: process.env } };
  }

  private clientOptions(options: object): LanguageClientOptions {
    return {
      documentSelector: [{ scheme: 'file' }],
      outputChannel: this.output,
      initializationOptions: options,
      synchronize: { configurationSection: 'pi' },
      middleware: {
        workspace: {
          // The server pulls section "pi": answer with the same cleaned options it started with.
          configuration: async (params, token, next) => {
            const answers = await next(params, token);
            if (answers instanceof ResponseError || !Array.isArray(answers)) return answers;
            return params.items.map((item, index) => (item.section === 'pi' ? this.currentOptions() : answers[index]));
          },
        },
      },
    };
  }

  private currentOptions(): object | null {
    try {
      return initializationOptions(settingsGetter(), vscode.workspace.isTrusted);
    } catch (error) {
      this.output.appendLine(`settings: ${describeError(error)}`);
      return null;
    }
  }
}

/** A JSON-RPC error code, when `error` is one. */
export function errorCode(error: unknown): number | undefined {
  return error instanceof ResponseError ? error.code : undefined;
}

/** The provider a -32022 (no API key) error names in its `data`. */
export function errorProvider(error: unknown): string | undefined {
  const data = error instanceof ResponseError ? (error.data as { provider?: unknown } | undefined) : undefined;
  return typeof data?.provider === 'string' ? data.provider : undefined;
}

export function describeError(error: unknown): string {
  if (error instanceof ResponseError) return `${error.message} (${error.code})`;
  return error instanceof Error ? error.message : String(error);
}
