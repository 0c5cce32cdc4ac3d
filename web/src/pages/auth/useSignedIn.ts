import { useNavigate, useSearchParams } from 'react-router';
import { session, type TokenResponse } from '../../api/session';

/** Keeps the tokens in memory and goes on: to enrolment when the policy demands a second factor, else onwards. */
export function useSignedIn() {
  const navigate = useNavigate();
  const [params] = useSearchParams();
  return (t: TokenResponse) => {
    session.signedIn(t);
    const next = params.get('next');
    const safe = next?.startsWith('/') && !next.startsWith('//') ? next : '/';
    navigate(t.mfaEnrollmentRequired ? '/enroll-mfa' : safe, { replace: true });
  };
}
