// Domains of the partner or of one organisation: claim one, publish the TXT record shown, verify it, delete a claim.
// A proven domain is what single sign-on acts on (discovery, automatic accounts, enforcement); a claim alone does nothing.
import { Alert, Badge, Button, Code, Group, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { ApiError, api, call } from '../../api/client';
import type { components } from '../../api/schema';
import { ConfirmDialog } from '../../components/ConfirmDialog';
import { DataTable } from '../../components/DataTable';
import { Loaded } from '../../components/Loaded';
import { TenantSelect } from '../../components/TenantSelect';
import { explain } from '../../lib/errors';
import { FormError } from '../../components/FormError';
import { fieldsNamed, useFieldErrors } from '../../hooks/useFieldErrors';
import { when } from '../onboarding/common';
import { useMe } from '../../hooks/me';
import { useCapabilities } from '../../hooks/useCapabilities';

type Domain = components['schemas']['Domain'];

/** A failed verification in words: what was looked for and where, or that another tenant holds the proof. */
function verifyFailure(err: unknown, d: Domain): string {
  if (err instanceof ApiError && err.body.code === 'domain_not_verified') {
    const reason = (err.body.details as { reason?: string } | undefined)?.reason;
    return reason === 'dns_unreachable'
      ? `Not verified: no DNS server answered for ${d.txtName}. Try again later.`
      : `Not verified: the TXT record ${d.txtValue} was not found at ${d.txtName}. Publish it at your DNS host, wait for it to appear, then verify again.`;
  }
  if (err instanceof ApiError && err.body.code === 'domain_taken')
    return `Not verified: another tenant has already proven ${d.domain}. A domain is proven by one tenant at most.`;
  return explain(err);
}

export default function Domains() {
  const me = useMe();
  const [orgId, setOrgId] = useState<string | null>(null);
  const partner = me.data?.scope === 'partner';
  const write = useCapabilities(orgId).allowed('domains.manage');
  const list = useQuery({
    queryKey: ['domains', orgId],
    enabled: !!me.data,
    queryFn: async () => {
      const page = await call(
        api.GET('/api/v1/domains', { params: { query: { orgId: orgId ?? undefined, limit: 200 } } }),
      );
      // Without orgId a partner sees its organisations' claims too: the partner's own are those of no organisation.
      return partner && !orgId ? page.data.filter((d) => d.orgId === null) : page.data;
    },
  });
  return (
    <Stack>
      <Title order={1} size="h2">
        Domains
      </Title>
      <Text size="sm" maw={760}>
        Prove that you control an e-mail domain by publishing a DNS TXT record. Single sign-on finds, creates and holds
        accounts only for addresses in domains proven here.
      </Text>
      {partner && (
        <TenantSelect
          label="Domains of"
          partnerLabel="The partner (your technicians)"
          value={orgId}
          onChange={setOrgId}
        />
      )}
      {write && <AddDomain key={orgId ?? ''} orgId={orgId} />}
      <Loaded q={list} what="domains" isEmpty={(d) => d.length === 0} empty="No domain claimed here yet.">
        {(d) => (
          <DataTable
            testId="domains-table"
            columns={['Domain', 'Status', 'TXT record to publish', 'Verified']}
            hidden="Actions"
            rows={d}
          >
            {(row) => <DomainRow row={row} write={write} />}
          </DataTable>
        )}
      </Loaded>
    </Stack>
  );
}

const domainField = fieldsNamed('domain');

function AddDomain({ orgId }: { orgId: string | null }) {
  const qc = useQueryClient();
  const [domain, setDomain] = useState('');
  const errors = useFieldErrors(domainField, [domain]);
  const add = useMutation({
    mutationFn: () =>
      call(api.POST('/api/v1/domains', { body: { domain: domain.trim(), ...(orgId ? { orgId } : {}) } })),
    onSuccess: (d) => {
      notifications.show({ color: 'green', message: `${d.domain} claimed: publish its TXT record, then verify.` });
      setDomain('');
      void qc.invalidateQueries({ queryKey: ['domains'] });
    },
    onError: errors.show,
  });
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        if (domain.trim()) add.mutate();
      }}
    >
      <Stack gap="xs" maw={560}>
        <FormError text={errors.form} />
        <Group align="flex-start">
          <TextInput
            label="Domain"
            placeholder="example.com"
            value={domain}
            onChange={(e) => setDomain(e.currentTarget.value)}
            error={errors.fields.domain}
            w={320}
          />
          <Button type="submit" loading={add.isPending} disabled={!domain.trim()} mt={25}>
            Add domain
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

function DomainRow({ row, write }: { row: Domain; write: boolean }) {
  const qc = useQueryClient();
  const [confirm, setConfirm] = useState(false);
  const verify = useMutation({
    mutationFn: () => call(api.POST('/api/v1/domains/{id}/verify', { params: { path: { id: row.id } } })),
    onSuccess: (d) => {
      notifications.show({ color: 'green', message: `${d.domain} is verified.` });
      void qc.invalidateQueries({ queryKey: ['domains'] });
    },
  });
  const del = useMutation({
    mutationFn: () => call(api.DELETE('/api/v1/domains/{id}', { params: { path: { id: row.id } } })),
    onSuccess: () => {
      notifications.show({ color: 'green', message: `${row.domain} deleted.` });
      setConfirm(false);
      void qc.invalidateQueries({ queryKey: ['domains'] });
    },
  });
  const verified = row.status === 'verified';
  return (
    <>
      <Table.Td>{row.domain}</Table.Td>
      <Table.Td>
        <Badge color="dark" variant={verified ? 'filled' : 'outline'}>
          {verified ? 'Verified' : 'Pending'}
        </Badge>
      </Table.Td>
      <Table.Td>
        <Stack gap={2}>
          <Text size="xs">
            Name: <Code>{row.txtName}</Code>
          </Text>
          <Text size="xs">
            Value: <Code>{row.txtValue}</Code>
          </Text>
          {verify.isError && (
            <Alert color="red" role="alert" p="xs">
              {verifyFailure(verify.error, row)}
            </Alert>
          )}
        </Stack>
      </Table.Td>
      <Table.Td>{verified ? when(row.verifiedAt) : '—'}</Table.Td>
      <Table.Td>
        {write && (
          <Group gap="xs" wrap="nowrap">
            {!verified && (
              <Button
                size="xs"
                onClick={() => verify.mutate()}
                loading={verify.isPending}
                aria-label={`Verify ${row.domain}`}
              >
                Verify
              </Button>
            )}
            <Button
              size="xs"
              variant="default"
              color="red"
              onClick={() => setConfirm(true)}
              aria-label={`Delete ${row.domain}`}
            >
              Delete
            </Button>
          </Group>
        )}
        {confirm && (
          <ConfirmDialog
            title={`Delete ${row.domain}?`}
            action="Delete"
            pending={del.isPending}
            error={del.error}
            onConfirm={() => del.mutate()}
            onClose={() => setConfirm(false)}
          >
            {verified
              ? 'Single sign-on stops acting on addresses of this domain here: no discovery, no automatic accounts, no enforcement.'
              : 'The claim goes; the TXT record at your DNS host can be removed too.'}
          </ConfirmDialog>
        )}
      </Table.Td>
    </>
  );
}
