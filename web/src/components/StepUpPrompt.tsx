// The step-up prompt: when a risky action answers 403 `step_up_required`, ask for a fresh proof by one of the
// methods the API accepts (password, authenticator code, text-message code, passkey), renew the token, and let the
// action run again.
import { Alert, Button, Divider, Modal, PasswordInput, PinInput, Stack, Text } from '@mantine/core';
import { startAuthentication } from '@simplewebauthn/browser';
import { useEffect, useState } from 'react';
import { api, call, onStepUpRequired, type StepUpRequest } from '../api/client';
import { session } from '../api/session';
import { explain } from '../lib/errors';

interface Pending extends StepUpRequest {
  resolve: (ok: boolean) => void;
}

function renew(r: { accessToken: string; expiresIn: number }) {
  const s = session.get();
  if (s.user)
    session.signedIn({
      accessToken: r.accessToken,
      expiresIn: r.expiresIn,
      user: s.user,
      mfaEnrollmentRequired: s.mfaEnrollmentRequired,
    });
}

function passkeyProblem(err: unknown): string {
  if (err instanceof Error && (err.name === 'NotAllowedError' || err.name === 'AbortError'))
    return 'The passkey request was cancelled or timed out.';
  return explain(err);
}

/** Mounted once in the signed-in frame. */
export function StepUpPrompt() {
  const [pending, setPending] = useState<Pending | null>(null);
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const [smsCode, setSmsCode] = useState('');
  /** The last four digits of the phone a step-up code was texted to. */
  const [smsTo, setSmsTo] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(
    () =>
      onStepUpRequired(
        (req) =>
          new Promise<boolean>((resolve) => {
            setPassword('');
            setCode('');
            setSmsCode('');
            setSmsTo(null);
            setError(null);
            setPending({ ...req, resolve });
          }),
      ),
    [],
  );

  const finish = (ok: boolean) => {
    pending?.resolve(ok);
    setPending(null);
  };
  const prove = async (body: { password: string } | { code: string } | { credential: never }) => {
    setBusy(true);
    setError(null);
    try {
      renew(await call(api.POST('/api/v1/auth/step-up', { body })));
      finish(true);
    } catch (err) {
      setError(explain(err));
    } finally {
      setBusy(false);
    }
  };
  const passkey = async () => {
    setBusy(true);
    setError(null);
    try {
      const { options } = await call(api.POST('/api/v1/auth/step-up/options'));
      const credential = await startAuthentication({ optionsJSON: options as never });
      renew(await call(api.POST('/api/v1/auth/step-up', { body: { credential: credential as never } })));
      finish(true);
    } catch (err) {
      setError(passkeyProblem(err));
    } finally {
      setBusy(false);
    }
  };

  const textMe = async () => {
    setBusy(true);
    setError(null);
    try {
      setSmsTo((await call(api.POST('/api/v1/auth/step-up/sms'))).phoneLast4);
    } catch (err) {
      setError(explain(err));
    } finally {
      setBusy(false);
    }
  };

  const methods = pending?.methods ?? [];
  const minutes = pending?.maxAgeSeconds ? Math.max(1, Math.round(pending.maxAgeSeconds / 60)) : null;
  const parts = [
    methods.includes('passkey') && (
      <Button key="passkey" onClick={() => void passkey()} loading={busy}>
        Use my passkey
      </Button>
    ),
    methods.includes('totp') && (
      <form
        key="totp"
        onSubmit={(e) => {
          e.preventDefault();
          void prove({ code });
        }}
      >
        <Stack gap="xs">
          <Text size="sm" id="step-up-code">
            The 6-digit code from your authenticator app:
          </Text>
          <PinInput
            length={6}
            type="number"
            oneTimeCode
            value={code}
            onChange={setCode}
            aria-label="Authenticator code"
          />
          <Button type="submit" loading={busy} disabled={code.length < 6}>
            Confirm with the code
          </Button>
        </Stack>
      </form>
    ),
    methods.includes('sms') &&
      (smsTo === null ? (
        <Button key="sms" variant="default" onClick={() => void textMe()} loading={busy}>
          Text me a code
        </Button>
      ) : (
        <form
          key="sms"
          onSubmit={(e) => {
            e.preventDefault();
            void prove({ code: smsCode });
          }}
        >
          <Stack gap="xs">
            <Text size="sm">The 6-digit code texted to the phone ending in {smsTo}:</Text>
            <PinInput
              length={6}
              type="number"
              oneTimeCode
              value={smsCode}
              onChange={setSmsCode}
              aria-label="Text-message code"
            />
            <Button type="submit" loading={busy} disabled={smsCode.length < 6}>
              Confirm with the texted code
            </Button>
          </Stack>
        </form>
      )),
    methods.includes('password') && (
      <form
        key="password"
        onSubmit={(e) => {
          e.preventDefault();
          void prove({ password });
        }}
      >
        <Stack gap="xs">
          <PasswordInput
            label="Your password"
            autoComplete="current-password"
            value={password}
            onChange={(e) => setPassword(e.currentTarget.value)}
            required
          />
          <Button type="submit" loading={busy} disabled={!password}>
            Confirm with the password
          </Button>
        </Stack>
      </form>
    ),
  ].filter(Boolean);

  return (
    // Above any dialog the action came from.
    <Modal opened={!!pending} onClose={() => finish(false)} title="Confirm it is you" zIndex={1000}>
      <Stack>
        <Text size="sm">
          This action hands out or changes access, so it needs a recent proof that you are at the keyboard
          {minutes ? ` (within the last ${minutes} minutes)` : ''}. Your action continues once you confirm.
        </Text>
        {error && (
          <Alert color="red" role="alert">
            {error}
          </Alert>
        )}
        {parts.length === 0 ? (
          <Alert color="yellow">
            This session cannot prove itself again here: sign out and sign in again, then retry the action.
          </Alert>
        ) : (
          // biome-ignore lint/suspicious/noArrayIndexKey: the dividers are positional and never reorder
          parts.flatMap((p, i) => (i === 0 ? [p] : [<Divider key={`or-${i}`} label="or" labelPosition="center" />, p]))
        )}
        <Button variant="default" onClick={() => finish(false)}>
          Cancel
        </Button>
      </Stack>
    </Modal>
  );
}
