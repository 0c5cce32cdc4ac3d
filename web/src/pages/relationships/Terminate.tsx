// Ending a relationship, from either side: the dialog says what goes (which partner's staff lose which roles where)
// before anything is done.
import { useQueryClient } from '@tanstack/react-query';
import { api, call } from '../../api/client';
import { ConfirmDialog, useConfirmed } from '../../components/ConfirmDialog';
import { reachPhrase, type Relationship } from '../../hooks/relationships';
import { done } from '../onboarding/common';

export function useTerminate(onDone?: (r: Relationship) => void) {
  const qc = useQueryClient();
  const t = useConfirmed(
    (r: Relationship) => call(api.POST('/api/v1/relationships/{id}/terminate', { params: { path: { id: r.id } } })),
    (r) => {
      done(`“${r.name}” is terminated: ${r.partnerName}’s staff no longer reach ${r.orgName} through it.`);
      void qc.invalidateQueries({ queryKey: ['relationships'] });
      onDone?.(r);
    },
  );
  const r = t.target;
  const dialog = r ? (
    <ConfirmDialog title={`Terminate “${r.name}”?`} action="Terminate" {...t.dialog}>
      {r.status === 'draft' || r.status === 'approval_pending'
        ? `The ${r.status === 'draft' ? 'draft' : 'request'} is withdrawn: it can no longer be approved. `
        : `${r.partnerName}’s staff lose what it gives them in ${r.orgName} on their next request: the roles ${r.roles
            .map((x) => x.name)
            .join(', ')}, over ${reachPhrase(r)}. `}
      It cannot be undone: access again takes a new relationship and a new approval by the organisation.
    </ConfirmDialog>
  ) : null;
  return { ask: t.ask, dialog };
}
