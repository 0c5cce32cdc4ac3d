// The "loading / refused / empty / content" frame of a list fed by a query.
import { Alert, Text } from '@mantine/core';
import type { UseQueryResult } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { explain } from '../lib/errors';

/** Loading, refusal in words, empty text, or the content. `size="sm"` for the texts of a small section. */
export function Loaded<T>({
  q,
  what,
  empty,
  isEmpty,
  size,
  children,
}: {
  q: UseQueryResult<T>;
  what: string;
  empty: ReactNode;
  isEmpty: (d: T) => boolean;
  size?: 'sm';
  children: (d: T) => ReactNode;
}) {
  if (q.isError)
    return (
      <Alert color="red" role="alert">
        {explain(q.error)}
      </Alert>
    );
  if (q.isPending)
    return (
      <Text size={size} aria-busy="true">
        Loading {what}…
      </Text>
    );
  if (isEmpty(q.data))
    return (
      <Text size={size} c="dimmed">
        {empty}
      </Text>
    );
  return <>{children(q.data)}</>;
}
