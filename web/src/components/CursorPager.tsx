// Keyset paging of a list: the cursors walked so far (the last one is the page shown), and the Previous / Next bar.
// The walk starts over when `key` (the filters the list depends on) changes, or when `reset()` is called.
import { Button, Group, Text } from '@mantine/core';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';

export function useCursorPages(key?: unknown) {
  const k = JSON.stringify(key ?? null);
  const [state, setState] = useState<{ key: string; cursors: (string | undefined)[] }>({
    key: k,
    cursors: [undefined],
  });
  const cursors = state.key === k ? state.cursors : [undefined];
  return {
    /** The cursor of the page shown (undefined: the first page). */
    cursor: cursors[cursors.length - 1],
    /** 1 for the first page. */
    page: cursors.length,
    reset: () => setState({ key: k, cursors: [undefined] }),
    previous: () => setState({ key: k, cursors: cursors.slice(0, -1) }),
    next: (cursor: string) => setState({ key: k, cursors: [...cursors, cursor] }),
  };
}

export type CursorPages = ReturnType<typeof useCursorPages>;

/**
 * A keyset-paged list: `fetchPage(cursor)` asks the API for one page; the query key is `queryKey` plus the cursor,
 * and the page shown stays on screen while the next one loads.
 */
export function useCursorList<R extends { nextCursor: string | null }>(
  queryKey: readonly unknown[],
  fetchPage: (cursor: string | undefined) => Promise<R>,
  { resetOn, enabled = true }: { resetOn?: unknown; enabled?: boolean } = {},
) {
  const pages = useCursorPages(resetOn);
  const cursor = pages.cursor;
  const list = useQuery({
    queryKey: [...queryKey, cursor],
    enabled,
    placeholderData: keepPreviousData,
    queryFn: () => fetchPage(cursor),
  });
  return { pages, list };
}

/**
 * Previous / Next for a keyset-paged list. With `numbered` the bar is always there and says "Page N"; without it,
 * the bar shows only when there is another page to go to.
 */
export function CursorPager({
  pages,
  next,
  numbered = false,
}: {
  pages: CursorPages;
  next: string | null | undefined;
  numbered?: boolean;
}) {
  if (!numbered && pages.page < 2 && !next) return null;
  return (
    <Group>
      <Button variant="default" disabled={pages.page < 2} onClick={pages.previous}>
        Previous
      </Button>
      <Button variant="default" disabled={!next} onClick={() => next && pages.next(next)}>
        Next
      </Button>
      {numbered && (
        <Text size="sm" c="dimmed">
          Page {pages.page}
        </Text>
      )}
    </Group>
  );
}
