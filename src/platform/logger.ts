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

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;

/**
 * A request's logger (Fastify's childLoggerFactory): the pino child with the request id is made on the request's
 * first log line, not for every request. Making it runs the redaction over its bindings (~4 % of a cheap request's
 * CPU), and most requests write no line of their own: the one request line is written by the app's root logger.
 */
export class RequestLogger {
  #child: Logger | null = null;
  constructor(
    private readonly parent: Logger,
    private readonly bindings: pino.Bindings,
    private readonly options: pino.ChildLoggerOptions,
  ) {}
  private get real(): Logger {
    this.#child ??= this.parent.child(this.bindings, this.options);
    return this.#child;
  }
  get level(): string {
    return (this.#child ?? this.parent).level;
  }
  set level(level: string) {
    this.real.level = level;
  }
  // Methods on the prototype, not per-instance arrow functions: one object per request and nothing else.
  fatal(...a: unknown[]): void {
    this.write('fatal', a);
  }
  error(...a: unknown[]): void {
    this.write('error', a);
  }
  warn(...a: unknown[]): void {
    this.write('warn', a);
  }
  info(...a: unknown[]): void {
    this.write('info', a);
  }
  debug(...a: unknown[]): void {
    this.write('debug', a);
  }
  trace(...a: unknown[]): void {
    this.write('trace', a);
  }
  silent(): void {}
  child(bindings: pino.Bindings, options?: pino.ChildLoggerOptions): Logger {
    return this.real.child(bindings, options);
  }
  isLevelEnabled(level: string): boolean {
    return (this.#child ?? this.parent).isLevelEnabled(level);
  }
  private write(level: (typeof LEVELS)[number], args: unknown[]): void {
    if (!this.isLevelEnabled(level)) return;
    (this.real[level] as (...a: unknown[]) => void)(...args);
  }
}
