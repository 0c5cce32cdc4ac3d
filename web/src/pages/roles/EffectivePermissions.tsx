// A role's effective permissions: its own and those it inherits, each with the role it comes from.
import { Alert, Badge, Modal, Stack, Table, Text } from '@mantine/core';
import { explain } from '../../lib/errors';
import { permKey, resourceLabel, useCatalog, useEffectivePermissions, type Role } from '../../hooks/roles';

export function EffectivePermissions({ role, orgId, onClose }: { role: Role; orgId?: string; onClose: () => void }) {
  const eff = useEffectivePermissions(role.id, orgId);
  const catalog = useCatalog();
  const words = new Map((catalog.data ?? []).map((e) => [permKey(e), e.description]));
  const chain = eff.data?.inheritanceChain ?? [];
  return (
    <Modal opened onClose={onClose} title={`Effective permissions of ${role.name}`} size="xl">
      {eff.isError ? (
        <Alert color="red" role="alert">
          {explain(eff.error)}
        </Alert>
      ) : eff.isPending ? (
        <Text aria-busy="true">Loading permissions…</Text>
      ) : (
        <Stack>
          <Text size="sm" data-testid="inheritance-chain">
            {chain.length > 1
              ? `Inherits: ${chain.map((c) => c.name).join(' → ')}`
              : 'This role inherits from no other role.'}
          </Text>
          {eff.data.permissions.length === 0 ? (
            <Text c="dimmed">This role grants no permission yet.</Text>
          ) : (
            <Table data-testid="effective-permissions">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Permission</Table.Th>
                  <Table.Th>What it allows</Table.Th>
                  <Table.Th>Source</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {eff.data.permissions.map((p) => (
                  <Table.Tr key={`${permKey(p)}-${p.sourceRoleId}`}>
                    <Table.Td>
                      <Text ff="monospace" size="sm">
                        {permKey(p)}
                      </Text>
                    </Table.Td>
                    <Table.Td>
                      {p.resource === '*' ? 'Every permission' : (words.get(permKey(p)) ?? resourceLabel(p.resource))}
                    </Table.Td>
                    <Table.Td>
                      {p.inherited ? (
                        <Text size="sm">Inherited from {p.sourceRoleName}</Text>
                      ) : (
                        <Badge variant="light" color="gray">
                          Own
                        </Badge>
                      )}
                    </Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          )}
        </Stack>
      )}
    </Modal>
  );
}
