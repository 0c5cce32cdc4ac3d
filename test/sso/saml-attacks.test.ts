// SAML responses that must be refused, each a named property, against the real in-process IdP (samlify signs; the
// attack variants edit its signed XML with a DOM library or change what it asserts). Every refusal ends in
// `${APP_URL}/login?error=<code>` and signs no one in.
import { randomBytes } from 'node:crypto';
import { DOMParser, XMLSerializer } from '@xmldom/xmldom';
import { and, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLogs, users } from '../../src/db/schema/index.js';
import { startApp, startPeer, type PeerApp, type TestApp } from '../support/app.js';
import { followAcs, postToAcs, runSamlLogin, samlUser, startSamlIdp, type TestSamlIdp } from '../support/saml-idp.js';
import { exchange, orgWithSamlProvider, ORG_TECHNICIAN_ROLE_ID, tenant } from './helpers.js';

const SAMLP = 'urn:oasis:names:tc:SAML:2.0:protocol';
const SAML = 'urn:oasis:names:tc:SAML:2.0:assertion';
const DS = 'http://www.w3.org/2000/09/xmldsig#';

let t: TestApp;
let peer: PeerApp;
let idp: TestSamlIdp;
let s: Awaited<ReturnType<typeof orgWithSamlProvider>>;

beforeAll(async () => {
  t = await startApp({ SSO_ALLOW_INSECURE_ISSUERS: 'true' });
  peer = await startPeer(t);
  idp = await startSamlIdp();
  s = await orgWithSamlProvider(t, idp, { autoProvision: true, defaultRoleId: ORG_TECHNICIAN_ROLE_ID });
});
afterAll(async () => {
  await peer?.close();
  await t?.close();
  await idp?.close();
});

const accounts = async (email: string) =>
  t.deps.db.select().from(users).where(sql`lower(${users.email}) = lower(${email})`);
const failures = (reason: string) =>
  t.deps.db
    .select()
    .from(auditLogs)
    .where(
      and(
        eq(auditLogs.action, 'auth.login.failed'),
        eq(auditLogs.resourceId, s.provider.id),
        sql`${auditLogs.details} ->> 'reason' = ${reason}`,
      ),
    );

/** A fresh person at the IdP; the sign-in is expected to fail with `code`, and no account may appear. */
async function refused(code: string, prepare: () => void = () => {}) {
  const who = samlUser(`u-${randomBytes(4).toString('hex')}@${s.domain}`);
  idp.user = who;
  prepare();
  const r = await runSamlLogin(t, s.org.id);
  expect(r.ssoCode).toBeNull();
  expect(r.location).toBe(`${t.deps.config.appUrl}/login?error=${code}`);
  expect(await accounts(who.email!)).toHaveLength(0);
  return r;
}

const dom = (xml: string) => new DOMParser().parseFromString(xml, 'text/xml') as unknown as Document;
const text = (doc: Document) => new XMLSerializer().serializeToString(doc as never);
const signedAssertion = (doc: Document) => doc.getElementsByTagNameNS(SAML, 'Assertion')[0]!;
const removeSignatures = (el: Element | Document) => {
  for (const sig of Array.from(el.getElementsByTagNameNS(DS, 'Signature'))) sig.parentNode!.removeChild(sig);
};
/** An unsigned copy of the assertion naming someone else (its NameID and e-mail). */
function forged(assertion: Element, victim: string, id?: string): Element {
  const copy = assertion.cloneNode(true) as Element;
  removeSignatures(copy);
  if (id) copy.setAttribute('ID', id);
  copy.getElementsByTagNameNS(SAML, 'NameID')[0]!.textContent = `victim-${victim}`;
  for (const v of Array.from(copy.getElementsByTagNameNS(SAML, 'AttributeValue')))
    if (v.textContent?.includes('@')) v.textContent = victim;
  return copy;
}

describe('the IdP is honest: the chain signs in (control for every refusal below)', () => {
  it('an untouched response from the IdP yields an exchange code', async () => {
    idp.user = samlUser(`control@${s.domain}`);
    const r = await runSamlLogin(t, s.org.id);
    expect(r.error).toBeNull();
    expect((await exchange(t, r.ssoCode!)).status).toBe(200);
  });
});

describe('an unsigned response and assertion are refused', () => {
  it('answers saml_response_invalid when every signature is removed', async () => {
    await refused('saml_response_invalid', () => {
      idp.next = {
        tamper: (xml) => {
          const d = dom(xml);
          removeSignatures(d);
          return text(d);
        },
      };
    });
    expect((await failures('saml_response_invalid')).length).toBeGreaterThan(0);
  });
});

describe('a signature by another key is refused', () => {
  it('answers saml_response_invalid for an assertion signed with a key the metadata does not publish (same entity id)', async () => {
    await refused('saml_response_invalid', () => {
      idp.next = { signedByAnotherKey: true };
    });
  });
});

