// Export (CSV, JSON Lines) of the filtered records and verification of the partner's hash chain.
import { Alert, Button, Group, Text } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation } from '@tanstack/react-query';
import { api, call } from '../../api/client';
import type { operations } from '../../api/schema';
import { saveBlob } from '../../lib/download';
import { explain } from '../../lib/errors';
import { can, useMe } from '../../hooks/me';

export type AuditFilters = Omit<operations['getAuditLogsExport']['parameters']['query'], 'format'>;
type Format = 'csv' | 'jsonl';

/**
 * The download goes through the typed client (the in-memory token in the Authorization header, never in a URL);
 * the browser gets the bytes as a Blob and saves them under the server's file name.
 */
export function ExportButtons({ filters }: { filters: AuditFilters }) {
  const exp = useMutation({
    mutationFn: async (format: Format) => {
      const res = await api.GET('/api/v1/audit-logs/export', {
        params: { query: { ...filters, format } },
        parseAs: 'blob',
      });
      const blob = await call(Promise.resolve(res));
      const name =
        /filename="([^"]+)"/.exec(res.response.headers.get('content-disposition') ?? '')?.[1] ?? `audit.${format}`;
      saveBlob(blob as Blob, name);
      return name;
    },
    onSuccess: (name) => notifications.show({ color: 'green', message: `Exported to ${name}.` }),
    onError: (err) => notifications.show({ color: 'red', title: 'Export failed', message: explain(err) }),
  });
  return (
    <>
      <Button variant="default" loading={exp.isPending && exp.variables === 'csv'} onClick={() => exp.mutate('csv')}>
        Export CSV
      </Button>
      <Button
        variant="default"
        loading={exp.isPending && exp.variables === 'jsonl'}
        onClick={() => exp.mutate('jsonl')}
      >
        Export JSON Lines
      </Button>
    </>
  );
}

/** Recomputes the partner's chain on the server and says whether it holds, and where it breaks if not. */
export function VerifyChain() {
  const me = useMe();
  const verify = useMutation({ mutationFn: () => call(api.GET('/api/v1/audit-logs/verify')) });
  if (!can(me.data, 'audit:read')) return null;
  return (
    <Group align="start" gap="sm">
      <Button variant="default" onClick={() => verify.mutate()} loading={verify.isPending}>
        Verify the chain
      </Button>
      <div aria-live="polite" data-testid="chain-result">
        {verify.isError && (
          <Alert color="red" role="alert" py={6}>
            {explain(verify.error)}
          </Alert>
        )}
        {verify.data?.ok === true && (
          <Alert color="green" py={6} title="The audit chain is intact">
            {verify.data.checked} record{verify.data.checked === 1 ? '' : 's'} checked: none was changed, removed or
            reordered.
          </Alert>
        )}
        {verify.data?.ok === false && (
          <Alert color="red" py={6} title="The audit chain is broken">
            <Text size="sm">
              Record {verify.data.firstBrokenId ?? '(unknown)'} no longer matches its hash or its link to the record
              before it ({verify.data.checked} records checked). Someone changed the stored audit trail: keep an export
              and tell your security contact.
            </Text>
          </Alert>
        )}
      </div>
    </Group>
  );
}
