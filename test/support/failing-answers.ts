// A real failure of an answer after the handler ran and its transaction committed: an onSend hook that throws, as
// a cookie or serialisation failure does, so the client gets a 500 where the work behind it is already done.
import type { FastifyInstance } from 'fastify';

export interface FailingAnswers {
  /** The next answer of this route (`POST /api/v1/setup`) fails. */
  failNext(route: string): void;
  /** How many armed failures fired. */
  fired(): number;
}

export function failingAnswers(app: FastifyInstance): FailingAnswers {
  const armed = new Set<string>();
  let fired = 0;
  app.addHook('onSend', (req, _reply, payload, done) => {
    if (armed.delete(`${req.method} ${req.routeOptions.url}`)) {
      fired++;
      return done(new Error('the answer failed after the handler (test fault)'));
    }
    done(null, payload);
  });
  return { failNext: (route) => armed.add(route), fired: () => fired };
}
