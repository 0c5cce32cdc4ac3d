// Work that must follow a request only once its answer went out with a 2xx status: the mail about a new sign-in,
// the closing of a single-use link. An answer that failed after the handler (a hook, the serializer, a cookie)
// leaves nothing behind that tells the person they succeeded, so none of this happens and they can try again.
import { AsyncResource } from 'node:async_hooks';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

type Action = () => Promise<unknown>;

const pending = new WeakMap<FastifyRequest, Action[]>();

/**
 * Runs `action` after this request's answer was sent with a 2xx status, in the request's context (its row-security
 * holder); never when the answer failed. A failure of the action is logged, never answered.
 */
export function onceAnswered(reply: FastifyReply, action: Action): void {
  const bound = AsyncResource.bind(action);
  const list = pending.get(reply.request);
  if (list) list.push(bound);
  else pending.set(reply.request, [bound]);
}

async function runAll(actions: Action[], log: FastifyBaseLogger): Promise<void> {
  for (const action of actions) {
    try {
      await action();
    } catch (err) {
      log.error({ err }, 'work after the answer failed');
    }
  }
}

/** The onResponse hook that runs the actions (a callback hook: it costs nothing on requests that queued none). */
export function installAfterAnswer(app: FastifyInstance): void {
  const running = new Set<Promise<unknown>>();
  app.addHook('onResponse', (req, reply, done) => {
    const actions = pending.get(req);
    if (actions) {
      pending.delete(req);
      if (reply.statusCode >= 200 && reply.statusCode < 300) {
        const run = runAll(actions, req.log).finally(() => running.delete(run));
        running.add(run);
      }
    }
    done();
  });
  // A graceful shutdown finishes this work too, before the database closes.
  app.addHook('onClose', async () => {
    await Promise.all([...running]);
  });
}
