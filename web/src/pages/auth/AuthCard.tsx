import { Alert, Anchor, Center, Group, Paper, Stack, Text, Title } from '@mantine/core';
import type { ReactNode } from 'react';
import { Link } from 'react-router';

/** The frame of every signed-out page: product name, a title, one card. */
export function AuthCard({ title, children, footer }: { title: string; children: ReactNode; footer?: ReactNode }) {
  return (
    <Center mih="100vh" p="md" bg="gray.0" component="main">
      <Stack w="100%" maw={420} gap="md">
        <Group justify="center" gap={8}>
          <img src="/favicon.svg" alt="" width={28} height={28} />
          <Text fw={700} size="xl">
            Gatehouse
          </Text>
        </Group>
        <Paper withBorder shadow="sm" p="xl" radius="md">
          <Title order={1} size="h3" mb="md">
            {title}
          </Title>
          {children}
        </Paper>
        {footer && (
          <Text size="sm" ta="center">
            {footer}
          </Text>
        )}
      </Stack>
    </Center>
  );
}

export function FormError({ error }: { error: string | null }) {
  if (!error) return null;
  return (
    <Alert color="red" role="alert" title="Not done">
      {error}
    </Alert>
  );
}

export function BackToSignIn() {
  return (
    <Anchor component={Link} to="/login">
      Back to sign-in
    </Anchor>
  );
}
