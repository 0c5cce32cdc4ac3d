/** Raw `node:http` server: the ceiling the frameworks are measured against. */
import { createServer, type ServerResponse } from 'node:http';
import {
  HELLO_BODY,
  HOST,
  NOT_FOUND_BODY,
  ROUTE_HELLO,
  ROUTE_PING,
  UNAUTHORIZED_BODY,
  announceListening,
  closeOnSignal,
  createVerifier,
  parsePortArg,
  runMain,
  type PingBody,
} from './common.js';

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const payload = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(payload),
  });
  res.end(payload);
}

runMain(async () => {
  const port = parsePortArg();
  const verify = await createVerifier();

  const server = createServer((req, res) => {
    if (req.method !== 'GET') return sendJson(res, 404, NOT_FOUND_BODY);
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);

    if (path === ROUTE_HELLO) return sendJson(res, 200, HELLO_BODY);
    if (path !== ROUTE_PING) return sendJson(res, 404, NOT_FOUND_BODY);

    verify(req.headers.authorization).then(
      (sub) => {
        if (sub === null) return sendJson(res, 401, UNAUTHORIZED_BODY);
        const body: PingBody = { sub, ok: true };
        sendJson(res, 200, body);
      },
      () => sendJson(res, 500, { error: 'internal', ok: false }),
    );
  });

  closeOnSignal(
    () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  );

  server.listen(port, HOST, () => announceListening(port));
});
