// Audit webhooks of the partner or of an organisation: subscribe a URL to event prefixes (the signing secret is shown
// once), pause or resume, delete (confirm), send a signed test event, and the delivery log with redelivery.
// All of it needs audit:manage; creating, changing and deleting may ask for a fresh proof (the step-up prompt).
import { Alert, Button, Group, Modal, Stack, Table, TagsInput, Text, TextInput } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, call } from '../../api/client';
import type { components } from '../../api/schema';
import { CursorPager, useCursorList } from '../../components/CursorPager';
import { ConfirmDialog, useConfirmed } from '../../components/ConfirmDialog';
import { DataTable } from '../../components/DataTable';
import { Loaded } from '../../components/Loaded';
import { ShownOnce } from '../../components/ShownOnce';
import { TenantSelect } from '../../components/TenantSelect';
import { explain } from '../../lib/errors';
import { FormError } from '../../components/FormError';
import { fieldsNamed, useFieldErrors } from '../../hooks/useFieldErrors';
import { useCapabilities } from '../../hooks/useCapabilities';
import { done, failed, when } from '../onboarding/common';
import { useOwner } from './common';

type Webhook = components['schemas']['Webhook'];
type Delivery = components['schemas']['WebhookDelivery'];

export default function Webhooks() {
  const qc = useQueryClient();
  const owner = useOwner('Webhooks of');
  const { pages, list } = useCursorList(
    ['webhooks', owner.orgId],
    (cursor) => call(api.GET('/api/v1/webhooks', { params: { query: { orgId: owner.orgId, cursor, limit: 50 } } })),
    { resetOn: owner.orgId },
  );
  const [creating, setCreating] = useState(false);
  const write = useCapabilities(owner.orgId).allowed('webhooks.manage');
  const [logOf, setLogOf] = useState<Webhook | null>(null);
  const [pinged, setPinged] = useState<{ id: string; text: string; ok: boolean } | null>(null);
  const refresh = () => void qc.invalidateQueries({ queryKey: ['webhooks'] });
  const toggle = useMutation({
    mutationFn: (w: Webhook) =>
      call(api.PATCH('/api/v1/webhooks/{id}', { params: { path: { id: w.id } }, body: { active: !w.active } })),
    onSuccess: (w) => {
      done(
        w.active
          ? 'The webhook is resumed: new events are queued again.'
          : 'The webhook is paused: no new events are queued.',
      );
      refresh();
    },
    onError: failed,
  });
  const ping = useMutation({
    mutationFn: (w: Webhook) => call(api.POST('/api/v1/webhooks/{id}/ping', { params: { path: { id: w.id } } })),
    onSuccess: (r, w) =>
      setPinged({
        id: w.id,
        ok: r.ok,
        text: r.ok
          ? `The receiver answered ${r.status ?? ''}.`.replace(' .', '.')
          : `Not delivered: ${r.error ?? (r.status ? `the receiver answered ${r.status}` : 'no answer')}.`,
      }),
    onError: (err, w) => setPinged({ id: w.id, ok: false, text: explain(err) }),
  });
  const remove = useConfirmed(
    (w: Webhook) => call(api.DELETE('/api/v1/webhooks/{id}', { params: { path: { id: w.id } } })),
    () => {
      done('The webhook is deleted with its delivery log.');
      refresh();
    },
  );

  return (
    <Stack>
      <Text size="sm">
        A webhook sends audit events to a URL as they happen, in order, signed with its secret (Standard Webhooks).
      </Text>
      <Group align="end" justify="space-between">
        {owner.picker ?? <span />}
        {write && <Button onClick={() => setCreating(true)}>New webhook</Button>}
      </Group>
      <Loaded q={list} what="webhooks" isEmpty={(d) => d.data.length === 0} empty="No webhook here yet.">
        {(d) => (
          <DataTable testId="webhooks" columns={['URL', 'Events', 'Created', 'Status']} hidden="Actions" rows={d.data}>
            {(w) => (
              <>
                <Table.Td>
                  <Text size="sm" style={{ wordBreak: 'break-all' }}>
                    {w.url}
                  </Text>
                  {w.description && (
                    <Text size="xs" c="dimmed">
                      {w.description}
                    </Text>
                  )}
                  {pinged?.id === w.id && (
                    <Text size="xs" fw={700} role="status" data-testid="ping-result">
                      {pinged.text}
                    </Text>
                  )}
                </Table.Td>
                <Table.Td>{w.events.join(', ')}</Table.Td>
                <Table.Td>{when(w.createdAt)}</Table.Td>
                <Table.Td>
                  <Text size="sm" fw={w.active ? 400 : 700}>
                    {w.active ? 'Active' : 'Paused'}
                  </Text>
                </Table.Td>
                <Table.Td>
                  <Group gap="xs" wrap="nowrap">
                    <Button
                      size="xs"
                      variant="default"
                      loading={ping.isPending && ping.variables?.id === w.id}
                      onClick={() => ping.mutate(w)}
                      aria-label={`Ping ${w.url}`}
                    >
                      Ping
                    </Button>
                    <Button
                      size="xs"
                      variant="default"
                      onClick={() => setLogOf(w)}
                      aria-label={`Deliveries of ${w.url}`}
                    >
                      Deliveries
                    </Button>
                    <Button
                      size="xs"
                      variant="default"
                      loading={toggle.isPending && toggle.variables?.id === w.id}
                      onClick={() => toggle.mutate(w)}
                      aria-label={`${w.active ? 'Pause' : 'Resume'} ${w.url}`}
                    >
                      {w.active ? 'Pause' : 'Resume'}
                    </Button>
                    <Button
                      size="xs"
                      variant="default"
                      color="red"
                      onClick={() => remove.ask(w)}
                      aria-label={`Delete ${w.url}`}
                    >
                      Delete
                    </Button>
                  </Group>
                </Table.Td>
              </>
            )}
          </DataTable>
        )}
      </Loaded>
      <CursorPager pages={pages} next={list.data?.nextCursor} />
      {creating && (
        <CreateWebhook onClose={() => setCreating(false)} initialOrgId={owner.orgId ?? null} partner={owner.partner} />
      )}
      {logOf && <Deliveries webhook={logOf} onClose={() => setLogOf(null)} />}
      <ConfirmDialog {...remove.dialog} title="Delete this webhook?" action="Delete" breakAll>
        {remove.target?.url} gets no more events; its queued deliveries and its delivery log are deleted.
      </ConfirmDialog>
    </Stack>
  );
}

