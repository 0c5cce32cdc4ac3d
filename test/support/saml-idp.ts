// A real SAML 2.0 identity provider on loopback for the SAML tests: samlify's IdP side with its own key pair
// (a self-signed certificate from `selfsigned`). It publishes its metadata, reads our AuthnRequest (HTTP-Redirect)
// with samlify, fetches our SP metadata from the request's Issuer (as IdPs do with a metadata URL), and answers with
// a response signed by samlify, in an auto-posting HTML form. `next` changes what the next response says (audience,
// recipient, times, which key signs) and `tamper` edits the signed XML: the attack variants of the tests.
// runSamlLogin drives the browser: /sso/login → IdP → form POST to the ACS (cross-site: no cookie) → 303 → return.
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inflateRawSync } from 'node:zlib';
import * as samlify from 'samlify';
import { generate } from 'selfsigned';
import { browserGet, parseFinalLocation, type CookieJar } from './oidc.js';

samlify.setSchemaValidator({ validate: async () => 'skipped' });

const EMAIL_FORMAT = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';
const PERSISTENT = 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent';

export interface SamlIdpUser {
  /** The NameID (persistent by default). */
  nameId: string;
  nameIdFormat?: string;
  email?: string;
  name?: string;
  /** AuthnContextClassRef of the AuthnStatement. */
  authnContext?: string;
}

/** What the next response says, where it differs from an honest answer to the request. */
export interface ResponseOverrides {
  audience?: string;
  recipient?: string;
  destination?: string;
  inResponseTo?: string | null;
  notBefore?: Date;
  notOnOrAfter?: Date;
  /** Sign with a key pair the metadata does not publish (same entity id). */
  signedByAnotherKey?: boolean;
  /** Edits the signed XML before it is posted. */
  tamper?: (xml: string) => string;
}

export interface TestSamlIdp {
  entityId: string;
  metadataUrl: string;
  readonly metadataXml: string;
  /** The account the next sign-in is completed as. */
  user: SamlIdpUser;
  /** Applies to the next response only. */
  next: ResponseOverrides;
  /** Response XML as posted, newest last. */
  readonly posted: string[];
  close(): Promise<void>;
}

