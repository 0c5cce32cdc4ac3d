// OpenID Providers on loopback for the SSO tests, and a headless browser for the redirect chain.
//  - startOidcProvider: a real OpenID Provider (oidc-provider 9) with one confidential client, PKCE required,
//    and interaction routes that complete login and consent at once as the "current user".
//  - startForgingIdp: a tiny hand-rolled provider (jose) whose token endpoint can hand out a forged ID token
//    (wrong key, audience, nonce, issuer, expired, unsigned); honest otherwise, so a failure is the forgery's.
//  - runSsoLogin: GET /sso/login/:ownerId → IdP authorize → interactions → /sso/callback → the final Location,
//    with fetch (manual redirects) and one cookie jar for the app and one for the IdP, as a browser would.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import Provider from 'oidc-provider';

export interface IdpUser {
  sub: string;
  email: string;
  email_verified: boolean;
  name?: string;
}

export const CALLBACK_PATH = '/api/v1/sso/callback';
export const callbackFor = (appBaseUrl: string) => `${appBaseUrl}${CALLBACK_PATH}`;

const b64url = (b: Buffer | string) => Buffer.from(b).toString('base64url');

async function listen(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ server: Server; origin: string }> {
  const server = createServer(handler);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return { server, origin: `http://127.0.0.1:${port}` };
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

async function signingKey(kid: string) {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  const privateJwk: JWK = { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' };
  const publicJwk: JWK = { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' };
  return { privateKey, privateJwk, publicJwk };
}

// ---------------------------------------------------------------------------------------------------------
// A real OpenID Provider.

export interface TestIdp {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The account the next sign-in at the IdP is completed as. */
  setUser(user: IdpUser): void;
  readonly user: IdpUser;
  /** The next interaction ends with this OAuth error (e.g. access_denied) instead of signing in. */
  denyNext(error?: string): void;
  /** Prompts completed by the automatic interaction route, in order ("login", "consent"). */
  readonly interactions: string[];
  /** The authentication methods (RFC 8176 amr) the next logins report, e.g. ['pwd', 'otp']; none by default. */
  amr: string[];
  close(): Promise<void>;
}

export async function startOidcProvider(opts: {
  redirectUris: string[];
  clientId?: string;
  clientSecret?: string;
  user?: IdpUser;
}): Promise<TestIdp> {
  const clientId = opts.clientId ?? `gatehouse-${randomBytes(4).toString('hex')}`;
  const clientSecret = opts.clientSecret ?? randomBytes(24).toString('base64url');
  const accounts = new Map<string, IdpUser>();
  let current: IdpUser = opts.user ?? {
    sub: `sub-${randomUUID()}`,
    email: 'someone@example.com',
    email_verified: true,
    name: 'Someone',
  };
  accounts.set(current.sub, current);
  let deny: string | null = null;
  let amr: string[] = [];
  const interactions: string[] = [];
  const { privateJwk } = await signingKey(`idp-${randomBytes(4).toString('hex')}`);

  let provider: Provider | undefined;
  const { server, origin } = await listen((req, res) => {
    if (!provider) return void res.writeHead(503).end();
    if (req.method === 'GET' && /^\/interaction\/[^/?]+$/.test((req.url ?? '').split('?')[0]!)) {
      void completeInteraction(provider, req, res).catch((err: Error) => {
        res.writeHead(500, { 'content-type': 'text/plain' }).end(`interaction failed: ${err.message}`);
      });
      return;
    }
    provider.callback()(req, res);
  });

  async function completeInteraction(p: Provider, req: IncomingMessage, res: ServerResponse) {
    const details = await p.interactionDetails(req, res);
    const prompt = details.prompt.name;
    interactions.push(prompt);
    if (deny) {
      const error = deny;
      deny = null;
      return p.interactionFinished(
        req,
        res,
        { error, error_description: 'denied by the test' },
        { mergeWithLastSubmission: false },
      );
    }
    if (prompt === 'login')
      return p.interactionFinished(
        req,
        res,
        { login: { accountId: current.sub, ...(amr.length ? { amr } : {}) } },
        { mergeWithLastSubmission: false },
      );
    if (prompt === 'consent') {
      const missing = details.prompt.details as {
        missingOIDCScope?: string[];
        missingOIDCClaims?: string[];
        missingResourceScopes?: Record<string, string[]>;
      };
      const grant =
        (details.grantId ? await p.Grant.find(details.grantId) : undefined) ??
        new p.Grant({ accountId: details.session?.accountId, clientId: String(details.params.client_id) });
      if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
      if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
      for (const [resource, scopes] of Object.entries(missing.missingResourceScopes ?? {}))
        grant.addResourceScope(resource, scopes.join(' '));
      return p.interactionFinished(
        req,
        res,
        { consent: { grantId: await grant.save() } },
        { mergeWithLastSubmission: true },
      );
    }
    throw new Error(`unexpected prompt ${prompt}`);
  }

  provider = new Provider(origin, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: opts.redirectUris,
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    jwks: { keys: [privateJwk] },
    cookies: { keys: [randomBytes(32).toString('hex')] },
    pkce: { required: () => true },
    // amr (with openid): in the ID token when the login reported one (the `amr` setter); only listed claims are issued.
    claims: { openid: ['sub', 'amr'], email: ['email', 'email_verified'], profile: ['name'] },
    findAccount: async (_ctx: unknown, sub: string) => {
      const account = accounts.get(sub);
      if (!account) return undefined;
      return { accountId: sub, claims: async () => ({ ...account }) };
    },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    ttl: { AccessToken: 600, AuthorizationCode: 60, IdToken: 600, Interaction: 600, Session: 600, Grant: 600 },
    renderError: async (ctx: { type: string; body: unknown }, out: unknown) => {
      ctx.type = 'json';
      ctx.body = out;
    },
  });

  return {
    issuer: origin,
    clientId,
    clientSecret,
    setUser(user) {
      current = user;
      accounts.set(user.sub, user);
    },
    get user() {
      return current;
    },
    denyNext(error = 'access_denied') {
      deny = error;
    },
    interactions,
    get amr() {
      return amr;
    },
    set amr(v: string[]) {
      amr = v;
    },
    close: () => closeServer(server),
  };
}

// ---------------------------------------------------------------------------------------------------------
// A hand-rolled provider that can forge its ID token.

export type ForgeryMode =
  | 'honest'
  | 'wrong_key'
  | 'wrong_audience'
  | 'wrong_nonce'
  | 'wrong_issuer'
  | 'expired'
  | 'unsigned';

export interface ForgingIdp {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** How the next ID tokens are made. */
  mode: ForgeryMode;
  user: IdpUser;
  /** ID tokens handed out by the token endpoint, newest last. */
  readonly issuedIdTokens: string[];
  close(): Promise<void>;
}

export async function startForgingIdp(opts: { redirectUris: string[]; user?: IdpUser }): Promise<ForgingIdp> {
  const clientId = `forging-${randomBytes(4).toString('hex')}`;
  const clientSecret = randomBytes(24).toString('base64url');
  const kid = `k-${randomBytes(4).toString('hex')}`;
  const published = await signingKey(kid);
  const attacker = await signingKey(kid); // same kid, different key: only the signature check can catch it
  const codes = new Map<string, { nonce: string | null; challenge: string; redirectUri: string; scope: string }>();
  const accessTokens = new Set<string>();
  const issuedIdTokens: string[] = [];

  const state: { mode: ForgeryMode; user: IdpUser } = {
    mode: 'honest',
    user: opts.user ?? {
      sub: `sub-${randomUUID()}`,
      email: 'someone@example.com',
      email_verified: true,
      name: 'Someone',
    },
  };

  const json = (res: ServerResponse, status: number, body: unknown) =>
    res
      .writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' })
      .end(JSON.stringify(body));

  async function idToken(issuer: string, nonce: string | null): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    const claims: Record<string, unknown> = {
      iss: state.mode === 'wrong_issuer' ? 'http://127.0.0.1:1/not-the-issuer' : issuer,
      sub: state.user.sub,
      aud: state.mode === 'wrong_audience' ? 'some-other-client' : clientId,
      iat: state.mode === 'expired' ? now - 3600 : now,
      exp: state.mode === 'expired' ? now - 1800 : now + 300,
      ...(nonce !== null
        ? { nonce: state.mode === 'wrong_nonce' ? randomBytes(16).toString('base64url') : nonce }
        : {}),
    };
    if (state.mode === 'unsigned')
      return `${b64url(JSON.stringify({ alg: 'none', typ: 'JWT' }))}.${b64url(JSON.stringify(claims))}.`;
    const key = state.mode === 'wrong_key' ? attacker.privateKey : published.privateKey;
    return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid, typ: 'JWT' }).sign(key);
  }

  async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
  }

  let issuer = '';
  const { server, origin } = await listen((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', issuer);
      if (req.method === 'GET' && url.pathname === '/.well-known/openid-configuration') {
        return json(res, 200, {
          issuer,
          authorization_endpoint: `${issuer}/authorize`,
          token_endpoint: `${issuer}/token`,
          userinfo_endpoint: `${issuer}/userinfo`,
          jwks_uri: `${issuer}/jwks`,
          response_types_supported: ['code'],
          subject_types_supported: ['public'],
          id_token_signing_alg_values_supported: ['RS256'],
          code_challenge_methods_supported: ['S256'],
          token_endpoint_auth_methods_supported: ['client_secret_post'],
          scopes_supported: ['openid', 'email', 'profile'],
        });
      }
      if (req.method === 'GET' && url.pathname === '/jwks') return json(res, 200, { keys: [published.publicJwk] });
      if (req.method === 'GET' && url.pathname === '/authorize') {
        const q = url.searchParams;
        const redirectUri = q.get('redirect_uri') ?? '';
        if (q.get('client_id') !== clientId || !opts.redirectUris.includes(redirectUri))
          return json(res, 400, { error: 'invalid_request' });
        if (q.get('response_type') !== 'code' || q.get('code_challenge_method') !== 'S256' || !q.get('code_challenge'))
          return json(res, 400, { error: 'invalid_request' });
        const code = randomBytes(24).toString('base64url');
        codes.set(code, {
          nonce: q.get('nonce'),
          challenge: q.get('code_challenge')!,
          redirectUri,
          scope: q.get('scope') ?? '',
        });
        const back = new URL(redirectUri);
        back.searchParams.set('code', code);
        if (q.get('state') !== null) back.searchParams.set('state', q.get('state')!);
        return res.writeHead(302, { location: back.href }).end();
      }
      if (req.method === 'POST' && url.pathname === '/token') {
        const f = await readForm(req);
        const grant = codes.get(f.get('code') ?? '');
        codes.delete(f.get('code') ?? '');
        if (f.get('client_id') !== clientId || f.get('client_secret') !== clientSecret)
          return json(res, 401, { error: 'invalid_client' });
        if (f.get('grant_type') !== 'authorization_code' || !grant || f.get('redirect_uri') !== grant.redirectUri)
          return json(res, 400, { error: 'invalid_grant' });
        const verifier = f.get('code_verifier') ?? '';
        if (b64url(createHash('sha256').update(verifier).digest()) !== grant.challenge)
          return json(res, 400, { error: 'invalid_grant', error_description: 'PKCE' });
        const accessToken = randomBytes(24).toString('base64url');
        accessTokens.add(accessToken);
        const token = await idToken(issuer, grant.nonce);
        issuedIdTokens.push(token);
        return json(res, 200, {
          access_token: accessToken,
          token_type: 'Bearer',
          expires_in: 300,
          scope: grant.scope,
          id_token: token,
        });
      }
      if (url.pathname === '/userinfo') {
        const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
        if (!token || !accessTokens.has(token)) return json(res, 401, { error: 'invalid_token' });
        return json(res, 200, { ...state.user });
      }
      return json(res, 404, { error: 'not_found' });
    })().catch((err: Error) => json(res, 500, { error: 'server_error', error_description: err.message }));
  });
  issuer = origin;

  return {
    issuer,
    clientId,
    clientSecret,
    get mode() {
      return state.mode;
    },
    set mode(m: ForgeryMode) {
      state.mode = m;
    },
    get user() {
      return state.user;
    },
    set user(u: IdpUser) {
      state.user = u;
    },
    issuedIdTokens,
    close: () => closeServer(server),
  };
}

