// The table of a console list: its column headings, a last column for the row's buttons (its heading read by screen
// readers only), and one row per record, keyed by id.
import { Table } from '@mantine/core';
import type { ReactNode } from 'react';

/** `columns`: the headings (false leaves one out); `children(row)`: the cells of one row. */
export function DataTable<R extends { id: string }>({
  testId,
  columns,
  hidden,
  rows,
  striped = true,
  highlightOnHover = false,
  children,
}: {
  testId: string;
  columns: (string | false)[];
  /** The heading of the last column, for screen readers. */
  hidden: string;
  rows: readonly R[];
  striped?: boolean;
  highlightOnHover?: boolean;
  children: (row: R) => ReactNode;
}) {
  return (
    <Table striped={striped} highlightOnHover={highlightOnHover} data-testid={testId}>
      <Table.Thead>
        <Table.Tr>
          {columns
            .filter((c): c is string => c !== false)
            .map((c) => (
              <Table.Th key={c}>{c}</Table.Th>
            ))}
          <Table.Th>
            <span className="gh-visually-hidden">{hidden}</span>
          </Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {rows.map((r) => (
          <Table.Tr key={r.id}>{children(r)}</Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}
