// One audit record, every field, in a drawer; from here the table can be narrowed to its actor or action.
import { Button, Code, Drawer, Group, Stack, Table, Text } from '@mantine/core';
import type { components } from '../../api/schema';

export type AuditRecord = components['schemas']['AuditRecord'];

export function AuditDetails({
  record,
  orgName,
  onClose,
  onFilter,
}: {
  record: AuditRecord | null;
  orgName: (id: string | null) => string;
  onClose: () => void;
  onFilter: (f: { action?: string; actorUserId?: string; actorEmail?: string | null }) => void;
}) {
  const rows: [string, string][] = record
    ? [
        ['Time', new Date(record.at).toLocaleString()],
        ['Action', record.action],
        ['Result', record.result],
        ['Actor', record.actorEmail ?? (record.actorUserId ? record.actorUserId : 'The system')],
        ['Organisation', orgName(record.orgId)],
        ['Resource', record.resourceType ? `${record.resourceType} ${record.resourceId ?? ''}`.trim() : '—'],
        ['IP address', record.ip ?? '—'],
        ['Browser or client', record.userAgent ?? '—'],
        ['Record id', record.id],
      ]
    : [];
  return (
    // lockScroll off and a named close button: see main.tsx (the CSP refuses react-remove-scroll's inline <style>).
    <Drawer
      opened={!!record}
      onClose={onClose}
      position="right"
      size="lg"
      title="Audit record"
      lockScroll={false}
      closeButtonProps={{ 'aria-label': 'Close' }}
    >
      {record && (
        <Stack>
          <Table data-testid="audit-record">
            <Table.Tbody>
              {rows.map(([k, v]) => (
                <Table.Tr key={k}>
                  <Table.Th scope="row" w={160}>
                    {k}
                  </Table.Th>
                  <Table.Td>{v}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
          <Text fw={600} size="sm">
            Details
          </Text>
          {Object.keys(record.details).length === 0 ? (
            <Text size="sm" c="dimmed">
              No further details.
            </Text>
          ) : (
            <Code block data-testid="audit-details" tabIndex={0} aria-label="Details of the record">
              {JSON.stringify(record.details, null, 2)}
            </Code>
          )}
          <Group>
            <Button variant="default" size="xs" onClick={() => onFilter({ action: record.action })}>
              Only this action
            </Button>
            {record.actorUserId && (
              <Button
                variant="default"
                size="xs"
                onClick={() => onFilter({ actorUserId: record.actorUserId!, actorEmail: record.actorEmail })}
              >
                Only this actor
              </Button>
            )}
          </Group>
        </Stack>
      )}
    </Drawer>
  );
}
