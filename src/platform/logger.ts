import { pino, type Logger } from 'pino';

/** Paths that must never reach a log line, wherever they appear. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-service-csrf"]',
  'res.headers["set-cookie"]',
  '*.password',
  '*.currentPassword',
  '*.newPassword',
  '*.token',
  '*.tempToken',
  '*.accessToken',
  '*.refreshToken',
  '*.code',
  '*.secret',
  '*.clientSecret',
  '*.recoveryCodes',
  '*.enrollmentKey',
  '*.key',
  '*.agentToken',
];

/** Query-string parameters whose values are credentials (SSO code and state, links' tokens). */
const SENSITIVE_QUERY = /([?&](?:code|state|token|ssoCode|access_token|id_token)=)[^&#]*/gi;

export const scrubUrl = (url: string) => url.replace(SENSITIVE_QUERY, '$1[REDACTED]');

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
      base: { service: 'gatehouse' },
      timestamp: pino.stdTimeFunctions.isoTime,
      serializers: {
        req: (req: { id?: string; method?: string; url?: string; ip?: string }) => ({
          id: req.id,
          method: req.method,
          url: req.url ? scrubUrl(req.url) : req.url,
          ip: req.ip,
        }),
        res: (res: { statusCode?: number }) => ({ statusCode: res.statusCode }),
      },
    },
    destination,
  );
}
