// The mails of delegated-access relationships, built like every other mail (one builder, every value escaped).
import { build } from '../../platform/mail-template.js';

export const relationshipMails = {
  approvalRequested: (
    to: string,
    p: { orgName: string; partnerName: string; name: string; ends: string; actor: string; url: string },
  ) =>
    build(
      'relationship_approval_requested',
      to,
      `${p.partnerName} asks ${p.orgName} to approve delegated access "${p.name}"`,
      [
        `${p.actor} of ${p.partnerName} asks ${p.orgName} to approve the delegated-access relationship "${p.name}": the roles its staff may hold in ${p.orgName}, where, and for ${p.ends}.`,
        `An admin of ${p.orgName} reviews exactly what is asked and approves or declines it. The request lapses after 90 days. Every admin of the organisation and of the partner receives this mail.`,
      ],
      { label: 'Review the request', url: p.url },
    ),
  ending: (
    to: string,
    p: { orgName: string; partnerName: string; name: string; endsAt: string; days: number; url: string },
  ) =>
    build(
      'relationship_ending',
      to,
      p.days === 0
        ? `Delegated access "${p.name}" of ${p.partnerName} to ${p.orgName} has ended`
        : `Delegated access "${p.name}" of ${p.partnerName} to ${p.orgName} ends in ${p.days} day${p.days === 1 ? '' : 's'}`,
      [
        p.days === 0
          ? `The relationship "${p.name}" ended on ${p.endsAt}: ${p.partnerName}'s staff no longer reach ${p.orgName} through it.`
          : `The relationship "${p.name}" between ${p.partnerName} and ${p.orgName} ends on ${p.endsAt}. After that, ${p.partnerName}'s staff no longer reach ${p.orgName} through it; a new relationship, approved by ${p.orgName}, continues it.`,
        'Every admin of the organisation and of the partner receives this mail.',
      ],
      { label: 'Review the relationship', url: p.url },
    ),
};
