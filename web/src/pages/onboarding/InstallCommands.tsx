// The install commands of a new enrollment key, one tab per platform: the script (or the curl call) that enrols the
// host with its facts and sends its first report, to copy or download. Shown with the key, once.
import { Button, Code, CopyButton, Group, Stack, Tabs, Text } from '@mantine/core';
import { saveBlob } from '../../lib/download';
import { INSTALL_TARGETS, installCommand, type InstallTarget } from '../../lib/install';

const HOW: Record<InstallTarget, string> = {
  windows: 'Run in PowerShell as administrator.',
  macos: 'Save as a file and run it with sudo sh, or paste it into Terminal.',
  linux: 'Save as a file and run it with sudo sh, or paste it into a root shell.',
  curl: 'The enrolment call alone, for your own agent or packaging.',
};

export function InstallCommands({ enrollmentKey }: { enrollmentKey: string }) {
  const server = window.location.origin;
  return (
    <Stack gap="xs">
      <Text size="sm" fw={700}>
        Install on a device
      </Text>
      <Tabs defaultValue="windows" keepMounted={false}>
        <Tabs.List aria-label="Platform">
          {INSTALL_TARGETS.map((t) => (
            <Tabs.Tab key={t.value} value={t.value}>
              {t.label}
            </Tabs.Tab>
          ))}
        </Tabs.List>
        {INSTALL_TARGETS.map((t) => {
          const text = installCommand(t.value, { server, key: enrollmentKey });
          return (
            <Tabs.Panel key={t.value} value={t.value} pt="xs">
              <Stack gap="xs">
                <Text size="sm">{HOW[t.value]}</Text>
                <Code
                  block
                  data-testid={`install-${t.value}`}
                  style={{ maxHeight: 240, overflow: 'auto', whiteSpace: 'pre' }}
                  tabIndex={0}
                  aria-label={`${t.label} install command`}
                >
                  {text}
                </Code>
                <Group gap="xs">
                  <CopyButton value={text}>
                    {({ copied, copy }) => (
                      <Button size="xs" variant="default" onClick={copy}>
                        {copied ? 'Copied' : `Copy the ${t.label} command`}
                      </Button>
                    )}
                  </CopyButton>
                  <Button
                    size="xs"
                    variant="default"
                    onClick={() => saveBlob(new Blob([text], { type: 'text/plain' }), t.file)}
                  >
                    Download
                  </Button>
                </Group>
              </Stack>
            </Tabs.Panel>
          );
        })}
      </Tabs>
    </Stack>
  );
}
