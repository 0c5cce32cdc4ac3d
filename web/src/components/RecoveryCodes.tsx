import { Alert, Button, CopyButton, Group, Stack, Text } from '@mantine/core';

/** Recovery codes, shown once: copy or download them now, they cannot be shown again. */
export function RecoveryCodes({ codes }: { codes: string[] }) {
  const text = `Gatehouse recovery codes (each works once)\n\n${codes.join('\n')}\n`;
  const download = () => {
    const url = URL.createObjectURL(new Blob([text], { type: 'text/plain' }));
    const a = document.createElement('a');
    a.href = url;
    a.download = 'gatehouse-recovery-codes.txt';
    a.click();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  };
  return (
    <Stack gap="sm">
      <Alert color="yellow" title="Save your recovery codes now">
        Each code signs you in once if you lose your second factor. They are shown only this time.
      </Alert>
      {/* biome-ignore lint/a11y/useSemanticElements: a two-column grid of codes; ul would need its own reset styles */}
      <div className="gh-two-columns" role="list" aria-label="Recovery codes" data-testid="recovery-codes">
        {codes.map((c) => (
          <Text key={c} ff="monospace" size="sm" role="listitem">
            {c}
          </Text>
        ))}
      </div>
      <Group>
        <CopyButton value={codes.join('\n')}>
          {({ copied, copy }) => (
            <Button variant="default" onClick={copy}>
              {copied ? 'Copied' : 'Copy codes'}
            </Button>
          )}
        </CopyButton>
        <Button variant="default" onClick={download}>
          Download codes
        </Button>
      </Group>
    </Stack>
  );
}
