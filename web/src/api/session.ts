// The signed-in session, in memory only: the access token never touches localStorage, sessionStorage or a readable
// cookie. A reload restores it through the HttpOnly refresh cookie and the CSRF cookie.
import { useSyncExternalStore } from 'react';

export interface TokenResponse {
  accessToken: string;
  expiresIn: number;
  user: { id: string; email: string; name: string | null; [k: string]: unknown };
  mfaEnrollmentRequired: boolean;
}

interface SessionState {
  accessToken: string | null;
  user: TokenResponse['user'] | null;
  mfaEnrollmentRequired: boolean;
  /** True once the start-up refresh has been tried (so routes know whether "signed out" is final). */
  ready: boolean;
}

let state: SessionState = { accessToken: null, user: null, mfaEnrollmentRequired: false, ready: false };
const listeners = new Set<() => void>();

function set(next: Partial<SessionState>) {
  state = { ...state, ...next };
  for (const l of listeners) l();
}

export const session = {
  get: () => state,
  token: () => state.accessToken,
  signedIn(t: TokenResponse) {
    set({ accessToken: t.accessToken, user: t.user, mfaEnrollmentRequired: t.mfaEnrollmentRequired, ready: true });
  },
  enrolled() {
    set({ mfaEnrollmentRequired: false });
  },
  clear() {
    set({ accessToken: null, user: null, mfaEnrollmentRequired: false, ready: true });
  },
  ready() {
    set({ ready: true });
  },
  subscribe(l: () => void) {
    listeners.add(l);
    return () => {
      listeners.delete(l);
    };
  },
};

export function useSession(): SessionState {
  return useSyncExternalStore(session.subscribe, session.get);
}

/** The CSRF cookie is the one cookie scripts may read; its value goes in `x-service-csrf` on refresh. */
export function csrfToken(): string | null {
  const m = document.cookie.match(/(?:^|;\s*)service_csrf_token=([^;]+)/);
  return m?.[1] ? decodeURIComponent(m[1]) : null;
}