// ---------------------------------------------------------------------------------------------------------
// The browser.

export type CookieJar = Map<string, string>;

function absorbCookies(jar: CookieJar, res: Response) {
  for (const c of res.headers.getSetCookie()) {
    const [pair] = c.split(';');
    const i = pair!.indexOf('=');
    const name = pair!.slice(0, i).trim();
    const value = pair!.slice(i + 1).trim();
    if (!value || /max-age=0|expires=thu, 01 jan 1970/i.test(c)) jar.delete(name);
    else jar.set(name, value);
  }
}

const cookieHeader = (jar: CookieJar) => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');

/** One browser step: GET with the jar, no redirect following. */
export async function browserGet(
  url: string | URL,
  jar: CookieJar,
): Promise<{ status: number; location: string | null; text: string; headers: Headers }> {
  const res = await fetch(url, { redirect: 'manual', headers: jar.size ? { cookie: cookieHeader(jar) } : {} });
  absorbCookies(jar, res);
  const raw = res.headers.get('location');
  const text = await res.text().catch(() => '');
  return { status: res.status, location: raw === null ? null : new URL(raw, url).href, text, headers: res.headers };
}

export interface SsoLoginOptions {
  /** The `redirect` query parameter of /sso/login. */
  redirect?: string;
  /** Signs in at this IdP as this user (sets the IdP's current user first). */
  idp?: { setUser(u: IdpUser): void } | { user: IdpUser };
  user?: IdpUser;
  /** The app's cookie jar (the browser); a fresh one by default. */
  jar?: CookieJar;
  /** Runs when the IdP sends the browser back, before the callback is requested. */
  beforeCallback?: (callbackUrl: URL, jar: CookieJar) => unknown;
  /** Stop before the callback (returns callbackUrl; location is null). */
  stopBeforeCallback?: boolean;
}

