// The customer's view: every partner member who can reach the organisation (standing access, and
// just-in-time grants in force), what the partner's staff did there, and the organisation's mspAccess and jitApproval
// settings with what each means. An organisation admin sees their own organisation; a partner member picks one.
import { Alert, Badge, Button, Group, Radio, Stack, Table, Text, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, call } from '../../api/client';
import { CursorPager, useCursorList } from '../../components/CursorPager';
import { DataTable } from '../../components/DataTable';
import { Loaded } from '../../components/Loaded';
import { explain } from '../../lib/errors';
import { done, when } from '../onboarding/common';
import { NoOrganisation, useOrgChoice } from '../../hooks/org-choice';
import { can, useMe } from '../../hooks/me';
import { APPROVAL_WORDS } from './common';

type MspAccess = 'allowed' | 'approval_required' | 'suspended';
type JitApproval = keyof typeof APPROVAL_WORDS;

const MSP_WORDS: Record<MspAccess, { label: string; text: string }> = {
  allowed: {
    label: 'Allowed',
    text: 'Partner staff with standing access reach the organisation as their role allows (the default).',
  },
  approval_required: {
    label: 'Approval required',
    text: 'No partner member reaches the organisation without a just-in-time grant approved by one of its own admins.',
  },
  suspended: {
    label: 'Suspended',
    text: 'No partner member reaches the organisation, not even a Partner Admin. Only the partner’s break-glass account may, with a reason, and every admin of both sides is told.',
  },
};
const JIT_TEXT: Record<JitApproval, string> = {
  auto: 'An eligible partner member’s request opens access at once (audited).',
  partner_admin: 'A Partner Admin approves each request.',
  customer_admin: 'One of this organisation’s admins approves each request (here, under Requests and grants).',
};

export default function CustomerView() {
  const choice = useOrgChoice();
  if (choice.orgsError)
    return (
      <Alert color="red" role="alert">
        {explain(choice.orgsError)}
      </Alert>
    );
  if (choice.noOrg) return <NoOrganisation />;
  return (
    <Stack>
      <Text size="sm" maw={720}>
        Who from the managing partner can reach this organisation, how, and what they did here. The organisation decides
        how far the partner’s staff get in.
      </Text>
      {choice.picker}
      {choice.orgId && <OrgView key={choice.orgId} orgId={choice.orgId} />}
    </Stack>
  );
}

