// A secret shown once (an API key, an enrollment key, a SCIM token, a webhook's signing secret): the warning, the
// value (wrapped, never scrolled), what goes with it, a copy button and Done.
import { Alert, Button, Code, CopyButton, Group, Stack } from '@mantine/core';
import type { ReactNode } from 'react';

export function ShownOnce({
  what,
  value,
  testId,
  children,
  onDone,
}: {
  what: string;
  value: string;
  testId: string;
  children?: ReactNode;
  onDone: () => void;
}) {
  return (
    <Stack>
      <Alert color="yellow" title="Copy it now">
        This is the only time the {what} is shown. Gatehouse keeps only a fingerprint of it.
      </Alert>
      <Code block data-testid={testId} style={{ whiteSpace: 'pre-wrap', wordBreak: 'break-all' }}>
        {value}
      </Code>
      {children}
      <Group justify="space-between">
        <CopyButton value={value}>
          {({ copied, copy }) => (
            <Button variant="default" onClick={copy}>
              {copied ? 'Copied' : `Copy ${what}`}
            </Button>
          )}
        </CopyButton>
        <Button onClick={onDone}>Done</Button>
      </Group>
    </Stack>
  );
}