/** The webhook form's fields with an input of their own (the organisation's problems show at the top). */
const webhookField = fieldsNamed('url', 'events', 'description');

function CreateWebhook({
  onClose,
  initialOrgId,
  partner,
}: {
  onClose: () => void;
  initialOrgId: string | null;
  partner: boolean;
}) {
  const qc = useQueryClient();
  const [orgId, setOrgId] = useState<string | null>(initialOrgId);
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<string[]>(['*']);
  const [description, setDescription] = useState('');
  const [created, setCreated] = useState<{ secret: string; url: string } | null>(null);
  const errors = useFieldErrors(webhookField, [orgId, url, events, description]);
  const create = useMutation({
    mutationFn: () =>
      call(
        api.POST('/api/v1/webhooks', {
          body: { url: url.trim(), events, orgId: orgId ?? undefined, description: description.trim() || undefined },
        }),
      ),
    onSuccess: (w) => {
      setCreated({ secret: w.secret, url: w.url });
      void qc.invalidateQueries({ queryKey: ['webhooks'] });
    },
    onError: errors.show,
  });
  return (
    <Modal opened onClose={onClose} title={created ? 'Your webhook’s signing secret' : 'New webhook'}>
      {created ? (
        <ShownOnce what="secret" value={created.secret} testId="webhook-secret" onDone={onClose}>
          <Text size="sm">Verify each delivery to {created.url} with this secret (Standard Webhooks signatures).</Text>
        </ShownOnce>
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            create.mutate();
          }}
        >
          <Stack>
            <FormError text={errors.form} />
            <TextInput
              label="URL"
              error={errors.fields.url}
              placeholder="https://siem.example.com/hooks/gatehouse"
              required
              type="url"
              value={url}
              onChange={(e) => setUrl(e.currentTarget.value)}
              data-autofocus
            />
            <TagsInput
              label="Events"
              description="Action prefixes such as role. or auth.login (press Enter after each); * for every event."
              value={events}
              onChange={setEvents}
              splitChars={[',', ' ']}
              required
              error={errors.fields.events}
            />
            {partner && (
              <TenantSelect
                label="Organisation"
                partnerLabel="The partner and all its organisations"
                value={orgId}
                onChange={setOrgId}
              />
            )}
            <TextInput
              label="Description"
              placeholder="SIEM"
              value={description}
              onChange={(e) => setDescription(e.currentTarget.value)}
              error={errors.fields.description}
            />
            <Button type="submit" loading={create.isPending} disabled={!url.trim() || events.length === 0}>
              Create webhook
            </Button>
          </Stack>
        </form>
      )}
    </Modal>
  );
}

