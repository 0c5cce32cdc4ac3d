// A real webhook receiver (node:http) for the audit webhook tests: verifies every request with the standardwebhooks
// library and the subscription's secret, records what arrived, and can refuse (503), redirect, or be down.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Received {
  path: string;
  webhookId: string;
  timestamp: string;
  signature: string;
  raw: string;
  body: any;
  /** The standardwebhooks verifier accepted it with the secret registered for its subscription. */
  verified: boolean;
  verifyError: string | null;
}

export interface Receiver {
  /** http://127.0.0.1:PORT (append a path per subscription). */
  url: string;
  port: number;
  received: Received[];
  /** Every request's path, accepted or not. */
  requests: string[];
  /** accept: 204; refuse: 503; redirect: 302 to another path of this receiver. */
  mode: 'accept' | 'refuse' | 'redirect';
  /** The secret of a subscription (data.webhookId of the payload), for verification. */
  secrets: Map<string, string>;
  /** Stops listening (connections are refused) until up(). */
  down(): Promise<void>;
  up(): Promise<void>;
  /** Answers of this receiver take this long (a slow receiver). */
  delayMs: number;
  waitFor(pred: (r: Received[]) => boolean, what: string, ms?: number): Promise<Received[]>;
  close(): Promise<void>;
}

const readBody = (req: IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    let s = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (s += c));
    req.on('end', () => resolve(s));
    req.on('error', reject);
  });

export async function startReceiver(port = 0): Promise<Receiver> {
  const rcv = {
    received: [] as Received[],
    requests: [] as string[],
    mode: 'accept' as Receiver['mode'],
    secrets: new Map<string, string>(),
    delayMs: 0,
  };
  let server: Server;
  const listen = (p: number) =>
    new Promise<number>((resolve, reject) => {
      server = createServer(async (req, res) => {
        rcv.requests.push(req.url ?? '/');
        const raw = await readBody(req);
        const h = req.headers as Record<string, string>;
        let body: any = null;
        try {
          body = JSON.parse(raw);
        } catch {
          /* recorded as is */
        }
        const secret = rcv.secrets.get(body?.data?.webhookId);
        let verifyError: string | null = secret ? null : 'no secret registered';
        if (secret) {
          try {
            new Webhook(secret).verify(raw, {
              'webhook-id': h['webhook-id']!,
              'webhook-timestamp': h['webhook-timestamp']!,
              'webhook-signature': h['webhook-signature']!,
            });
          } catch (err) {
            verifyError = (err as Error).message;
          }
        }
        if (rcv.delayMs) await new Promise((r) => setTimeout(r, rcv.delayMs));
        if (rcv.mode === 'redirect') {
          res.writeHead(302, { location: '/elsewhere' }).end();
          return;
        }
        // A refused request is not a receipt.
        if (rcv.mode === 'refuse') {
          res.writeHead(503).end('busy');
          return;
        }
        rcv.received.push({
          path: req.url ?? '/',
          webhookId: h['webhook-id'] ?? '',
          timestamp: h['webhook-timestamp'] ?? '',
          signature: h['webhook-signature'] ?? '',
          raw,
          body,
          verified: verifyError === null,
          verifyError,
        });
        res.writeHead(204).end();
      });
      server.once('error', reject);
      server.listen(p, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
    });
  const bound = await listen(port);
  const close = () => new Promise<void>((r) => (server.listening ? server.close(() => r()) : r()));
  return Object.assign(rcv, {
    url: `http://127.0.0.1:${bound}`,
    port: bound,
    async down() {
      server.closeAllConnections();
      await close();
    },
    async up() {
      await listen(bound);
    },
    async waitFor(pred: (r: Received[]) => boolean, what: string, ms = 15_000) {
      const until = Date.now() + ms;
      while (!pred(rcv.received)) {
        if (Date.now() > until) throw new Error(`timed out waiting for ${what} (received ${rcv.received.length})`);
        await new Promise((r) => setTimeout(r, 20));
      }
      return rcv.received;
    },
    async close() {
      server.closeAllConnections();
      await close();
    },
  });
}
