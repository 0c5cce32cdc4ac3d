// Forced enrolment: the account's policy (role Force MFA, organisation or partner requireMfa) demands a second
// factor before anything else (the API answers 428 until then).
import { Button, Stack, Text } from '@mantine/core';
import { useNavigate } from 'react-router';
import { api } from '../../api/client';
import { session } from '../../api/session';
import { TotpSetup } from '../../components/TotpSetup';
import { AuthCard } from './AuthCard';

export default function EnrollMfa() {
  const navigate = useNavigate();
  const logout = async () => {
    await api.POST('/api/v1/auth/logout').catch(() => undefined);
    session.clear();
    navigate('/login', { replace: true });
  };
  return (
    <AuthCard
      title="Set up two-step verification"
      footer={
        <Button variant="subtle" onClick={() => void logout()}>
          Sign out
        </Button>
      }
    >
      <Stack>
        <Text size="sm">Your organisation requires a second factor. Set up an authenticator app to continue.</Text>
        <TotpSetup
          onEnabled={(t) => {
            // Keep the enrolment page up until the codes are saved.
            session.signedIn({ ...t, mfaEnrollmentRequired: true });
          }}
          onDone={() => {
            session.enrolled();
            navigate('/', { replace: true });
          }}
        />
      </Stack>
    </AuthCard>
  );
}
