// A real SMTP server on loopback that keeps every message it receives.
import { SMTPServer } from 'smtp-server';
import { freePort } from './addresses.js';

export interface CapturedMail {
  to: string[];
  subject: string;
  text: string;
  raw: string;
}

function decodePart(body: string, encoding: string | undefined): string {
  if (/base64/i.test(encoding ?? '')) return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  if (/quoted-printable/i.test(encoding ?? ''))
    return Buffer.from(
      body.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16))),
      'latin1',
    ).toString('utf8');
  return body;
}

/** Enough MIME for the service's own mails: the subject and the text/plain part. */
export function parseMail(raw: string, to: string[]): CapturedMail {
  const [head = '', ...rest] = raw.split(/\r?\n\r?\n/);
  const unfolded = head.replace(/\r?\n[ \t]+/g, ' ');
  const subject = /^subject: (.*)$/im.exec(unfolded)?.[1]?.trim() ?? '';
  let text = rest.join('\n\n');
  const boundary = /boundary="?([^";\r\n]+)"?/i.exec(unfolded)?.[1];
  if (boundary) {
    const parts = raw.split(`--${boundary}`);
    const plain = parts.find((p) => /content-type: text\/plain/i.test(p));
    if (plain) {
      const [ph = '', ...pb] = plain.split(/\r?\n\r?\n/);
      text = decodePart(pb.join('\n\n').trim(), /content-transfer-encoding: (\S+)/i.exec(ph)?.[1]);
    }
  } else {
    text = decodePart(text, /content-transfer-encoding: (\S+)/i.exec(unfolded)?.[1]);
  }
  return { to, subject, text, raw };
}

export interface MailCatcher {
  url: string;
  messages: CapturedMail[];
  /** Waits until a message to `to` arrives (mail is sent after the response), then returns the latest. */
  waitFor(to: string, predicate?: (m: CapturedMail) => boolean, timeoutMs?: number): Promise<CapturedMail>;
  countTo(to: string): number;
  /** accept (default); refuse: answer each message 451 (a temporary failure); stall: take the data, never answer. */
  mode: 'accept' | 'refuse' | 'stall';
  /** Messages that reached the DATA stage in stall mode (the sender is waiting on us). */
  stalled: number;
  close(): Promise<void>;
}

export async function startMailCatcher(): Promise<MailCatcher> {
  const messages: CapturedMail[] = [];
  const state = { mode: 'accept' as MailCatcher['mode'], stalled: 0 };
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        if (state.mode === 'refuse')
          return callback(Object.assign(new Error('try again later'), { responseCode: 451 }));
        if (state.mode === 'stall') {
          state.stalled++;
          return;
        }
        messages.push(
          parseMail(
            Buffer.concat(chunks).toString('utf8'),
            session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
          ),
        );
        callback();
      });
    },
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const matches = (m: CapturedMail, to: string) => m.to.includes(to.toLowerCase());
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    async waitFor(to, predicate = () => true, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = messages.filter((m) => matches(m, to) && predicate(m)).at(-1);
        if (found) return found;
        if (Date.now() > deadline)
          throw new Error(
            `no mail to ${to} within ${timeoutMs} ms (have: ${messages.map((m) => `${m.to}:${m.subject}`).join(', ')})`,
          );
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    countTo: (to) => messages.filter((m) => matches(m, to)).length,
    get mode() {
      return state.mode;
    },
    set mode(m) {
      state.mode = m;
    },
    get stalled() {
      return state.stalled;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The token query parameter of the first link in a mail. */
export function linkToken(mail: CapturedMail): string {
  const m = /[?&]token=([^\s&"<>]+)/.exec(mail.text);
  if (!m) throw new Error(`no token link in mail: ${mail.text}`);
  return decodeURIComponent(m[1]!);
}