function Deliveries({ webhook, onClose }: { webhook: Webhook; onClose: () => void }) {
  const qc = useQueryClient();
  const { pages, list } = useCursorList(
    ['webhook-deliveries', webhook.id],
    (cursor) =>
      call(
        api.GET('/api/v1/webhooks/{id}/deliveries', {
          params: { path: { id: webhook.id }, query: { cursor, limit: 50 } },
        }),
      ),
    { resetOn: webhook.id },
  );
  const redeliver = useMutation({
    mutationFn: (d: Delivery | null) =>
      call(
        api.POST('/api/v1/webhooks/{id}/redeliver', {
          params: { path: { id: webhook.id } },
          body: d ? { deliveryId: d.id } : {},
        }),
      ),
    onSuccess: (r) => {
      done(`${r.queued} deliver${r.queued === 1 ? 'y' : 'ies'} queued again.`);
      void qc.invalidateQueries({ queryKey: ['webhook-deliveries'] });
    },
  });
  return (
    <Modal opened onClose={onClose} title="Deliveries" size="xl">
      <Stack>
        <Text size="sm" style={{ wordBreak: 'break-all' }}>
          Events sent to {webhook.url}, newest first. A failed delivery was retried for 24 hours, then set aside.
        </Text>
        <Group justify="end">
          <Button
            variant="default"
            loading={redeliver.isPending && redeliver.variables === null}
            onClick={() => redeliver.mutate(null)}
          >
            Redeliver every failed one
          </Button>
        </Group>
        {redeliver.isError && (
          <Alert color="red" role="alert">
            {explain(redeliver.error)}
          </Alert>
        )}
        <Loaded q={list} what="deliveries" isEmpty={(d) => d.data.length === 0} empty="No event delivered yet.">
          {(d) => (
            <DataTable
              testId="webhook-deliveries"
              columns={['#', 'Event', 'Status', 'Attempts', 'Last answer']}
              hidden="Actions"
              rows={d.data}
            >
              {(x) => (
                <>
                  <Table.Td>{x.sequence}</Table.Td>
                  <Table.Td>
                    <Text size="sm">{x.action}</Text>
                    <Text size="xs" c="dimmed">
                      {when(x.createdAt)}
                    </Text>
                  </Table.Td>
                  <Table.Td>
                    {x.status === 'delivered' ? 'Delivered' : x.status === 'failed' ? 'Failed' : 'Pending'}
                  </Table.Td>
                  <Table.Td>{x.attempts}</Table.Td>
                  <Table.Td>{x.lastStatus ? `HTTP ${x.lastStatus}` : (x.lastError ?? '—')}</Table.Td>
                  <Table.Td>
                    <Button
                      size="xs"
                      variant="default"
                      loading={redeliver.isPending && redeliver.variables?.id === x.id}
                      onClick={() => redeliver.mutate(x)}
                      aria-label={`Redeliver event ${x.sequence}`}
                    >
                      Redeliver
                    </Button>
                  </Table.Td>
                </>
              )}
            </DataTable>
          )}
        </Loaded>
        <CursorPager pages={pages} next={list.data?.nextCursor} />
      </Stack>
    </Modal>
  );
}
