import { z } from 'zod';

export const invitationJson = z
  .object({
    id: z.uuid(),
    kind: z.enum(['partner', 'organization']),
    partnerId: z.uuid(),
    orgId: z.uuid().nullable(),
    tenantName: z.string().describe('The name of the partner or organisation offering the membership'),
    roleId: z.uuid(),
    roleName: z.string(),
    invitedAt: z.string().nullable(),
    invitedBy: z.string().nullable().describe('Who invited the account, when known'),
  })
  .meta({ id: 'Invitation' });

export const acceptedInvitation = z.object({
  id: z.uuid(),
  status: z.literal('active'),
  kind: z.enum(['partner', 'organization']),
  partnerId: z.uuid(),
  orgId: z.uuid().nullable(),
  roleId: z.uuid(),
});

export const invitationIdParam = z.strictObject({ id: z.uuid() });
export const acceptLinkBody = z.strictObject({ token: z.string().min(16).max(512) });
