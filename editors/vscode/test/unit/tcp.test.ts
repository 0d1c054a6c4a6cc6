// Connecting to a running `pi-lsp --tcp`: the settings, the token file and the socket.
import * as net from 'node:net';
import * as os from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { SettingsError } from '../../src/settings';
import { connect, parseAddress, readToken, tcpServer } from '../../src/tcp';

const settings = (values: Record<string, unknown>) => (key: string) => values[key];

describe('tcpServer', () => {
  it('is undefined without pi.server.tcp: the extension starts its own server', () => {
    expect(tcpServer(settings({}))).toBeUndefined();
    expect(tcpServer(settings({ 'server.tcp': '', 'server.tokenFile': '/t' }))).toBeUndefined();
  });

  it('reads the address and resolves the token file', () => {
    expect(tcpServer(settings({ 'server.tcp': '127.0.0.1:7777', 'server.tokenFile': '/run/pi.token' }))).toEqual({
      host: '127.0.0.1',
      port: 7777,
      tokenFile: '/run/pi.token',
    });
    expect(tcpServer(settings({ 'server.tcp': '[::1]:80', 'server.tokenFile': 'pi.token' }), '/ws')).toEqual({
      host: '::1',
      port: 80,
      tokenFile: '/ws/pi.token',
    });
    expect(tcpServer(settings({ 'server.tcp': 'localhost:1', 'server.tokenFile': '~/pi.token' }))?.tokenFile).toBe(`${os.homedir()}/pi.token`);
  });

  it.each([
    [{ 'server.tcp': '7777', 'server.tokenFile': '/t' }, /pi.server.tcp must be HOST:PORT/],
    [{ 'server.tcp': 'localhost:99999', 'server.tokenFile': '/t' }, /pi.server.tcp must be HOST:PORT/],
    [{ 'server.tcp': '127.0.0.1:7777' }, /pi.server.tokenFile must name the token file/],
    [{ 'server.tcp': 7777 }, /pi.server.tcp must be a string/],
  ])('names what is wrong in %j', (values, message) => {
    expect(() => tcpServer(settings(values))).toThrow(SettingsError);
    expect(() => tcpServer(settings(values))).toThrow(message);
  });

  it('parses addresses strictly', () => {
    expect(parseAddress('a.example:443')).toEqual({ host: 'a.example', port: 443 });
    expect(parseAddress('::1:80')).toBeUndefined();
    expect(parseAddress('host:0')).toBeUndefined();
  });
});

describe('readToken', () => {
  it('trims the file and says clearly when it cannot be used', () => {
    expect(readToken('/t', () => '  s3cret\n')).toBe('s3cret');
    expect(() => readToken('/t', () => '\n')).toThrow(/token file \/t is empty/);
    expect(() =>
      readToken('/t', () => {
        throw new Error('ENOENT: no such file');
      }),
    ).toThrow(/cannot read the token file of pi.server.tokenFile \(ENOENT: no such file\); is pi-lsp --tcp running\?/);
  });
});

describe('connect', () => {
  let server: net.Server | undefined;
  afterEach(() => server?.close());

  it('opens a socket the client reads from and writes to', async () => {
    const received = new Promise<string>((resolve) => {
      server = net.createServer((socket) => socket.once('data', (data) => resolve(data.toString())));
    });
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    const port = (server?.address() as net.AddressInfo).port;
    const streams = await connect({ host: '127.0.0.1', port, tokenFile: '/t' });
    expect(streams.reader).toBe(streams.writer);
    streams.writer.write('Content-Length: 2\r\n\r\n{}');
    expect(await received).toBe('Content-Length: 2\r\n\r\n{}');
    streams.writer.destroy();
  });

  it('rejects when nothing listens', async () => {
    const probe = net.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as net.AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    await expect(connect({ host: '127.0.0.1', port, tokenFile: '/t' })).rejects.toThrow(/ECONNREFUSED/);
  });
});