export interface SsoLoginResult {
  /** The final Location: APP_URL + path + #ssoCode=…, or APP_URL/login?error=… */
  location: string | null;
  ssoCode: string | null;
  error: string | null;
  /** The application path the browser lands on (before the fragment). */
  path: string | null;
  /** Where the IdP sent the browser back (the callback with code and state). */
  callbackUrl: string | null;
  /** The service_sso_binding cookie set by /sso/login. */
  binding: string | null;
  jar: CookieJar;
  /** Every URL requested, in order. */
  visited: string[];
}

export const BINDING_COOKIE = 'service_sso_binding';

export function parseFinalLocation(location: string): Pick<SsoLoginResult, 'ssoCode' | 'error' | 'path'> {
  const u = new URL(location);
  const fragment = new URLSearchParams(u.hash.replace(/^#/, ''));
  const ssoCode = fragment.get('ssoCode');
  return {
    ssoCode,
    error: u.pathname === '/login' ? u.searchParams.get('error') : null,
    path: ssoCode ? `${u.pathname}${u.search}` : null,
  };
}

/**
 * Drives the whole redirect chain headless. `app` is the instance the browser starts on; the IdP sends the
 * browser back to the registered redirect URI (PUBLIC_URL/api/v1/sso/callback).
 */
export async function runSsoLogin(
  app: { baseUrl: string },
  ownerId: string,
  opts: SsoLoginOptions = {},
): Promise<SsoLoginResult> {
  if (opts.user && opts.idp) {
    if ('setUser' in opts.idp) opts.idp.setUser(opts.user);
    else opts.idp.user = opts.user;
  }
  const jar: CookieJar = opts.jar ?? new Map();
  const idpJar: CookieJar = new Map();
  const visited: string[] = [];
  const appOrigin = new URL(app.baseUrl).origin;
  const done = (location: string | null, callbackUrl: string | null): SsoLoginResult => ({
    location,
    ...(location ? parseFinalLocation(location) : { ssoCode: null, error: null, path: null }),
    callbackUrl,
    binding: jar.get(BINDING_COOKIE) ?? binding,
    jar,
    visited,
  });

  const start = new URL(`/api/v1/sso/login/${ownerId}`, app.baseUrl);
  if (opts.redirect !== undefined) start.searchParams.set('redirect', opts.redirect);
  visited.push(start.href);
  const first = await browserGet(start, jar);
  const binding = jar.get(BINDING_COOKIE) ?? null;
  if (first.status !== 302 || !first.location)
    throw new Error(`/sso/login answered ${first.status}: ${first.text.slice(0, 500)}`);
  if (new URL(first.location).origin === appOrigin) return done(first.location, null); // refused before the IdP

  let next = first.location;
  for (let hops = 0; ; hops++) {
    if (hops > 15) throw new Error(`too many redirects: ${visited.join(' → ')}`);
    const u = new URL(next);
    if (u.pathname === CALLBACK_PATH) {
      if (opts.stopBeforeCallback) return done(null, next);
      await opts.beforeCallback?.(u, jar);
      visited.push(next);
      const cb = await browserGet(u, jar);
      if (cb.status !== 302 || !cb.location)
        throw new Error(`callback answered ${cb.status}: ${cb.text.slice(0, 500)}`);
      return done(cb.location, next);
    }
    if (u.origin === appOrigin) throw new Error(`unexpected app URL in the chain: ${next}`);
    visited.push(next);
    const step = await browserGet(u, idpJar);
    if (step.status < 300 || step.status >= 400 || !step.location) {
      throw new Error(`IdP step ${u.pathname} answered ${step.status}: ${step.text.slice(0, 500)}`);
    }
    next = step.location;
  }
}

/** Replays a callback URL in a browser holding the given cookies. */
export async function replayCallback(callbackUrl: string, jar: CookieJar): Promise<SsoLoginResult> {
  const res = await browserGet(callbackUrl, jar);
  if (res.status !== 302 || !res.location)
    throw new Error(`callback answered ${res.status}: ${res.text.slice(0, 500)}`);
  return {
    location: res.location,
    ...parseFinalLocation(res.location),
    callbackUrl,
    binding: jar.get(BINDING_COOKIE) ?? null,
    jar,
    visited: [callbackUrl],
  };
}
