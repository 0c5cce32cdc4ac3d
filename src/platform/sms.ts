// Outbound SMS: Twilio's Messages API (or anything that speaks it), or the log in development.
import type { Logger } from 'pino';
import type { Config } from '../config.js';

export interface SmsSender {
  send(to: string, body: string): Promise<void>;
}

export function createSmsSender(config: Config, logger: Logger): SmsSender {
  if (config.sms.provider === 'twilio') {
    const { apiBase, accountSid, authToken, from } = config.sms;
    const url = `${apiBase}/2010-04-01/Accounts/${encodeURIComponent(accountSid!)}/Messages.json`;
    const auth = `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString('base64')}`;
    return {
      async send(to, body) {
        const res = await fetch(url, {
          method: 'POST',
          headers: { authorization: auth, 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ To: to, From: from!, Body: body }),
          signal: AbortSignal.timeout(10_000),
        });
        if (!res.ok) throw new Error(`SMS provider answered ${res.status}`);
        logger.info({ to: `…${to.slice(-4)}` }, 'sms sent');
      },
    };
  }
  return {
    async send(to, body) {
      // The log is the SMS channel in development only; production never logs the message text.
      if (config.isProduction) logger.warn({ to: `…${to.slice(-4)}` }, 'sms not sent: SMS_PROVIDER=log');
      else logger.info({ sms: { to, body } }, 'sms (development: SMS_PROVIDER=log, written to the log)');
    },
  };
}
