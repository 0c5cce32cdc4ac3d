// The outbound guard checks the address where the socket connects (DNS rebinding): a name that answered a public
// address when the URL was checked and a private one when the connection is made never reaches the private one.
import { createServer, type Server } from 'node:net';
import type { LookupAddress } from 'node:dns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outboundFailure, publicOnlyAgent, publicOnlyLookup, type Resolve } from '../../src/platform/outbound.js';

let server: Server;
let port = 0;
let connections = 0;
const sockets = new Set<import('node:net').Socket>();

beforeAll(async () => {
  server = createServer((socket) => {
    connections++;
    sockets.add(socket);
    socket.end('HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  port = (server.address() as { port: number }).port;
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise<void>((r) => server.close(() => r()));
});

const lookupOnce = (resolve: Resolve, host: string) =>
  new Promise<{ err: (Error & { code?: string }) | null; address: string | LookupAddress[] }>((done) =>
    publicOnlyLookup(resolve)(host, {}, ((err: Error | null, address: string | LookupAddress[]) =>
      done({ err, address })) as never),
  );

describe('the outbound guard re-checks the address at connect time', () => {
  it('a name that answers public, then private (DNS rebinding): the second answer is refused', async () => {
    const answers = [[{ address: '93.184.215.14', family: 4 }], [{ address: '127.0.0.1', family: 4 }]];
    const rebinding: Resolve = async () => answers.shift()!;
    const first = await lookupOnce(rebinding, 'rebind.example');
    expect(first.err).toBeNull();
    expect(first.address).toBe('93.184.215.14');
    const second = await lookupOnce(rebinding, 'rebind.example');
    expect(second.err?.code).toBe('EPRIVATEADDRESS');
  });

  it('any private answer among several refuses the name (an attacker cannot hide loopback behind a public record)', async () => {
    const mixed: Resolve = async () => [
      { address: '93.184.215.14', family: 4 },
      { address: '::ffff:7f00:1', family: 6 },
    ];
    expect((await lookupOnce(mixed, 'mixed.example')).err?.code).toBe('EPRIVATEADDRESS');
    const metadata: Resolve = async () => [{ address: '169.254.169.254', family: 4 }];
    expect((await lookupOnce(metadata, 'metadata.example')).err?.code).toBe('EPRIVATEADDRESS');
  });

  it('a request through the guarded agent never opens a connection to a private address', async () => {
    const toLoopback: Resolve = async () => [{ address: '127.0.0.1', family: 4 }];
    const before = connections;
    const err = await fetch(`http://rebind.example:${port}/`, {
      dispatcher: publicOnlyAgent(toLoopback),
    } as RequestInit).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).not.toBeNull();
    expect(outboundFailure(err)).toBe('refused: The host resolves to a private address.');
    expect(connections).toBe(before);
  });

  it('the same request without the guard reaches the server (the test can tell the two apart)', async () => {
    const res = await fetch(`http://127.0.0.1:${port}/`);
    expect(await res.text()).toBe('ok');
    expect(connections).toBeGreaterThan(0);
  });
});
