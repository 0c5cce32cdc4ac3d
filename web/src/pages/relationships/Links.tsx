// The relationships a reason names, by name, each a link to its page (the explain page's reason chain).
import { Anchor, Text } from '@mantine/core';
import { useQueries } from '@tanstack/react-query';
import { Fragment } from 'react';
import { Link } from 'react-router';
import { api, call } from '../../api/client';

export function RelationshipLinks({ ids }: { ids: readonly string[] }) {
  const q = useQueries({
    queries: ids.map((id) => ({
      queryKey: ['relationships', 'one', id],
      queryFn: () => call(api.GET('/api/v1/relationships/{id}', { params: { path: { id } } })),
    })),
  });
  if (ids.length === 0) return null;
  return (
    <Text size="sm" span data-testid="reason-relationships">
      {ids.length > 1 ? 'Relationships: ' : 'Relationship: '}
      {ids.map((id, i) => {
        const r = q[i]?.data;
        return (
          <Fragment key={id}>
            {i > 0 && ', '}
            <Anchor component={Link} to={`/relationships/${id}`} size="sm">
              {r ? r.name : q[i]?.isError ? 'a relationship you cannot see' : 'Loading…'}
            </Anchor>
          </Fragment>
        );
      })}
    </Text>
  );
}