function OrgView({ orgId }: { orgId: string }) {
  const me = useMe();
  const { pages, list } = useCursorList(['access', 'partner-access', orgId], (cursor) =>
    call(
      api.GET('/api/v1/orgs/organizations/{id}/partner-access', {
        params: { path: { id: orgId }, query: { cursor, limit: 50 } },
      }),
    ),
  );
  const grants = useQuery({
    queryKey: ['access', 'grants'],
    queryFn: () => call(api.GET('/api/v1/access/grants', { params: { query: { state: 'active', limit: 200 } } })),
  });
  const audit = can(me.data, 'audit:read');
  const activity = useCursorList(
    ['access', 'partner-activity', orgId],
    (cursor) =>
      call(
        api.GET('/api/v1/orgs/organizations/{id}/partner-activity', {
          params: { path: { id: orgId }, query: { cursor, limit: 50 } },
        }),
      ),
    { enabled: audit },
  );
  const granted = (grants.data?.data ?? []).filter((g) => g.orgId === orgId);
  return (
    <Stack>
      <Settings orgId={orgId} mspAccess={list.data?.mspAccess} />
      <Title order={2} size="h4">
        Standing access
      </Title>
      <Loaded
        q={list}
        what="partner access"
        size="sm"
        isEmpty={(d) => d.data.length === 0}
        empty="No partner member holds standing access to this organisation."
      >
        {(d) => (
          <DataTable
            testId="partner-access"
            columns={['Member', 'Role', 'How', 'Until', 'Reaches it now']}
            hidden="Notes"
            rows={d.data.map((x) => ({ ...x, id: x.userId }))}
          >
            {(x) => (
              <>
                <Table.Td>
                  {x.name}{' '}
                  <Text span size="xs" c="dimmed">
                    {x.email}
                  </Text>
                </Table.Td>
                <Table.Td>{x.roleName}</Table.Td>
                <Table.Td>
                  {x.orgAccess === 'all' ? 'Standing: every organisation' : 'Standing: selected organisations'}
                </Table.Td>
                <Table.Td>{x.until ? when(x.until) : 'No end'}</Table.Td>
                <Table.Td>
                  {x.reachesNow ? 'Yes' : `No (held out by ${x.blockedBy?.replace(/_/g, ' ') ?? 'policy'})`}
                </Table.Td>
                <Table.Td>
                  {x.breakGlass && (
                    <Badge variant="outline" color="dark">
                      Break-glass account
                    </Badge>
                  )}
                </Table.Td>
              </>
            )}
          </DataTable>
        )}
      </Loaded>
      <CursorPager pages={pages} next={list.data?.nextCursor} />
      <Title order={2} size="h4">
        The partner’s service accounts
      </Title>
      <Loaded
        q={list}
        what="service accounts"
        size="sm"
        isEmpty={(d) => d.serviceAccounts.length === 0}
        empty="No service account of the partner reaches this organisation."
      >
        {(d) => (
          <DataTable
            testId="partner-service-accounts"
            columns={['Service account', 'Role', 'Made for', 'Last used', 'Reaches it now']}
            hidden="Notes"
            rows={d.serviceAccounts}
          >
            {(a) => (
              <>
                <Table.Td>{a.name}</Table.Td>
                <Table.Td>{a.roleName}</Table.Td>
                <Table.Td>{a.owner === 'partner' ? 'The partner (every organisation)' : 'This organisation'}</Table.Td>
                <Table.Td>{a.lastUsedAt ? when(a.lastUsedAt) : 'Never'}</Table.Td>
                <Table.Td>
                  {a.reachesNow
                    ? 'Yes'
                    : a.disabled
                      ? 'No (disabled)'
                      : `No (held out by ${a.blockedBy?.replace(/_/g, ' ') ?? 'policy'})`}
                </Table.Td>
                <Table.Td />
              </>
            )}
          </DataTable>
        )}
      </Loaded>
      <Title order={2} size="h4">
        Granted now (just-in-time)
      </Title>
      <Loaded
        q={grants}
        what="grants"
        size="sm"
        isEmpty={() => granted.length === 0}
        empty="No just-in-time grant to this organisation is in force."
      >
        {() => (
          <DataTable
            testId="org-grants"
            columns={['Member', 'Until', 'Approval', 'Reason', 'Ticket']}
            hidden="Site"
            rows={granted}
          >
            {(g) => (
              <>
                <Table.Td>
                  {g.userId === me.data?.id ? 'You' : (g.userName ?? g.userEmail ?? 'A partner member')}
                </Table.Td>
                <Table.Td>{when(g.expiresAt)}</Table.Td>
                <Table.Td>{APPROVAL_WORDS[g.approval]}</Table.Td>
                <Table.Td>{g.reason}</Table.Td>
                <Table.Td>{g.ticketRef ?? '—'}</Table.Td>
                <Table.Td>{g.siteId ? `Site ${g.siteId} only` : 'Whole organisation'}</Table.Td>
              </>
            )}
          </DataTable>
        )}
      </Loaded>
      <Text size="xs" c="dimmed">
        Partner members eligible to request access are not listed here: the service does not expose them to the
        organisation yet.
      </Text>
      <Title order={2} size="h4">
        Recent actions of the partner’s staff
      </Title>
      {audit ? (
        <>
          <Loaded
            q={activity.list}
            what="activity"
            size="sm"
            isEmpty={(d) => d.data.length === 0}
            empty="The partner’s staff have done nothing here yet."
          >
            {(d) => (
              <DataTable
                testId="partner-activity"
                columns={['When', 'Who', 'Action', 'Result', 'On', 'From']}
                hidden="Details"
                rows={d.data}
              >
                {(a) => (
                  <>
                    <Table.Td>{when(a.at)}</Table.Td>
                    <Table.Td>
                      {a.actorName ?? a.actorEmail ?? a.actorUserId}
                      {a.formerStaff && (
                        <>
                          {' '}
                          <Badge variant="outline" color="dark" size="sm">
                            Former staff
                          </Badge>
                        </>
                      )}
                    </Table.Td>
                    <Table.Td>{a.action}</Table.Td>
                    <Table.Td>{a.result}</Table.Td>
                    <Table.Td>{a.resourceType ? `${a.resourceType} ${a.resourceId ?? ''}` : '—'}</Table.Td>
                    <Table.Td>{a.ip ?? '—'}</Table.Td>
                    <Table.Td />
                  </>
                )}
              </DataTable>
            )}
          </Loaded>
          <CursorPager pages={activity.pages} next={activity.list.data?.nextCursor} />
        </>
      ) : (
        <Text size="sm" c="dimmed">
          Your role does not read the audit trail.
        </Text>
      )}
    </Stack>
  );
}

