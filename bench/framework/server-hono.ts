/** Hono 4 on @hono/node-server (default adapter options). */
import type { Server } from 'node:http';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import {
  HELLO_BODY,
  HOST,
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

runMain(async () => {
  const port = parsePortArg();
  const verify = await createVerifier();
  const app = new Hono();

  app.get(ROUTE_HELLO, (c) => c.json(HELLO_BODY));

  app.get(ROUTE_PING, async (c) => {
    const sub = await verify(c.req.header('authorization'));
    if (sub === null) return c.json(UNAUTHORIZED_BODY, 401);
    const body: PingBody = { sub, ok: true };
    return c.json(body);
  });

  // Plain (non-TLS, HTTP/1.1) adapter, so the returned server is a node:http Server.
  const server = serve({ fetch: app.fetch, port, hostname: HOST }, () => announceListening(port)) as Server;

  closeOnSignal(
    () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  );
});
