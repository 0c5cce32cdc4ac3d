// Inviting a member: e-mail, name, role, and for a partner member which organisations it reaches; the roles offered
// are those the caller may assign.
import { Button, Modal, MultiSelect, Select, Stack, TextInput } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, call } from '../../api/client';
import { fieldsNamed, useFieldErrors } from '../../hooks/useFieldErrors';
import { FormError } from '../../components/FormError';
import { type Named, useOrganizations } from '../../hooks/organizations';

/** The API's fields that have their own input here (the rest of a refusal shows at the top). */
const fieldOf = fieldsNamed('email', 'name', 'roleId', 'orgAccess', 'orgIds', 'siteIds');

export function useAssignableRoles(orgId?: string, enabled = true) {
  return useQuery({
    queryKey: ['assignable-roles', orgId],
    enabled,
    queryFn: async () =>
      (await call(api.GET('/api/v1/users/roles', { params: { query: { orgId, limit: 200 } } }))).data as Named[],
  });
}

export function InviteModal({
  opened,
  onClose,
  orgId,
  partner,
}: {
  opened: boolean;
  onClose: () => void;
  orgId?: string;
  partner: boolean;
}) {
  const qc = useQueryClient();
  const roles = useAssignableRoles(orgId, opened);
  const orgs = useOrganizations(opened && partner);
  const sites = useQuery({
    queryKey: ['sites', orgId],
    enabled: opened && !!orgId,
    queryFn: async () =>
      (await call(api.GET('/api/v1/orgs/sites', { params: { query: { orgId: orgId!, limit: 200 } } }))).data as Named[],
  });
  const [email, setEmail] = useState('');
  const [name, setName] = useState('');
  const [roleId, setRoleId] = useState<string | null>(null);
  const [orgAccess, setOrgAccess] = useState<'all' | 'selected' | 'none'>('all');
  const [orgIds, setOrgIds] = useState<string[]>([]);
  const [siteIds, setSiteIds] = useState<string[]>([]);
  const errors = useFieldErrors(fieldOf, [email, name, roleId, orgAccess, orgIds, siteIds]);
  const fe = errors.fields;
  const invite = useMutation({
    mutationFn: () =>
      call(
        api.POST('/api/v1/users/invite', {
          body: {
            email,
            name,
            roleId: roleId!,
            ...(orgId ? { orgId, ...(siteIds.length ? { siteIds } : {}) } : {}),
            ...(partner ? { orgAccess, ...(orgAccess === 'selected' ? { orgIds } : {}) } : {}),
          },
        }),
      ),
    onSuccess: (r) => {
      notifications.show({
        color: 'green',
        message: r.inviteEmailSent
          ? `Invitation sent to ${email}.`
          : `${email} was added (they already have an account and were told by mail).`,
      });
      void qc.invalidateQueries({ queryKey: ['users'] });
      setEmail('');
      setName('');
      onClose();
    },
    onError: errors.show,
  });
  return (
    <Modal opened={opened} onClose={onClose} title="Invite a user">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          invite.mutate();
        }}
      >
        <Stack>
          <FormError text={errors.form} />
          <TextInput
            label="E-mail"
            type="email"
            required
            value={email}
            onChange={(e) => setEmail(e.currentTarget.value)}
            error={fe.email}
          />
          <TextInput
            label="Name"
            required
            value={name}
            onChange={(e) => setName(e.currentTarget.value)}
            error={fe.name}
          />
          <Select
            label="Role"
            required
            data={(roles.data ?? []).map((r) => ({ value: r.id, label: r.name }))}
            value={roleId}
            onChange={setRoleId}
            error={fe.roleId}
          />
          {partner && (
            <Select
              label="Organisation access"
              data={[
                { value: 'all', label: 'All organisations' },
                { value: 'selected', label: 'Selected organisations' },
                { value: 'none', label: 'None (partner settings only)' },
              ]}
              value={orgAccess}
              onChange={(v) => setOrgAccess((v as typeof orgAccess) ?? 'all')}
              allowDeselect={false}
              error={fe.orgAccess}
            />
          )}
          {partner && orgAccess === 'selected' && (
            <MultiSelect
              label="Organisations"
              data={(orgs.data ?? []).map((o) => ({ value: o.id, label: o.name }))}
              value={orgIds}
              onChange={setOrgIds}
              error={fe.orgIds}
            />
          )}
          {orgId && (
            <MultiSelect
              label="Sites"
              description="Leave empty for every site of the organisation."
              data={(sites.data ?? []).map((s) => ({ value: s.id, label: s.name }))}
              value={siteIds}
              onChange={setSiteIds}
              error={fe.siteIds}
            />
          )}
          <Button type="submit" loading={invite.isPending} disabled={!roleId || !email}>
            Send invitation
          </Button>
        </Stack>
      </form>
    </Modal>
  );
}