describe('signature wrapping is refused', () => {
  it('a second, unsigned assertion beside the signed one', async () => {
    const victim = `victim-${randomBytes(3).toString('hex')}@${s.domain}`;
    await refused('saml_response_invalid', () => {
      idp.next = {
        tamper: (xml) => {
          const d = dom(xml);
          const signed = signedAssertion(d);
          signed.parentNode!.insertBefore(forged(signed, victim, `_evil${randomBytes(8).toString('hex')}`), signed);
          return text(d);
        },
      };
    });
    expect(await accounts(victim)).toHaveLength(0);
  });

  it('the signed assertion moved into Extensions, an unsigned one with its ID in its place', async () => {
    const victim = `victim-${randomBytes(3).toString('hex')}@${s.domain}`;
    await refused('saml_response_invalid', () => {
      idp.next = {
        tamper: (xml) => {
          const d = dom(xml);
          const signed = signedAssertion(d);
          const response = d.documentElement;
          const evil = forged(signed, victim);
          response.replaceChild(evil, signed);
          const ext = d.createElementNS(SAMLP, 'samlp:Extensions');
          ext.appendChild(signed);
          const issuer = response.getElementsByTagNameNS(SAML, 'Issuer')[0]!;
          response.insertBefore(ext, issuer.nextSibling);
          return text(d);
        },
      };
    });
    expect(await accounts(victim)).toHaveLength(0);
  });
});

describe('an assertion for another audience is refused', () => {
  it('answers saml_response_invalid when the Audience is another SP', async () => {
    await refused('saml_response_invalid', () => {
      idp.next = { audience: 'https://other-sp.example.com/saml/metadata' };
    });
  });
});

describe('a response for another recipient or destination is refused', () => {
  it('answers saml_response_invalid when SubjectConfirmationData Recipient is not our ACS', async () => {
    await refused('saml_response_invalid', () => {
      idp.next = { recipient: 'https://other-sp.example.com/saml/acs' };
    });
  });
  it('answers saml_response_invalid when the Response Destination is not our ACS', async () => {
    await refused('saml_response_invalid', () => {
      idp.next = { destination: 'https://other-sp.example.com/saml/acs' };
    });
  });
});

describe('time conditions hold', () => {
  it('an expired assertion (NotOnOrAfter ten minutes ago) is refused', async () => {
    await refused('saml_response_invalid', () => {
      idp.next = { notBefore: new Date(Date.now() - 20 * 60_000), notOnOrAfter: new Date(Date.now() - 10 * 60_000) };
    });
  });
  it('a not-yet-valid assertion (NotBefore in ten minutes) is refused', async () => {
    await refused('saml_response_invalid', () => {
      idp.next = { notBefore: new Date(Date.now() + 10 * 60_000), notOnOrAfter: new Date(Date.now() + 20 * 60_000) };
    });
  });
});

describe('a replayed assertion is refused on any instance (single use in the shared store)', () => {
  it('the response that signed in once answers assertion_replayed when posted again, to this instance and to another', async () => {
    idp.user = samlUser(`replay-${randomBytes(3).toString('hex')}@${s.domain}`);
    const first = await runSamlLogin(t, s.org.id);
    expect(first.ssoCode).toBeTruthy();
    for (const target of [peer.baseUrl, t.baseUrl]) {
      const again = await followAcs(await postToAcs(target, first.samlResponse!), first.jar);
      expect(again.location).toBe(`${t.deps.config.appUrl}/login?error=assertion_replayed`);
    }
    expect((await failures('assertion_replayed')).length).toBeGreaterThanOrEqual(2);
  });

  it('two posts of one response at once, on two instances: exactly one continues', async () => {
    idp.user = samlUser(`race-${randomBytes(3).toString('hex')}@${s.domain}`);
    const form = await runSamlLogin(t, s.org.id, { stopBeforeAcs: true });
    const response = form.samlResponse!;
    const answers = await Promise.all([postToAcs(t.baseUrl, response), postToAcs(peer.baseUrl, response)]);
    expect(answers.map((a) => a.status).sort()).toEqual([302, 303]);
    expect(answers.find((a) => a.status === 302)!.location).toBe(
      `${t.deps.config.appUrl}/login?error=assertion_replayed`,
    );
  });
});

describe('a response to a request we never sent is refused', () => {
  it('answers invalid_state for an unknown InResponseTo (signed by the IdP)', async () => {
    await refused('invalid_state', () => {
      idp.next = { inResponseTo: `_unknown${randomBytes(12).toString('hex')}` };
    });
  });
  it('answers invalid_state for an IdP-initiated response (no InResponseTo): off by default', async () => {
    await refused('invalid_state', () => {
      idp.next = { inResponseTo: null };
    });
  });
});

describe('XML with a DOCTYPE or an external entity is refused before any parser sees it', () => {
  it('answers saml_response_invalid for a signed response behind a DOCTYPE with an external entity', async () => {
    await refused('saml_response_invalid', () => {
      idp.next = {
        tamper: (xml) =>
          `<!DOCTYPE samlp:Response [<!ENTITY xxe SYSTEM "file:///etc/hostname">]>${xml.replace(/(<saml:NameID[^>]*>)[^<]*/, '$1&xxe;')}`,
      };
    });
  });

  it('refuses IdP metadata with a DOCTYPE (400 validation_failed), inline or fetched', async () => {
    const tn = await tenant(t);
    const res = await tn.api.post('/sso/providers', {
      type: 'saml',
      name: 'doctype',
      orgId: tn.org.id,
      metadataXml: `<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>${idp.metadataXml}`,
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_failed');
    expect(res.text).toMatch(/DOCTYPE/);
  });
});
