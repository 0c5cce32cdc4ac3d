// `npx gatehouse dev-idp`: a small OpenID Provider on this machine, to try single sign-on end to end without an
// account at a real identity provider. One confidential client, PKCE required, and one user: every sign-in completes
// at once as that user (no password page). Development only: it listens on loopback and refuses to run in production.
// It uses oidc-provider, a development dependency, loaded when the command runs.
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface DevIdpOptions {
  port: number;
  /** The redirect URI of Gatehouse's callback: `<PUBLIC_URL>/api/v1/sso/callback`. */
  redirectUri: string;
  email: string;
  name: string;
  clientId?: string;
  clientSecret?: string;
}

export interface DevIdp {
  issuer: string;
  clientId: string;
  clientSecret: string;
  close(): Promise<void>;
}

/** The slice of oidc-provider this command uses (the package ships no types). */
interface Interaction {
  prompt: { name: string; details: { missingOIDCScope?: string[]; missingOIDCClaims?: string[] } };
  params: Record<string, unknown>;
  session?: { accountId?: string };
  grantId?: string;
}
interface Grant {
  addOIDCScope(scope: string): void;
  addOIDCClaims(claims: string[]): void;
  save(): Promise<string>;
}
interface Provider {
  callback(): (req: IncomingMessage, res: ServerResponse) => void;
  interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<Interaction>;
  interactionFinished(
    req: IncomingMessage,
    res: ServerResponse,
    result: Record<string, unknown>,
    opts: { mergeWithLastSubmission: boolean },
  ): Promise<void>;
  Grant: { new (o: { accountId?: string; clientId: string }): Grant; find(id: string): Promise<Grant | undefined> };
}
type ProviderClass = new (issuer: string, config: Record<string, unknown>) => Provider;

async function loadProvider(): Promise<ProviderClass> {
  // A computed name: the server build leaves the package out, it is only needed by this development command.
  const name = 'oidc-provider';
  try {
    return ((await import(name)) as { default: ProviderClass }).default;
  } catch {
    throw new Error('dev-idp needs the oidc-provider package (a development dependency): run `npm install` first.');
  }
}

export async function startDevIdp(o: DevIdpOptions): Promise<DevIdp> {
  const Provider = await loadProvider();
  const clientId = o.clientId ?? 'gatehouse-dev';
  const clientSecret = o.clientSecret ?? randomBytes(24).toString('base64url');
  const account = { sub: `dev-${randomUUID()}`, email: o.email, email_verified: true, name: o.name };
  const { privateKey } = await import('node:crypto').then((c) => c.generateKeyPairSync('rsa', { modulusLength: 2048 }));
  const jwk = { ...privateKey.export({ format: 'jwk' }), kid: `dev-idp-${randomBytes(4).toString('hex')}`, use: 'sig' };

  let provider: Provider | undefined;
  const server = createServer((req, res) => {
    if (!provider) return void res.writeHead(503).end();
    if (req.method === 'GET' && /^\/interaction\/[^/?]+$/.test((req.url ?? '').split('?')[0]!)) {
      void finish(provider, req, res).catch((err: Error) => {
        res.writeHead(500, { 'content-type': 'text/plain' }).end(`dev-idp: interaction failed: ${err.message}`);
      });
      return;
    }
    provider.callback()(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, '127.0.0.1', () => resolve());
  });
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  // The one user signs in, and consents, without a page: the point is to try Gatehouse's side of the flow.
  async function finish(p: Provider, req: IncomingMessage, res: ServerResponse) {
    const details = await p.interactionDetails(req, res);
    if (details.prompt.name === 'login')
      return p.interactionFinished(req, res, { login: { accountId: account.sub } }, { mergeWithLastSubmission: false });
    const missing = details.prompt.details;
    const grant =
      (details.grantId ? await p.Grant.find(details.grantId) : undefined) ??
      new p.Grant({ accountId: details.session?.accountId, clientId: String(details.params.client_id) });
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
    return p.interactionFinished(
      req,
      res,
      { consent: { grantId: await grant.save() } },
      { mergeWithLastSubmission: true },
    );
  }

  provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [o.redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    jwks: { keys: [jwk] },
    cookies: { keys: [randomBytes(32).toString('hex')] },
    pkce: { required: () => true },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    findAccount: async (_ctx: unknown, sub: string) =>
      sub === account.sub ? { accountId: sub, claims: async () => ({ ...account }) } : undefined,
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
  });

  return {
    issuer,
    clientId,
    clientSecret,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
