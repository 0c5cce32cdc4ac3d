// "Delete / revoke / remove this?": the consequence in words, the refusal if any, Cancel and the red action.
import { Alert, Button, Group, Modal, Stack, Text } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { useState, type ReactNode } from 'react';
import { explain } from '../lib/errors';

/**
 * An action on one record that asks first: `ask(record)` opens the dialog, confirming runs `act(record)`, and on
 * success the dialog closes and `onDone(record)` runs (a notice, the lists to refresh). Spread `dialog` into
 * ConfirmDialog.
 */
export function useConfirmed<T>(act: (record: T) => Promise<unknown>, onDone: (record: T) => void) {
  const [target, setTarget] = useState<T | null>(null);
  const m = useMutation({
    mutationFn: act,
    onSuccess: (_r, record) => {
      setTarget(null);
      onDone(record);
    },
  });
  return {
    target,
    ask: setTarget,
    dialog: {
      opened: target !== null,
      pending: m.isPending,
      error: m.error,
      onConfirm: () => target !== null && m.mutate(target),
      onClose: () => setTarget(null),
    },
  };
}

/** `children`: what happens if confirmed, in words (`breakAll` for a long URL in it). */
export function ConfirmDialog({
  opened = true,
  title,
  children,
  breakAll = false,
  action,
  pending,
  error,
  onConfirm,
  onClose,
}: {
  opened?: boolean;
  title: string;
  children: ReactNode;
  breakAll?: boolean;
  action: ReactNode;
  pending: boolean;
  error?: unknown;
  onConfirm: () => void;
  onClose: () => void;
}) {
  return (
    <Modal opened={opened} onClose={onClose} title={title}>
      <Stack>
        <Text size="sm" style={breakAll ? { wordBreak: 'break-all' } : undefined}>
          {children}
        </Text>
        {error ? (
          <Alert color="red" role="alert">
            {explain(error)}
          </Alert>
        ) : null}
        <Group justify="end">
          <Button variant="default" onClick={onClose}>
            Cancel
          </Button>
          <Button color="red" loading={pending} onClick={onConfirm}>
            {action}
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}
