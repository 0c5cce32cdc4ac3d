// The only way the console talks to the API: openapi-fetch over the types generated from /openapi.json.
// Every request carries the in-memory access token; a 401 triggers one refresh (single flight) and one retry;
// a 428 `mfa_enrollment_required` sends the user to the enrolment page; a 403 `step_up_required` asks for a fresh
// proof (the prompt the signed-in frame registers) and sends the request once more.
import createClient from 'openapi-fetch';
import type { paths } from './schema';
import { csrfToken, session, type TokenResponse } from './session';

export interface ApiErrorBody {
  error?: string;
  message?: string;
  code?: string;
  retryAfter?: number;
  details?: {
    fieldErrors?: Record<string, string[]>;
    formErrors?: string[];
    feedback?: { warning?: string; suggestions?: string[] };
  };
  [k: string]: unknown;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: ApiErrorBody,
  ) {
    super(body.message ?? `Request failed (${status})`);
    this.name = 'ApiError';
  }
  get code() {
    return this.body.code;
  }
}

type Listener = (e: { kind: 'enrolment' | 'signed-out' }) => void;
const listeners = new Set<Listener>();
export const onSessionEvent = (l: Listener) => {
  listeners.add(l);
  return () => {
    listeners.delete(l);
  };
};
const emit = (kind: 'enrolment' | 'signed-out') => {
  for (const l of listeners) l({ kind });
};

/** What a 403 `step_up_required` asks for: a fresh proof by one of `methods` (src/http/step-up.ts). */
export interface StepUpRequest {
  methods: string[];
  maxAgeSeconds?: number;
}
type StepUpHandler = (req: StepUpRequest) => Promise<boolean>;
let stepUpHandler: StepUpHandler | null = null;
/** The signed-in frame registers the prompt: a risky request that needs a fresh proof asks for it, then runs once more. */
export const onStepUpRequired = (h: StepUpHandler) => {
  stepUpHandler = h;
  return () => {
    if (stepUpHandler === h) stepUpHandler = null;
  };
};

let refreshing: Promise<boolean> | null = null;

/** Exchanges the refresh cookie for a new access token; one request at a time however many callers wait. */
export function refreshSession(): Promise<boolean> {
  refreshing ??= (async () => {
    const csrf = csrfToken();
    if (!csrf) return false;
    const res = await fetch('/api/v1/auth/refresh', {
      method: 'POST',
      headers: { 'x-service-csrf': csrf },
      credentials: 'same-origin',
    });
    if (!res.ok) return false;
    session.signedIn((await res.json()) as TokenResponse);
    return true;
  })()
    .catch(() => false)
    .finally(() => {
      refreshing = null;
    });
  return refreshing;
}

const NO_REFRESH =
  /\/api\/v1\/auth\/(login|refresh|logout|register|register-partner|forgot-password|reset-password|accept-invite|invite\/preview|mfa\/verify|mfa\/sms\/send|mfa\/passkey\/|passkey\/login\/)|\/api\/v1\/sso\/exchange/;

/** A 401 that refuses a code the person typed (not a dead token): refreshing and sending it again would submit it twice. */
async function refusesCode(res: Response): Promise<boolean> {
  try {
    const body = (await res.clone().json()) as { code?: string };
    return body.code === 'invalid_mfa_code';
  } catch {
    return false;
  }
}

async function authFetch(input: Request): Promise<Response> {
  const retry = input.clone();
  const afterStepUp = input.clone();
  const send = (req: Request) => {
    const token = session.token();
    if (token) req.headers.set('authorization', `Bearer ${token}`);
    return fetch(req);
  };
  let res = await send(input);
  if (res.status === 401 && session.token() && !NO_REFRESH.test(input.url) && !(await refusesCode(res))) {
    if (await refreshSession()) res = await send(retry);
    else {
      session.clear();
      emit('signed-out');
    }
  }
  if (res.status === 403 && stepUpHandler && !/\/api\/v1\/auth\/step-up/.test(input.url)) {
    const body = (await res
      .clone()
      .json()
      .catch(() => ({}))) as ApiErrorBody;
    if (body.code === 'step_up_required') {
      const methods = Array.isArray(body.methods) ? (body.methods as string[]) : [];
      if (
        await stepUpHandler({
          methods,
          maxAgeSeconds: typeof body.maxAgeSeconds === 'number' ? body.maxAgeSeconds : undefined,
        })
      )
        res = await send(afterStepUp);
    }
  }
  if (res.status === 428) {
    const body = (await res
      .clone()
      .json()
      .catch(() => ({}))) as ApiErrorBody;
    if (body.code === 'mfa_enrollment_required') emit('enrolment');
  }
  return res;
}

export const api = createClient<paths>({ baseUrl: '', credentials: 'same-origin', fetch: authFetch });

/** Unwraps an openapi-fetch result: the data, or an ApiError carrying the catalogued code. */
export async function call<T>(p: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await p;
  if (!response.ok) {
    const body = (
      error && typeof error === 'object' ? error : { message: String(error ?? response.statusText) }
    ) as ApiErrorBody;
    if (response.status === 429 && body.retryAfter === undefined) {
      const h = Number(response.headers.get('retry-after'));
      if (Number.isFinite(h)) body.retryAfter = h;
    }
    throw new ApiError(response.status, body);
  }
  return data as T;
}
