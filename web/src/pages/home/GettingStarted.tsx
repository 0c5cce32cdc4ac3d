// A new partner's first steps, ticked by the server from the partner's data (GET /orgs/partners/me/getting-started):
// each step links to the page where it is done. Once every step is done the card may be dismissed (remembered in this
// browser: it is a preference of the view, not a fact about the partner).
import { Badge, Button, Card, Group, List, Progress, Stack, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { api, call } from '../../api/client';

interface Step {
  id: string;
  title: string;
  description: string;
  done: boolean;
  link: string;
}

const dismissKey = (partnerId: string) => `gatehouse.getting-started.dismissed.${partnerId}`;

export function GettingStarted({ partnerId }: { partnerId: string }) {
  const [dismissed, setDismissed] = useState(() => localStorage.getItem(dismissKey(partnerId)) === '1');
  const q = useQuery({
    queryKey: ['getting-started', partnerId],
    enabled: !dismissed,
    retry: false,
    // Steps are done on other pages: coming back must show them ticked.
    staleTime: 0,
    queryFn: async () =>
      (await call(api.GET('/api/v1/orgs/partners/me/getting-started'))) as { complete: boolean; items: Step[] },
  });
  if (dismissed || !q.data) return null;
  const { items, complete } = q.data;
  const done = items.filter((i) => i.done).length;
  const dismiss = () => {
    localStorage.setItem(dismissKey(partnerId), '1');
    setDismissed(true);
  };
  return (
    <Card
      withBorder
      padding="lg"
      component="section"
      aria-labelledby="getting-started-title"
      data-testid="getting-started"
    >
      <Stack gap="sm">
        <Group justify="space-between">
          <Title order={2} size="h3" id="getting-started-title">
            Getting started
          </Title>
          <Text size="sm" c="dimmed" data-testid="getting-started-progress">
            {done} of {items.length} done
          </Text>
        </Group>
        <Progress value={(done / items.length) * 100} aria-label="Getting started progress" />
        <List spacing="sm" listStyleType="none" center>
          {items.map((i) => (
            <List.Item key={i.id} data-testid={`step-${i.id}`} data-done={i.done ? 'true' : 'false'}>
              <Group gap="sm" wrap="nowrap" align="flex-start">
                {i.done ? (
                  <Badge color="green" variant="light" c="dark" w={72}>
                    Done
                  </Badge>
                ) : (
                  <Badge color="dark" variant="outline" w={72}>
                    To do
                  </Badge>
                )}
                <div>
                  <Text component={Link} to={i.link} fw={500} td={i.done ? undefined : 'underline'}>
                    {i.title}
                  </Text>
                  <Text size="sm" c="dimmed">
                    {i.description}
                  </Text>
                </div>
              </Group>
            </List.Item>
          ))}
        </List>
        {complete && (
          <Group justify="space-between">
            <Text size="sm">Every step is done: your partner account is set up.</Text>
            <Button variant="default" size="xs" onClick={dismiss}>
              Dismiss the checklist
            </Button>
          </Group>
        )}
      </Stack>
    </Card>
  );
}
