// The SMS edge (src/platform/sms.ts): Twilio's Messages API with form To/From/Body and basic auth, or the log (message
// text only outside production).
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../../src/config.js';
import { createLogger } from '../../src/platform/logger.js';
import { createSmsSender } from '../../src/platform/sms.js';
import { startSmsSink, type SmsSink } from '../support/sms-sink.js';

let sink: SmsSink;
beforeAll(async () => {
  sink = await startSmsSink();
});
afterAll(async () => sink?.close());

function capture() {
  let text = '';
  const logger = createLogger('info', new Writable({ write: (c, _e, cb) => ((text += c.toString()), cb()) }));
  return { logger, text: () => text };
}

const baseEnv = { NODE_ENV: 'test', ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64') };

describe('SMS_PROVIDER=twilio', () => {
  it('posts To/From/Body as a form with basic auth to /2010-04-01/Accounts/:sid/Messages.json', async () => {
    const config = loadConfig({ ...baseEnv, ...sink.env() });
    const log = capture();
    await createSmsSender(config, log.logger).send('+12025550111', 'Your code is 424242');
    const msg = await sink.waitFor('+12025550111');
    expect(msg).toMatchObject({
      to: '+12025550111',
      from: sink.from,
      body: 'Your code is 424242',
      accountSid: sink.accountSid,
    });
    expect(log.text()).not.toContain('424242');
    expect(log.text()).not.toContain('+12025550111');
  });

  it('a refusal by the provider (wrong credentials) is an error, and neither the token nor the text is in it', async () => {
    const config = loadConfig({ ...baseEnv, ...sink.env({ TWILIO_AUTH_TOKEN: 'not-the-token-0123456789' }) });
    const refusedBefore = sink.refused.length;
    const err = await createSmsSender(config, capture().logger)
      .send('+12025550112', 'Your code is 515151')
      .catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(/401/);
    expect((err as Error).message).not.toContain('not-the-token');
    expect((err as Error).message).not.toContain('515151');
    expect(sink.refused.length).toBe(refusedBefore + 1);
    expect(sink.countTo('+12025550112')).toBe(0);
  });

  it('TWILIO_* are all required with SMS_PROVIDER=twilio', () => {
    expect(() => loadConfig({ ...baseEnv, SMS_PROVIDER: 'twilio', TWILIO_ACCOUNT_SID: 'AC1' })).toThrow(
      /TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN, TWILIO_FROM/,
    );
  });
});

describe('SMS_PROVIDER=log', () => {
  it('outside production the message is written to the log (the development channel)', async () => {
    const log = capture();
    await createSmsSender(loadConfig(baseEnv), log.logger).send('+12025550113', 'Your code is 313131');
    expect(log.text()).toContain('313131');
  });

  it('in production the text never reaches the log, only the last four digits', async () => {
    const config = { ...loadConfig(baseEnv), isProduction: true } as Config;
    const log = capture();
    await createSmsSender(config, log.logger).send('+12025550114', 'Your code is 717171');
    expect(log.text()).not.toContain('717171');
    expect(log.text()).not.toContain('+12025550114');
    expect(log.text()).toContain('0114');
  });
});
