// 405 for a known path asked with a method it does not serve (RFC 9110 15.5.6): the answer names the methods in
// `Allow`. The route table is the one Fastify registered (app.registeredRoutes), matched as find-my-way does for
// static and `:param` segments. Wildcard routes (the console's `GET /*` fallback, static assets) are catch-alls, not
// resources: they do not make every unknown path a 405.

interface Matcher {
  method: string;
  test: RegExp;
}

const escapeRegExp = (s: string) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&');

function compile(url: string): RegExp {
  const path = url.length > 1 ? url.replace(/\/+$/, '') : url;
  const source = path
    .split('/')
    .map((seg) => (seg.startsWith(':') ? '[^/]+' : escapeRegExp(seg)))
    .join('/');
  return new RegExp(`^${source}/?$`);
}

export function methodTable(routes: () => { method: string; url: string }[]) {
  let compiled: Matcher[] = [];
  let size = -1;
  /** Methods served at `path` (the request path without its query), HEAD wherever GET is; empty when none. */
  return (path: string): string[] => {
    const all = routes();
    if (all.length !== size) {
      compiled = all.filter((r) => !r.url.includes('*')).map((r) => ({ method: r.method, test: compile(r.url) }));
      size = all.length;
    }
    const methods = new Set(compiled.filter((m) => m.test.test(path)).map((m) => m.method));
    if (methods.has('GET')) methods.add('HEAD');
    return [...methods].sort();
  };
}
