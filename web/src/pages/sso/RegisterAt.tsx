// What to register at the identity provider: values with a copy button each.
import { Button, CopyButton, Group, Stack, Text } from '@mantine/core';

export function CopyValue({ label, value, testId }: { label: string; value: string; testId?: string }) {
  return (
    <Group gap="xs" wrap="nowrap" justify="space-between">
      <div>
        <Text size="xs" fw={600}>
          {label}
        </Text>
        <Text size="sm" ff="monospace" data-testid={testId} style={{ wordBreak: 'break-all' }}>
          {value}
        </Text>
      </div>
      <CopyButton value={value}>
        {({ copied, copy }) => (
          <Button size="xs" variant="default" onClick={copy} aria-label={`Copy ${label}`}>
            {copied ? 'Copied' : 'Copy'}
          </Button>
        )}
      </CopyButton>
    </Group>
  );
}

export function RegisterAt({
  idp,
  values,
  notes,
}: {
  idp: string;
  values: { label: string; value: string; testId?: string }[];
  notes?: string;
}) {
  return (
    <Stack gap={6} p="sm" bg="gray.0" component="section" aria-label={`Register at ${idp}`}>
      <Text size="sm" fw={600}>
        Register this at {idp}
      </Text>
      {values.map((v) => (
        <CopyValue key={v.label} {...v} />
      ))}
      {notes && <Text size="sm">{notes}</Text>}
    </Stack>
  );
}
