// Mails of access governance, built like the account mails (one builder, every value escaped). In the
// access core because two modules send them: tenants (an mspAccess change) and access (break-glass, the lapse).
import { build } from '../platform/mail-template.js';

const LABEL: Record<string, string> = {
  allowed: "allowed (the partner's staff reach it as their roles allow)",
  suspended: 'suspended (no one from the partner reaches it, except its break-glass account with a stated reason)',
};

export const accessMails = {
  mspAccessChanged: (
    to: string,
    p: { orgName: string; partnerName: string; from: string; to: string; actor: string; url: string },
  ) =>
    build(
      'msp_access_changed',
      to,
      `Partner access to ${p.orgName} is now ${p.to.replace('_', ' ')}`,
      [
        `${p.actor} changed how ${p.partnerName} may reach ${p.orgName}: from ${LABEL[p.from] ?? p.from} to ${LABEL[p.to] ?? p.to}.`,
        'Every admin of the organisation and of the partner receives this mail. If the change was not expected, review it now.',
      ],
      { label: 'Review the organisation', url: p.url },
    ),
  breakGlassUsed: (
    to: string,
    p: { orgName: string; partnerName: string; actor: string; reason: string; ip: string; url: string },
  ) =>
    build(
      'break_glass_used',
      to,
      `Break-glass access to ${p.orgName}`,
      [
        `${p.actor}, the break-glass account of ${p.partnerName}, reached ${p.orgName} although its partner access is suspended or needs approval.`,
        `Stated reason: ${p.reason}`,
        `Address: ${p.ip}. Every admin of the organisation and of the partner receives this mail; the use is in the audit trail.`,
      ],
      { label: 'Review the audit trail', url: p.url },
    ),
  breakGlassDesignated: (
    to: string,
    p: { partnerName: string; actor: string; designated: string | null; previous: string | null; url: string },
  ) =>
    build(
      'break_glass_designated',
      to,
      p.designated
        ? `${p.partnerName} has a new break-glass account`
        : `${p.partnerName} no longer has a break-glass account`,
      [
        p.designated
          ? `${p.actor} designated ${p.designated} as the break-glass account of ${p.partnerName}${p.previous ? ` (it was ${p.previous})` : ''}. That account passes IP allow-lists and, with a stated reason, organisations that suspended partner access.`
          : `${p.actor} cleared the break-glass account of ${p.partnerName}${p.previous ? ` (it was ${p.previous})` : ''}.`,
        'Every Partner Admin receives this mail. If the change was not expected, review it now.',
      ],
      { label: 'Review the partner settings', url: p.url },
    ),
  standingAccessLapsing: (
    to: string,
    p: { memberName: string; partnerName: string; lapsesOn: string; days: number; url: string },
  ) =>
    build(
      'standing_access_lapsing',
      to,
      `Your standing access at ${p.partnerName} lapses on ${p.lapsesOn}`,
      [
        `Your standing access to ${p.partnerName}'s organisations has not been used for a while. ${p.partnerName} lets standing access lapse after ${p.days} days unused.`,
        `Unless you sign in to ${p.partnerName} before ${p.lapsesOn}, it becomes just-in-time: you then request access to an organisation when you need it.`,
        'The Partner Admins receive a note of this too.',
      ],
      { label: 'Sign in', url: p.url },
    ),
  standingAccessLapsingAdmins: (
    to: string,
    p: { partnerName: string; members: { email: string; lapsesOn: string }[]; more: number; days: number; url: string },
  ) =>
    build(
      'standing_access_lapsing_admins',
      to,
      `Standing access of ${p.members.length + p.more} member(s) of ${p.partnerName} is about to lapse`,
      [
        `These members of ${p.partnerName} have not used their standing organisation access for a while; after ${p.days} days unused it becomes just-in-time (eligible) unless they sign in before the date given:`,
        ...p.members.map((m) => `${m.email}: lapses on ${m.lapsesOn}`),
        ...(p.more ? [`and ${p.more} more.`] : []),
        "Partner Admins are exempt. To keep a member's standing access, ask them to sign in.",
      ],
      { label: 'Review the members', url: p.url },
    ),
};
