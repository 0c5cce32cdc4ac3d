// A Twilio-compatible Messages API on loopback: POST /2010-04-01/Accounts/:sid/Messages.json with form
// To/From/Body and basic auth. It answers like Twilio (201 JSON, or a Twilio error body) and keeps each message.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SmsMessage {
  sid: string;
  accountSid: string;
  to: string;
  from: string;
  body: string;
  at: Date;
}

export interface RefusedRequest {
  status: number;
  path: string;
  reason: string;
}

export interface SmsSink {
  /** Base URL to hand the app as TWILIO_API_BASE. */
  url: string;
  accountSid: string;
  authToken: string;
  from: string;
  messages: SmsMessage[];
  /** Requests the sink refused (bad auth, bad path, missing fields), for tests of the client side. */
  refused: RefusedRequest[];
  /** The environment that points an app at this sink (SMS_PROVIDER=twilio ...). */
  env(overrides?: Record<string, string>): Record<string, string>;
  /** Waits until a message to `to` arrives, then returns the latest such message. */
  waitFor(to: string, predicate?: (m: SmsMessage) => boolean, timeoutMs?: number): Promise<SmsMessage>;
  /** The six-digit code of the latest message to `to` (throws when there is none). */
  lastCode(to: string): string;
  countTo(to: string): number;
  /** Answers the next `n` requests with this status (a provider outage). */
  failNext(status: number, n?: number): void;
  close(): Promise<void>;
}

const PATH = /^\/2010-04-01\/Accounts\/([^/]+)\/Messages\.json$/;

function twilioError(res: ServerResponse, status: number, code: number, message: string) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status }));
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export const codeIn = (body: string): string | null => /\b(\d{6})\b/.exec(body)?.[1] ?? null;

export async function startSmsSink(
  opts: { accountSid?: string; authToken?: string; from?: string } = {},
): Promise<SmsSink> {
  const accountSid = opts.accountSid ?? `AC${randomBytes(16).toString('hex')}`;
  const authToken = opts.authToken ?? randomBytes(16).toString('hex');
  const from = opts.from ?? '+15005550006';
  const messages: SmsMessage[] = [];
  const refused: RefusedRequest[] = [];
  let failures: { status: number; left: number } | null = null;
  const expectedAuth = `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString('base64')}`;

  const server = createServer(async (req, res) => {
    const path = (req.url ?? '').split('?')[0]!;
    const refuse = (status: number, code: number, reason: string) => {
      refused.push({ status, path, reason });
      twilioError(res, status, code, reason);
    };
    const m = PATH.exec(path);
    if (req.method !== 'POST' || !m) return refuse(404, 20404, 'The requested resource was not found');
    const body = await readBody(req);
    if (req.headers.authorization !== expectedAuth || decodeURIComponent(m[1]!) !== accountSid)
      return refuse(401, 20003, 'Authenticate');
    if (failures && failures.left > 0) {
      failures.left -= 1;
      return refuse(failures.status, 20500, 'Internal Server Error');
    }
    if (!(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded'))
      return refuse(400, 21601, 'Unsupported content type');
    const form = new URLSearchParams(body);
    const to = form.get('To');
    const sender = form.get('From');
    const text = form.get('Body');
    if (!to || !/^\+[1-9]\d{6,14}$/.test(to)) return refuse(400, 21211, "The 'To' number is not a valid phone number.");
    if (!sender) return refuse(400, 21603, "A 'From' phone number is required.");
    if (!text) return refuse(400, 21602, 'Message body is required.');
    const msg: SmsMessage = {
      sid: `SM${randomBytes(16).toString('hex')}`,
      accountSid,
      to,
      from: sender,
      body: text,
      at: new Date(),
    };
    messages.push(msg);
    const now = msg.at.toUTCString();
    res.writeHead(201, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        sid: msg.sid,
        account_sid: accountSid,
        to,
        from: sender,
        body: text,
        status: 'queued',
        num_segments: '1',
        direction: 'outbound-api',
        api_version: '2010-04-01',
        date_created: now,
        date_updated: now,
        date_sent: null,
        price: null,
        error_code: null,
        error_message: null,
        uri: `/2010-04-01/Accounts/${accountSid}/Messages/${msg.sid}.json`,
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  const to_ = (to: string) => messages.filter((m) => m.to === to);

  return {
    url,
    accountSid,
    authToken,
    from,
    messages,
    refused,
    env: (overrides = {}) => ({
      SMS_PROVIDER: 'twilio',
      TWILIO_API_BASE: url,
      TWILIO_ACCOUNT_SID: accountSid,
      TWILIO_AUTH_TOKEN: authToken,
      TWILIO_FROM: from,
      ...overrides,
    }),
    async waitFor(to, predicate = () => true, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = to_(to).filter(predicate).at(-1);
        if (found) return found;
        if (Date.now() > deadline)
          throw new Error(`no SMS to ${to} within ${timeoutMs} ms (have: ${messages.map((m) => m.to).join(', ')})`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    lastCode(to) {
      const last = to_(to).at(-1);
      if (!last) throw new Error(`no SMS to ${to}`);
      const code = codeIn(last.body);
      if (!code) throw new Error(`no six-digit code in SMS to ${to}: ${last.body}`);
      return code;
    },
    countTo: (to) => to_(to).length,
    failNext(status, n = 1) {
      failures = { status, left: n };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
