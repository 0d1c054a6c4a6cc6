// Which pi-lsp the extension starts. The candidates, in order: `pi.server.path`; `pi-lsp` on PATH
// (a copy installed on purpose wins over the bundled one); the Python extension's interpreter;
// `python3`, then `python`, on PATH. A pi-lsp executable must answer `--version`; an interpreter
// must run `bundled/launch.py --probe` and be a CPython 3.11+ whose ABI the extension carries
// libraries for (else one that has pi_lsp installed itself). The first that passes is chosen, and
// those after it are not even looked for; the report says why each one before it was not. Pure logic over injected probes.

/** What `bundled/launch.py --probe` prints about the interpreter that ran it. */
export interface PythonProbe {
  executable: string;
  version: string;
  abi: string;
  bundled: boolean;
  bundledVersion: string | null;
  problem: string | null;
  installed: boolean;
}

export interface Probes {
  /** The first line `command --version` prints; rejects with the reason it did not run. */
  serverVersion(command: string): Promise<string>;
  /** The probe of `python`; rejects with the reason it did not run. */
  python(python: string): Promise<PythonProbe>;
}

export interface Candidate {
  /** How the Output channel and the notification name it: "pi.server.path", "python3 on PATH", … */
  label: string;
  kind: 'server' | 'python';
  /** The executable, or why there is none ("not set", "not found"). */
  locate(): Promise<{ command: string } | { absent: string }>;
}

export interface ServerChoice {
  command: string;
  args: string[];
  label: string;
  /** What runs, for the Output channel: "Python 3.12.3 (cp312) with the bundled pi-lsp 0.1.0". */
  detail: string;
}

export interface Selection {
  choice?: ServerChoice;
  /** One line per candidate, in order: what it is and why it was or was not chosen. */
  report: string[];
  /** Each candidate that was not chosen, with the short reason, for the notification. */
  refused: { label: string; reason: string }[];
}

const SERVER_VERSION = /^pi-lsp (\S+)/;

async function checkServer(command: string, probes: Probes): Promise<{ version: string } | { reason: string }> {
  try {
    const line = (await probes.serverVersion(command)).trim();
    const match = SERVER_VERSION.exec(line);
    return match ? { version: match[1] } : { reason: `\`${command} --version\` printed "${line}", not a pi-lsp version` };
  } catch (error) {
    return { reason: `\`${command} --version\` failed: ${reasonOf(error)}` };
  }
}

async function checkPython(
  python: string,
  probes: Probes,
  launcher: string,
): Promise<{ args: string[]; detail: string } | { reason: string }> {
  let probe: PythonProbe;
  try {
    probe = await probes.python(python);
  } catch (error) {
    return { reason: `it did not run ${launcher}: ${reasonOf(error)}` };
  }
  if (probe.bundled) {
    return { args: ['-I', launcher], detail: `Python ${probe.version} (${probe.abi}) with the bundled pi-lsp ${probe.bundledVersion}` };
  }
  if (probe.installed) {
    return { args: ['-m', 'pi_lsp'], detail: `Python ${probe.version} with the pi_lsp installed in it (${probe.problem})` };
  }
  return { reason: probe.problem ?? 'it cannot run pi-lsp' };
}

function reasonOf(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0];
}

/** Tries the candidates in order and returns the first that can run pi-lsp, with the report. */
export async function chooseServer(candidates: Candidate[], probes: Probes, launcher: string): Promise<Selection> {
  const selection: Selection = { report: [], refused: [] };
  const seen = new Map<string, string>();
  const refuse = (label: string, where: string, reason: string) => {
    selection.report.push(`${label}${where}: ${reason}`);
    selection.refused.push({ label, reason });
  };
  for (const candidate of candidates) {
    // Not even located: finding the Python extension's interpreter activates that extension.
    if (selection.choice) {
      selection.report.push(`${candidate.label}: not tried`);
      continue;
    }
    const located = await candidate.locate();
    if ('absent' in located) {
      refuse(candidate.label, '', located.absent);
      continue;
    }
    const { command } = located;
    const where = ` (${command})`;
    const earlier = seen.get(command);
    if (earlier) {
      refuse(candidate.label, where, `the same as ${earlier}`);
      continue;
    }
    seen.set(command, candidate.label);
    if (candidate.kind === 'server') {
      const checked = await checkServer(command, probes);
      if ('reason' in checked) refuse(candidate.label, where, checked.reason);
      else selection.choice = { command, args: [], label: candidate.label, detail: `pi-lsp ${checked.version}` };
    } else {
      const checked = await checkPython(command, probes, launcher);
      if ('reason' in checked) refuse(candidate.label, where, checked.reason);
      else selection.choice = { command, args: checked.args, label: candidate.label, detail: checked.detail };
    }
    if (selection.choice) selection.report.push(`${candidate.label}${where}: chosen, ${selection.choice.detail}`);
  }
  return selection;
}

/** The one notification shown when no candidate can run pi-lsp: what was tried and what to do. */
export function noServerMessage(selection: Selection): string {
  const tried = selection.refused.map(({ label, reason }) => `${label} (${reason})`).join('; ');
  return (
    `pi-lsp cannot start: no candidate can run it. Tried: ${tried}. ` +
    'Install Python 3.11 or newer (python.org, or your system\'s package manager), then run "Pi: Restart Server"; ' +
    'or set pi.server.path to a pi-lsp executable.'
  );
}
