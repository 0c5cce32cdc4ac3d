// The governor's mails, built like every other mail (one builder, every value escaped): a freeze set or lifted goes
// to both sides' admins.
import { build } from '../../platform/mail-template.js';

export const governorMails = {
  freezeChanged: (
    to: string,
    p: { frozen: boolean; where: string; partnerName: string; actor: string; reason: string | null; url: string },
  ) =>
    build(
      p.frozen ? 'freeze_set' : 'freeze_lifted',
      to,
      p.frozen ? `Destructive actions are frozen: ${p.where}` : `The freeze is lifted: ${p.where}`,
      [
        p.frozen
          ? `${p.actor} froze every destructive permission (running scripts, remote control, removing devices, changing users and roles) for ${p.where}. Only the break-glass account of ${p.partnerName} passes, with a stated reason.`
          : `${p.actor} lifted the freeze of destructive permissions for ${p.where}.`,
        ...(p.reason ? [`Stated reason: ${p.reason}`] : []),
        'Every admin of the partner and of the organisations concerned receives this mail. If this was not expected, review it now.',
      ],
      { label: 'Review the audit trail', url: p.url },
    ),
};
