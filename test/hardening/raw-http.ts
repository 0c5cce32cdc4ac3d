// A raw HTTP/1.1 exchange over a socket: for requests a fetch client will not send (a 20 KiB header, bytes that are
// not UTF-8 in the path, an unknown method) and for bodies written slowly or in pieces.
import net from 'node:net';

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: unknown;
  text: string;
}

function parse(raw: Buffer): RawAnswer | null {
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const [statusLine, ...lines] = raw.subarray(0, end).toString('latin1').split('\r\n');
  const headers: Record<string, string> = {};
  for (const l of lines) {
    const i = l.indexOf(':');
    headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
  }
  const length = Number(headers['content-length'] ?? NaN);
  const rest = raw.subarray(end + 4);
  if (Number.isFinite(length) && rest.length < length) return null;
  const text = rest.subarray(0, Number.isFinite(length) ? length : undefined).toString('utf8');
  let body: unknown = null;
  try {
    body = JSON.parse(text);
  } catch {
    body = null;
  }
  return { status: Number(statusLine!.split(' ')[1]), headers, body, text };
}

/**
 * Writes `head` then each body piece (waiting for drain), and resolves with the first complete answer, even when
 * the server answers and closes before the whole body was written (as it should for a body over the limit).
 */
export function rawExchange(
  baseUrl: string,
  head: string | Buffer,
  body: Iterable<Buffer | string> = [],
  timeoutMs = 30_000,
): Promise<RawAnswer> {
  const { port, hostname } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    let got = Buffer.alloc(0);
    let done = false;
    const finish = (err?: Error) => {
      if (done) return;
      const answer = parse(got);
      if (!answer && !err) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      if (answer) resolve(answer);
      else reject(err);
    };
    const timer = setTimeout(() => finish(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    const socket = net.connect(Number(port), hostname === 'localhost' ? '127.0.0.1' : hostname, async () => {
      try {
        socket.write(head);
        for (const piece of body) {
          if (done || socket.destroyed) return;
          if (!socket.write(piece)) await new Promise((r) => socket.once('drain', r).once('close', r));
        }
      } catch {
        // the server closed the connection early: its answer is what counts
      }
    });
    socket.on('data', (d: Buffer) => {
      got = Buffer.concat([got, d]);
      finish();
    });
    socket.on('error', () => finish(new Error('connection failed before an answer')));
    socket.on('close', () => finish(new Error('connection closed without an answer')));
  });
}