async function keyPair(
  cn: string,
  validFor = {
    notBeforeDate: new Date(Date.now() - 86_400_000),
    notAfterDate: new Date(Date.now() + 365 * 86_400_000),
  },
) {
  const pems = await generate([{ name: 'commonName', value: cn }], { keySize: 2048, algorithm: 'sha256', ...validFor });
  return { privateKey: pems.private, cert: pems.cert };
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

export async function startSamlIdp(opts: { user?: SamlIdpUser; certNotAfter?: Date } = {}): Promise<TestSamlIdp> {
  const own = await keyPair(
    'Test SAML IdP',
    opts.certNotAfter
      ? { notBeforeDate: new Date(Date.now() - 2 * 365 * 86_400_000), notAfterDate: opts.certNotAfter }
      : undefined,
  );
  const attacker = await keyPair('Test SAML IdP');
  const state: { user: SamlIdpUser; next: ResponseOverrides } = {
    user: opts.user ?? { nameId: `id-${randomUUID()}`, email: 'someone@example.com', name: 'Someone' },
    next: {},
  };
  const posted: string[] = [];
  const spCache = new Map<string, ReturnType<typeof samlify.ServiceProvider>>();

  let origin = '';
  let entityId = '';
  const entity = (kp: { privateKey: string; cert: string }) =>
    samlify.IdentityProvider({
      entityID: entityId,
      signingCert: kp.cert,
      privateKey: kp.privateKey,
      nameIDFormat: [PERSISTENT],
      singleSignOnService: [{ Binding: samlify.Constants.namespace.binding.redirect, Location: `${origin}/sso` }],
      wantAuthnRequestsSigned: false,
    });

  async function spFor(issuer: string) {
    const hit = spCache.get(issuer);
    if (hit) return hit;
    const res = await fetch(issuer);
    if (!res.ok) throw new Error(`SP metadata at ${issuer} answered ${res.status}`);
    const sp = samlify.ServiceProvider({ metadata: await res.text() });
    spCache.set(issuer, sp);
    return sp;
  }

  async function answer(url: URL, res: ServerResponse) {
    const query = Object.fromEntries(url.searchParams);
    // samlify reads the request itself; its Issuer is read first, to find the SP's metadata.
    const issuer =
      /<(?:saml2?:)?Issuer[^>]*>([^<]+)</.exec(
        inflateRawSync(Buffer.from(query.SAMLRequest ?? '', 'base64')).toString('utf8'),
      )?.[1] ?? '';
    const sp = await spFor(issuer);
    const honest = entity(own);
    const info = await honest.parseLoginRequest(sp, 'redirect', { query, octetString: '' } as never);
    const next = state.next;
    state.next = {};
    const user = state.user;
    const signer = next.signedByAnotherKey ? entity(attacker) : honest;
    const now = new Date();
    const notBefore = (next.notBefore ?? new Date(now.getTime() - 5_000)).toISOString();
    const notOnOrAfter = (next.notOnOrAfter ?? new Date(now.getTime() + 5 * 60_000)).toISOString();
    const acs = sp.entityMeta.getAssertionConsumerService('post') as string;
    const requestId = (info.extract as { request?: { id?: string } }).request?.id ?? '';
    const attributes = [
      ...(user.email ? [['email', user.email]] : []),
      ...(user.name ? [['name', user.name]] : []),
    ].map(
      ([n, v]) =>
        `<saml:Attribute Name="${esc(n!)}" NameFormat="urn:oasis:names:tc:SAML:2.0:attrname-format:basic"><saml:AttributeValue xsi:type="xs:string">${esc(v!)}</saml:AttributeValue></saml:Attribute>`,
    );
    const authn = `<saml:AuthnStatement AuthnInstant="${now.toISOString()}" SessionIndex="_s${randomBytes(8).toString('hex')}"><saml:AuthnContext><saml:AuthnContextClassRef>${esc(user.authnContext ?? 'urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport')}</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>`;
    const out = await signer.createLoginResponse(sp, info as never, 'post', {}, (template: string) => {
      const id = `_r${randomBytes(16).toString('hex')}`;
      const values: Record<string, string | null> = {
        ID: id,
        AssertionID: `_a${randomBytes(16).toString('hex')}`,
        Destination: next.destination ?? acs,
        Audience: next.audience ?? sp.entityMeta.getEntityID(),
        SubjectRecipient: next.recipient ?? acs,
        Issuer: entityId,
        IssueInstant: now.toISOString(),
        StatusCode: samlify.Constants.StatusCode.Success,
        ConditionsNotBefore: notBefore,
        ConditionsNotOnOrAfter: notOnOrAfter,
        SubjectConfirmationDataNotOnOrAfter: notOnOrAfter,
        NameIDFormat: user.nameIdFormat ?? PERSISTENT,
        NameID: user.nameId,
        InResponseTo: next.inResponseTo === undefined ? requestId : next.inResponseTo,
      };
      const context = samlify.SamlLib.replaceTagsByValue(template, values)
        .replace('{AuthnStatement}', authn)
        .replace(
          '{AttributeStatement}',
          attributes.length ? `<saml:AttributeStatement>${attributes.join('')}</saml:AttributeStatement>` : '',
        );
      return { id, context };
    });
    let xml = Buffer.from(out.context, 'base64').toString('utf8');
    if (next.tamper) xml = next.tamper(xml);
    posted.push(xml);
    const relay = query.RelayState ? `<input type="hidden" name="RelayState" value="${esc(query.RelayState)}"/>` : '';
    const html = `<!doctype html><html><body onload="document.forms[0].submit()"><form method="post" action="${esc(acs)}"><input type="hidden" name="SAMLResponse" value="${Buffer.from(xml).toString('base64')}"/>${relay}</form></body></html>`;
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
  }

  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', origin);
    void (async () => {
      if (req.method === 'GET' && url.pathname === '/metadata') {
        const xml = entity(own).getMetadata();
        return void res.writeHead(200, { 'content-type': 'application/samlmetadata+xml' }).end(xml);
      }
      if (req.method === 'GET' && url.pathname === '/sso') return answer(url, res);
      res.writeHead(404).end();
    })().catch((err: Error) =>
      res.headersSent
        ? res.destroy(err)
        : res.writeHead(500, { 'content-type': 'text/plain' }).end(`idp failed: ${err.stack}`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  entityId = `${origin}/metadata`;

  return {
    entityId,
    metadataUrl: `${origin}/metadata`,
    get metadataXml() {
      return entity(own).getMetadata();
    },
    get user() {
      return state.user;
    },
    set user(u: SamlIdpUser) {
      state.user = u;
    },
    get next() {
      return state.next;
    },
    set next(n: ResponseOverrides) {
      state.next = n;
    },
    posted,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export const samlUser = (email: string, extra: Partial<SamlIdpUser> = {}): SamlIdpUser => ({
  nameId: `id-${randomUUID()}`,
  email,
  name: 'Federated User',
  ...extra,
});
export { EMAIL_FORMAT };

export interface SamlLoginResult {
  /** The final Location (APP_URL + path + #ssoCode=…, the link page, or APP_URL/login?error=…). */
  location: string | null;
  ssoCode: string | null;
  error: string | null;
  path: string | null;
  /** The SAMLResponse the IdP's form posted (base64), for replays. */
  samlResponse: string | null;
  jar: CookieJar;
}

/** POSTs a SAMLResponse to an instance's ACS as the IdP's form would (no cookie: a cross-site POST). */
export async function postToAcs(
  baseUrl: string,
  samlResponse: string,
  relayState?: string,
): Promise<{ status: number; location: string | null }> {
  const body = new URLSearchParams({ SAMLResponse: samlResponse, ...(relayState ? { RelayState: relayState } : {}) });
  const res = await fetch(new URL('/api/v1/sso/saml/acs', baseUrl), {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body,
  });
  await res.text();
  const raw = res.headers.get('location');
  return { status: res.status, location: raw === null ? null : new URL(raw, baseUrl).href };
}

/** Follows the ACS's answer in the browser (the 303 to the return hop carries the binding cookie), to the final Location. */
export async function followAcs(
  acs: { status: number; location: string | null },
  jar: CookieJar,
): Promise<Omit<SamlLoginResult, 'samlResponse'>> {
  let location = acs.location;
  if (acs.status === 303 && location) {
    const back = await browserGet(location, jar);
    if (back.status !== 302) throw new Error(`the return hop answered ${back.status}: ${back.text.slice(0, 300)}`);
    location = back.location;
  } else if (acs.status !== 302) throw new Error(`the ACS answered ${acs.status}`);
  return { location, ...(location ? parseFinalLocation(location) : { ssoCode: null, error: null, path: null }), jar };
}

/**
 * The whole SP-initiated chain in a headless browser: GET /sso/login/:ownerId → the IdP's SSO URL → its form → POST to
 * the ACS of `acsBase` (default the instance the browser started on) → 303 → GET /sso/saml/return → final Location.
 * `stopBeforeAcs` ends at the IdP's form (the SAMLResponse is returned, never posted).
 */
export async function runSamlLogin(
  app: { baseUrl: string },
  ownerId: string,
  opts: { redirect?: string; jar?: CookieJar; acsBase?: string; stopBeforeAcs?: boolean } = {},
): Promise<SamlLoginResult> {
  const jar: CookieJar = opts.jar ?? new Map();
  const start = new URL(`/api/v1/sso/login/${ownerId}`, app.baseUrl);
  if (opts.redirect !== undefined) start.searchParams.set('redirect', opts.redirect);
  const first = await browserGet(start, jar);
  if (first.status !== 302 || !first.location)
    throw new Error(`/sso/login answered ${first.status}: ${first.text.slice(0, 300)}`);
  if (new URL(first.location).origin === new URL(app.baseUrl).origin)
    return { location: first.location, ...parseFinalLocation(first.location), samlResponse: null, jar };
  const page = await browserGet(first.location, new Map());
  if (page.status !== 200) throw new Error(`the IdP answered ${page.status}: ${page.text.slice(0, 300)}`);
  const action = /<form method="post" action="([^"]+)"/.exec(page.text)?.[1]?.replace(/&amp;/g, '&');
  const samlResponse = /name="SAMLResponse" value="([^"]+)"/.exec(page.text)?.[1] ?? null;
  if (!action || !samlResponse) throw new Error(`no SAML form in the IdP's page: ${page.text.slice(0, 300)}`);
  if (opts.stopBeforeAcs) return { location: null, ssoCode: null, error: null, path: null, samlResponse, jar };
  const acsUrl = opts.acsBase ? new URL(new URL(action).pathname, opts.acsBase).href : action;
  const acs = await postToAcs(new URL(acsUrl).origin, samlResponse);
  return { ...(await followAcs(acs, jar)), samlResponse };
}
