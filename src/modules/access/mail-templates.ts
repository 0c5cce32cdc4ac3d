// Mails of access governance (issue 18 §2), built like the account mails (one builder, every value escaped).
import { build } from '../auth/mail-templates.js';

const LABEL: Record<string, string> = {
  allowed: "allowed (the partner's staff reach it as their roles allow)",
  suspended: "suspended (no one from the partner reaches it, except its break-glass account with a stated reason)",
};

export const accessMails = {
  mspAccessChanged: (to: string, p: { orgName: string; partnerName: string; from: string; to: string; actor: string; url: string }) =>
    build('msp_access_changed', to, `Partner access to ${p.orgName} is now ${p.to.replace('_', ' ')}`, [
      `${p.actor} changed how ${p.partnerName} may reach ${p.orgName}: from ${LABEL[p.from] ?? p.from} to ${LABEL[p.to] ?? p.to}.`,
      'Every admin of the organisation and of the partner receives this mail. If the change was not expected, review it now.',
    ], { label: 'Review the organisation', url: p.url }),
  breakGlassUsed: (to: string, p: { orgName: string; partnerName: string; actor: string; reason: string; ip: string; url: string }) =>
    build('break_glass_used', to, `Break-glass access to ${p.orgName}`, [
      `${p.actor}, the break-glass account of ${p.partnerName}, reached ${p.orgName} although its partner access is suspended or needs approval.`,
      `Stated reason: ${p.reason}`,
      `Address: ${p.ip}. Every admin of the organisation and of the partner receives this mail; the use is in the audit trail.`,
    ], { label: 'Review the audit trail', url: p.url }),
};
