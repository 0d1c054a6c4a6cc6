// Choosing the server: the order of the candidates, what each must pass, the report of why the
// others were not chosen, and the message when none fits.
import { describe, expect, it } from 'vitest';
import { type Candidate, chooseServer, noServerMessage, type Probes, type PythonProbe } from '../../src/interpreter';

const LAUNCHER = '/ext/bundled/launch.py';

function python(overrides: Partial<PythonProbe>): PythonProbe {
  return {
    executable: '/usr/bin/python3',
    version: '3.12.3',
    abi: 'cp312',
    bundled: true,
    bundledVersion: '0.1.0',
    problem: null,
    installed: false,
    ...overrides,
  };
}

/** The five candidates of the extension, each at `commands[label]` (absent when missing). */
function candidates(commands: Record<string, string | undefined>, located: string[] = []): Candidate[] {
  const make = (label: string, kind: 'server' | 'python'): Candidate => ({
    label,
    kind,
    locate: async () => {
      located.push(label);
      return commands[label] ? { command: commands[label]! } : { absent: 'not found' };
    },
  });
  return [
    make('pi.server.path', 'server'),
    make('pi-lsp on PATH', 'server'),
    make("the Python extension's interpreter", 'python'),
    make('python3 on PATH', 'python'),
    make('python on PATH', 'python'),
  ];
}

function probes(servers: Record<string, string | Error>, pythons: Record<string, PythonProbe | Error>): Probes & { asked: string[] } {
  const asked: string[] = [];
  const answer = async <T>(table: Record<string, T | Error>, command: string): Promise<T> => {
    asked.push(command);
    const value = table[command];
    if (value === undefined) throw new Error('spawn ENOENT');
    if (value instanceof Error) throw value;
    return value;
  };
  return { asked, serverVersion: (command) => answer(servers, command), python: (command) => answer(pythons, command) };
}

describe('chooseServer', () => {
  it('prefers pi.server.path and tries nothing after the chosen one', async () => {
    const found = probes({ '/opt/pi-lsp': 'pi-lsp 0.2.0' }, { '/usr/bin/python3': python({}) });
    const located: string[] = [];
    const selection = await chooseServer(
      candidates({ 'pi.server.path': '/opt/pi-lsp', 'python3 on PATH': '/usr/bin/python3' }, located),
      found,
      LAUNCHER,
    );
    expect(selection.choice).toEqual({ command: '/opt/pi-lsp', args: [], label: 'pi.server.path', detail: 'pi-lsp 0.2.0' });
    expect(found.asked).toEqual(['/opt/pi-lsp']);
    // The Python extension is not activated to look for an interpreter that is not needed.
    expect(located).toEqual(['pi.server.path']);
    expect(selection.report).toEqual([
      'pi.server.path (/opt/pi-lsp): chosen, pi-lsp 0.2.0',
      'pi-lsp on PATH: not tried',
      "the Python extension's interpreter: not tried",
      'python3 on PATH: not tried',
      'python on PATH: not tried',
    ]);
  });

  it('takes pi-lsp on PATH before any bundled interpreter', async () => {
    const selection = await chooseServer(
      candidates({ 'pi-lsp on PATH': '/home/me/.local/bin/pi-lsp', 'python3 on PATH': '/usr/bin/python3' }),
      probes({ '/home/me/.local/bin/pi-lsp': 'pi-lsp 0.1.0\n' }, { '/usr/bin/python3': python({}) }),
      LAUNCHER,
    );
    expect(selection.choice?.label).toBe('pi-lsp on PATH');
  });

  it('runs the bundled server with an interpreter whose ABI it carries, isolated (-I)', async () => {
    const selection = await chooseServer(
      candidates({ 'python3 on PATH': '/usr/bin/python3' }),
      probes({}, { '/usr/bin/python3': python({ version: '3.11.2', abi: 'cp311' }) }),
      LAUNCHER,
    );
    expect(selection.choice).toEqual({
      command: '/usr/bin/python3',
      args: ['-I', LAUNCHER],
      label: 'python3 on PATH',
      detail: 'Python 3.11.2 (cp311) with the bundled pi-lsp 0.1.0',
    });
  });

  it('says why each earlier candidate was refused, and skips an interpreter seen before', async () => {
    const selection = await chooseServer(
      candidates({
        'pi.server.path': '/broken/pi-lsp',
        'pi-lsp on PATH': '/usr/local/bin/pi-lsp',
        "the Python extension's interpreter": '/usr/bin/python3.10',
        'python3 on PATH': '/usr/bin/python3.10',
        'python on PATH': '/opt/py313t/bin/python',
      }),
      probes(
        { '/broken/pi-lsp': new Error('spawn /broken/pi-lsp EACCES'), '/usr/local/bin/pi-lsp': 'usage: something else' },
        {
          '/usr/bin/python3.10': python({ version: '3.10.12', abi: 'cp310', bundled: false, problem: 'Python 3.10.12 is older than 3.11' }),
          '/opt/py313t/bin/python': python({ abi: 'cp313t', bundled: false, problem: 'Python 3.13.1 (cp313t) has no bundled libraries' }),
        },
      ),
      LAUNCHER,
    );
    expect(selection.choice).toBeUndefined();
    expect(selection.report).toEqual([
      'pi.server.path (/broken/pi-lsp): `/broken/pi-lsp --version` failed: spawn /broken/pi-lsp EACCES',
      'pi-lsp on PATH (/usr/local/bin/pi-lsp): `/usr/local/bin/pi-lsp --version` printed "usage: something else", not a pi-lsp version',
      "the Python extension's interpreter (/usr/bin/python3.10): Python 3.10.12 is older than 3.11",
      "python3 on PATH (/usr/bin/python3.10): the same as the Python extension's interpreter",
      'python on PATH (/opt/py313t/bin/python): Python 3.13.1 (cp313t) has no bundled libraries',
    ]);
  });

  it('falls back to an interpreter that has pi_lsp installed when no bundled ABI fits', async () => {
    const selection = await chooseServer(
      candidates({ "the Python extension's interpreter": '/ws/.venv/bin/python' }),
      probes({}, { '/ws/.venv/bin/python': python({ version: '3.14.0', abi: 'cp314', bundled: false, installed: true, problem: 'no cp314' }) }),
      LAUNCHER,
    );
    expect(selection.choice).toMatchObject({ command: '/ws/.venv/bin/python', args: ['-m', 'pi_lsp'] });
    expect(selection.choice?.detail).toContain('Python 3.14.0 with the pi_lsp installed in it');
  });

  it('reports an interpreter that cannot run the probe', async () => {
    const selection = await chooseServer(
      candidates({ 'python on PATH': '/usr/bin/python' }),
      probes({}, { '/usr/bin/python': new Error('Command failed: SyntaxError: invalid syntax') }),
      LAUNCHER,
    );
    expect(selection.report.at(-1)).toBe(`python on PATH (/usr/bin/python): it did not run ${LAUNCHER}: Command failed: SyntaxError: invalid syntax`);
  });
});

describe('noServerMessage', () => {
  it('says what was tried and what to do', async () => {
    const selection = await chooseServer(candidates({}), probes({}, {}), LAUNCHER);
    const message = noServerMessage(selection);
    expect(message).toContain('Tried: pi.server.path (not found); pi-lsp on PATH (not found);');
    expect(message).toContain('Install Python 3.11 or newer');
    expect(message).toContain('set pi.server.path');
    expect(message).not.toMatch(/^pi-lsp is not running$/);
  });
});
