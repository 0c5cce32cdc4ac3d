// GET /auth/memberships: the places switch-context can move a session to, named, the current one marked.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ORG_ADMIN_ROLE_ID, SYSTEM_ROLES } from '../../src/modules/roles/catalog.js';
import { startApp, type TestApp } from '../support/app.js';
import { addOrgMember, addPartnerMember, createOrg, createPartner, createUser } from '../support/fixtures.js';
import { PASSWORD, signIn } from './helpers.js';

let t: TestApp;
const PARTNER_TECH = SYSTEM_ROLES[1].id;

beforeAll(async () => {
  t = await startApp({ RATE_LIMIT_LOGIN: '1000/900' });
});
afterAll(async () => {
  await t?.close();
});

describe('a user lists their own memberships, and only theirs', () => {
  it('names the partner, organisation and role of each; marks the one the session acts in; follows a switch', async () => {
    const partner = await createPartner(t, 'Acme MSP');
    const org = await createOrg(t, partner.id, 'Contoso Dental');
    const user = await createUser(t, { password: PASSWORD });
    await addPartnerMember(t, { partnerId: partner.id, userId: user.id, roleId: PARTNER_TECH });
    await addOrgMember(t, { orgId: org.id, userId: user.id, roleId: ORG_ADMIN_ROLE_ID });
    // Someone else's membership elsewhere must not show.
    const other = await createUser(t, { password: PASSWORD });
    await addOrgMember(t, { orgId: (await createOrg(t, (await createPartner(t)).id)).id, userId: other.id });

    const api = await signIn(t, user.email);
    const res = await api.get('/auth/memberships');
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([
      expect.objectContaining({
        scope: 'partner',
        partnerId: partner.id,
        partnerName: 'Acme MSP',
        orgId: null,
        orgName: null,
        roleId: PARTNER_TECH,
        roleName: 'Partner Technician',
        current: true,
      }),
      expect.objectContaining({
        scope: 'organization',
        partnerId: partner.id,
        partnerName: 'Acme MSP',
        orgId: org.id,
        orgName: 'Contoso Dental',
        roleId: ORG_ADMIN_ROLE_ID,
        roleName: 'Organization Admin',
        current: false,
      }),
    ]);

    const switched = await api.post('/auth/switch-context', { orgId: org.id });
    expect(switched.status).toBe(200);
    const after = await api.withToken(switched.body.accessToken).get('/auth/memberships');
    expect(after.body.data.map((m: { scope: string; current: boolean }) => [m.scope, m.current])).toEqual([
      ['partner', false],
      ['organization', true],
    ]);
  });

  it('answers an empty list to an account without memberships, and 401 without a token', async () => {
    const loner = await createUser(t, { password: PASSWORD });
    const api = await signIn(t, loner.email);
    expect((await api.get('/auth/memberships')).body).toEqual({ data: [] });
    expect((await t.client().get('/auth/memberships')).status).toBe(401);
  });
});