function Settings({ orgId, mspAccess }: { orgId: string; mspAccess: MspAccess | undefined }) {
  const me = useMe();
  const qc = useQueryClient();
  const write = can(me.data, 'organizations:write');
  const org = useQuery({
    queryKey: ['organization', orgId],
    queryFn: () => call(api.GET('/api/v1/orgs/organizations/{id}', { params: { path: { id: orgId } } })),
  });
  const jit = ((org.data?.settings as { jitApproval?: JitApproval } | undefined)?.jitApproval ?? 'auto') as JitApproval;
  const [msp, setMsp] = useState<MspAccess | null>(null);
  const [approval, setApproval] = useState<JitApproval | null>(null);
  const save = useMutation({
    mutationFn: () =>
      call(
        api.PATCH('/api/v1/orgs/organizations/{id}', {
          params: { path: { id: orgId } },
          body: { settings: { ...(msp ? { mspAccess: msp } : {}), ...(approval ? { jitApproval: approval } : {}) } },
        }),
      ),
    onSuccess: () => {
      done('Saved. Both sides’ admins are told of the change.');
      setMsp(null);
      setApproval(null);
      void qc.invalidateQueries({ queryKey: ['access'] });
      void qc.invalidateQueries({ queryKey: ['organization', orgId] });
    },
  });
  const shownMsp = msp ?? mspAccess ?? null;
  const shownJit = approval ?? jit;
  return (
    <Stack gap="sm">
      <Radio.Group
        label="Partner access to this organisation (mspAccess)"
        description={
          write ? 'Only the organisation’s own admins may loosen it; the partner may only tighten it.' : undefined
        }
        value={shownMsp ?? ''}
        onChange={(v) => setMsp(v as MspAccess)}
      >
        <Stack gap="xs" mt="xs">
          {(Object.keys(MSP_WORDS) as MspAccess[]).map((k) => (
            <Radio key={k} value={k} label={MSP_WORDS[k].label} description={MSP_WORDS[k].text} disabled={!write} />
          ))}
        </Stack>
      </Radio.Group>
      <Radio.Group
        label="Who approves a just-in-time request (jitApproval)"
        value={org.isSuccess ? shownJit : ''}
        onChange={(v) => setApproval(v as JitApproval)}
      >
        <Stack gap="xs" mt="xs">
          {(Object.keys(JIT_TEXT) as JitApproval[]).map((k) => (
            <Radio key={k} value={k} label={APPROVAL_WORDS[k]} description={JIT_TEXT[k]} disabled={!write} />
          ))}
        </Stack>
      </Radio.Group>
      {org.isError && (
        <Alert color="red" role="alert">
          {explain(org.error)}
        </Alert>
      )}
      {save.isError && (
        <Alert color="red" role="alert">
          {explain(save.error)}
        </Alert>
      )}
      {write && (
        <Group>
          <Button
            onClick={() => save.mutate()}
            loading={save.isPending}
            disabled={(!msp || msp === mspAccess) && (!approval || approval === jit)}
          >
            Save access settings
          </Button>
        </Group>
      )}
    </Stack>
  );
}
