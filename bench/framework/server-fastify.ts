/** Fastify 5, default options (no logger), no response schema: idiomatic minimal app. */
import Fastify from 'fastify';
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
  const app = Fastify({ logger: false });

  app.get(ROUTE_HELLO, async () => HELLO_BODY);

  app.get(ROUTE_PING, async (request, reply) => {
    const sub = await verify(request.headers.authorization);
    if (sub === null) return reply.code(401).send(UNAUTHORIZED_BODY);
    const body: PingBody = { sub, ok: true };
    return body;
  });

  closeOnSignal(() => app.close());

  await app.listen({ port, host: HOST });
  announceListening(port);
});
