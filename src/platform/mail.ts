// Outbound mail over SMTP (nodemailer). Without SMTP_URL, development writes the mail to the log.
import type { Transporter } from 'nodemailer';
import type { Logger } from 'pino';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
  /** A label for logs and metrics: invitation, password_reset, ... */
  template: string;
}

export interface Mailer {
  readonly configured: boolean;
  send(msg: MailMessage): Promise<void>;
  close(): void;
}

export function createMailer(opts: { smtpUrl?: string; from: string; logger: Logger; isProduction: boolean }): Mailer {
  if (!opts.smtpUrl) {
    return {
      configured: false,
      async send(msg) {
        // The log is the mail channel in development; production logs only that a mail was dropped.
        if (opts.isProduction)
          opts.logger.warn({ template: msg.template, to: msg.to }, 'mail not sent: SMTP_URL is not set');
        else
          opts.logger.info(
            { mail: { to: msg.to, subject: msg.subject, text: msg.text } },
            'mail (development: no SMTP_URL, written to the log)',
          );
      },
      close() {},
    };
  }
  // nodemailer (~12 MB) is loaded with the first mail, not at start. Bounded waits: a hung server fails the attempt
  // (the outbox retries it) well within the outbox lease.
  const smtpUrl = opts.smtpUrl;
  let transport: Promise<Transporter> | null = null;
  const open = () =>
    (transport ??= import('nodemailer').then(({ default: nodemailer }) =>
      nodemailer.createTransport({
        url: smtpUrl,
        connectionTimeout: 10_000,
        greetingTimeout: 10_000,
        socketTimeout: 30_000,
      }),
    ));
  return {
    configured: true,
    async send(msg) {
      await (await open()).sendMail({
        from: opts.from,
        to: msg.to,
        subject: msg.subject,
        text: msg.text,
        html: msg.html,
      });
      opts.logger.info({ template: msg.template, to: msg.to }, 'mail sent');
    },
    close: () => void transport?.then((t) => t.close()),
  };
}
