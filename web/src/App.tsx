// Routes, each page loaded on demand (the sign-in page's first load carries only what it needs).
import { lazy, Suspense, useEffect, type ReactNode } from 'react';
import { Navigate, Route, Routes, useLocation, useNavigate } from 'react-router';
import { onSessionEvent, refreshSession } from './api/client';
import { Loading } from './components/Loading';
import { session, useSession } from './api/session';

const Login = lazy(() => import('./pages/auth/Login'));
const ForgotPassword = lazy(() => import('./pages/auth/ForgotPassword'));
const ResetPassword = lazy(() => import('./pages/auth/ResetPassword'));
const VerifyEmail = lazy(() => import('./pages/auth/VerifyEmail'));
const Invite = lazy(() => import('./pages/auth/Invite'));
const Register = lazy(() => import('./pages/auth/Register'));
const Setup = lazy(() => import('./pages/auth/Setup'));
const EnrollMfa = lazy(() => import('./pages/auth/EnrollMfa'));
const Shell = lazy(() => import('./pages/Shell'));

/** Tries the refresh cookie once on start: a reload keeps the session without the token ever being stored. */
function useRestoreSession() {
  useEffect(() => {
    if (session.get().ready) return;
    void refreshSession().then((ok) => {
      if (!ok) session.ready();
    });
  }, []);
}

function RequireSession({ children }: { children: ReactNode }) {
  const s = useSession();
  const loc = useLocation();
  if (!s.ready) return <Loading />;
  // The hash goes along: the SSO callback lands on the requested path with `#ssoCode=`, which the sign-in page exchanges.
  if (!s.accessToken)
    return (
      <Navigate
        to={{ pathname: '/login', search: `?next=${encodeURIComponent(loc.pathname + loc.search)}`, hash: loc.hash }}
        replace
      />
    );
  if (s.mfaEnrollmentRequired && loc.pathname !== '/enroll-mfa') return <Navigate to="/enroll-mfa" replace />;
  return <>{children}</>;
}

export function App() {
  useRestoreSession();
  const navigate = useNavigate();
  useEffect(
    () =>
      onSessionEvent((e) => {
        if (e.kind === 'enrolment') navigate('/enroll-mfa');
        if (e.kind === 'signed-out') navigate('/login');
      }),
    [navigate],
  );
  return (
    <Suspense fallback={<Loading />}>
      <Routes>
        <Route path="/login" element={<Login />} />
        <Route path="/forgot-password" element={<ForgotPassword />} />
        <Route path="/reset-password" element={<ResetPassword />} />
        <Route path="/verify-email" element={<VerifyEmail />} />
        <Route path="/invite" element={<Invite />} />
        <Route path="/accept-invite" element={<Invite />} />
        <Route path="/register" element={<Register />} />
        <Route path="/setup" element={<Setup />} />
        <Route
          path="/enroll-mfa"
          element={
            <RequireSession>
              <EnrollMfa />
            </RequireSession>
          }
        />
        <Route
          path="/*"
          element={
            <RequireSession>
              <Shell />
            </RequireSession>
          }
        />
      </Routes>
    </Suspense>
  );
}
