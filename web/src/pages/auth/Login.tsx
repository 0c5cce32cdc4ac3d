// Sign-in: password, then the second factor the account uses (TOTP, SMS, passkey, or a recovery code);
// a passkey alone ("use a passkey instead"); single sign-on found from the e-mail's domain; the `#ssoCode=`
// hand-off from the SSO callback; `/login?error=` in words.
import { Alert, Anchor, Button, Divider, Group, PasswordInput, PinInput, Stack, Text, TextInput } from '@mantine/core';
import { browserSupportsWebAuthnAutofill, startAuthentication, WebAuthnAbortService } from '@simplewebauthn/browser';
import { useQuery } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { api, call } from '../../api/client';
import type { TokenResponse } from '../../api/session';
import { explain, loginErrorText } from '../../lib/errors';
import { AuthCard, FormError } from './AuthCard';
import { useSignedIn } from './useSignedIn';

interface Challenge {
  mfaMethod: 'totp' | 'sms' | 'passkey';
  tempToken: string;
  passkeyAvailable?: boolean;
  phoneLast4?: string;
}
interface Sso {
  ssoEnabled: boolean;
  providerName?: string;
  enforceSSO?: boolean;
  loginUrl?: string;
}

function passkeyError(err: unknown): string {
  if (err instanceof Error && (err.name === 'NotAllowedError' || err.name === 'AbortError'))
    return 'The passkey request was cancelled or timed out.';
  return explain(err);
}

export default function Login() {
  const [params] = useSearchParams();
  const signedIn = useSignedIn();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [challenge, setChallenge] = useState<Challenge | null>(null);
  const [sso, setSso] = useState<Sso | null>(null);
  const exchanged = useRef(false);
  // "Create an account" only while self-service registration is open (the API refuses it otherwise).
  const status = useQuery({ queryKey: ['setup-status'], queryFn: () => call(api.GET('/api/v1/setup/status')) });

  // SSO hand-off: the callback sends the browser to `/<path>#ssoCode=...`; the code is single-use, 60 s.
  useEffect(() => {
    const m = window.location.hash.match(/ssoCode=([^&]+)/);
    if (!m?.[1] || exchanged.current) return;
    exchanged.current = true;
    const code = decodeURIComponent(m[1]);
    history.replaceState(null, '', window.location.pathname + window.location.search);
    setBusy(true);
    call(api.POST('/api/v1/sso/exchange', { body: { code } }))
      .then((t) => signedIn(t as TokenResponse))
      .catch((e: unknown) => setError(explain(e)))
      .finally(() => setBusy(false));
  }, [signedIn]);

  // Passkey autofill (conditional mediation): once the e-mail field is focused, the browser offers the account's
  // passkeys among its suggestions (autocomplete="username webauthn"); picking one signs in without a password.
  // Started on focus, not on load: a visit that never uses the form spends no sign-in attempt of the address.
  // Cancelled quietly when the page leaves or "Use a passkey instead" starts a ceremony of its own.
  const signedInRef = useRef(signedIn);
  signedInRef.current = signedIn;
  const autofill = useRef<{ started: boolean; live: boolean; waiting: boolean }>({
    started: false,
    live: true,
    waiting: false,
  });
  useEffect(() => {
    const a = autofill.current;
    a.live = true;
    return () => {
      a.live = false;
      if (a.waiting) WebAuthnAbortService.cancelCeremony();
    };
  }, []);
  const startAutofill = async () => {
    const a = autofill.current;
    if (a.started) return;
    a.started = true;
    if (!(await browserSupportsWebAuthnAutofill().catch(() => false)) || !a.live) return;
    try {
      // Without options (passkeys off, or the address is rate limited) the field simply offers no passkey.
      const options = await call(api.POST('/api/v1/auth/passkey/login/options', {})).then(
        (r) => r.options,
        () => null,
      );
      if (!options || !a.live) return;
      a.waiting = true;
      const credential = await startAuthentication({ optionsJSON: options as never, useBrowserAutofill: true });
      setBusy(true);
      signedInRef.current(
        (await call(
          api.POST('/api/v1/auth/passkey/login/verify', { body: { credential: credential as never } }),
        )) as TokenResponse,
      );
    } catch (err) {
      const quiet =
        err instanceof Error &&
        (err.name === 'AbortError' || err.name === 'NotAllowedError' || /abort/i.test(err.message));
      if (a.live && !quiet) setError(passkeyError(err));
    } finally {
      a.waiting = false;
      if (a.live) setBusy(false);
    }
  };

  const discover = async (value: string) => {
    if (!/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(value)) return setSso(null);
    try {
      setSso((await call(api.POST('/api/v1/auth/sso-discovery', { body: { email: value } }))) as Sso);
    } catch {
      setSso(null);
    }
  };

  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    setError(null);
    setBusy(true);
    try {
      const res = (await call(api.POST('/api/v1/auth/login', { body: { email, password } }))) as
        | TokenResponse
        | (Challenge & { mfaRequired: true });
      if ('mfaRequired' in res) setChallenge(res);
      else signedIn(res);
    } catch (err) {
      setError(explain(err));
    } finally {
      setBusy(false);
    }
  };

  const passkeyOnly = async () => {
    setError(null);
    setBusy(true);
    try {
      const { options } = await call(api.POST('/api/v1/auth/passkey/login/options', {}));
      const credential = await startAuthentication({ optionsJSON: options as never });
      signedIn(
        (await call(
          api.POST('/api/v1/auth/passkey/login/verify', { body: { credential: credential as never } }),
        )) as TokenResponse,
      );
    } catch (err) {
      setError(passkeyError(err));
    } finally {
      setBusy(false);
    }
  };

  const ssoError = params.get('error');
  if (challenge) return <SecondFactor challenge={challenge} onRestart={() => setChallenge(null)} />;

  return (
    <AuthCard
      title="Sign in"
      footer={
        status.data?.registrationOpen ? (
          <>
            New partner?{' '}
            <Anchor component={Link} to="/register">
              Create an account
            </Anchor>
          </>
        ) : undefined
      }
    >
      <form onSubmit={submit} noValidate>
        <Stack>
          {ssoError && (
            <Alert color="red" role="alert" title="Single sign-on">
              {loginErrorText(ssoError)}
            </Alert>
          )}
          <FormError error={error} />
          <TextInput
            label="E-mail"
            type="email"
            autoComplete="username webauthn"
            required
            value={email}
            onChange={(e) => setEmail(e.currentTarget.value)}
            onFocus={() => void startAutofill()}
            onBlur={(e) => void discover(e.currentTarget.value)}
          />
          {sso?.ssoEnabled && sso.loginUrl && (
            <Alert color="blue" title="Single sign-on">
              <Stack gap="xs">
                <Text size="sm">
                  {sso.enforceSSO ? 'Your organisation signs in with ' : 'Your organisation can sign in with '}
                  {sso.providerName ?? 'its identity provider'}.
                </Text>
                <Button component="a" href={sso.loginUrl} variant="filled">
                  Continue with {sso.providerName ?? 'single sign-on'}
                </Button>
              </Stack>
            </Alert>
          )}
          {!sso?.enforceSSO && (
            <>
              <PasswordInput
                label="Password"
                autoComplete="current-password"
                required
                value={password}
                onChange={(e) => setPassword(e.currentTarget.value)}
              />
              <Group justify="space-between">
                <Anchor component={Link} to="/forgot-password" size="sm">
                  Forgot password?
                </Anchor>
                <Button type="submit" loading={busy}>
                  Sign in
                </Button>
              </Group>
            </>
          )}
          <Divider label="or" labelPosition="center" />
          <Button variant="default" onClick={() => void passkeyOnly()} disabled={busy}>
            Use a passkey instead
          </Button>
        </Stack>
      </form>
    </AuthCard>
  );
}

function SecondFactor({ challenge, onRestart }: { challenge: Challenge; onRestart: () => void }) {
  const signedIn = useSignedIn();
  const [mode, setMode] = useState<'totp' | 'sms' | 'passkey' | 'recovery'>(challenge.mfaMethod);
  const [code, setCode] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [info, setInfo] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const sent = useRef(false);

  const sendSms = async () => {
    setError(null);
    try {
      await call(api.POST('/api/v1/auth/mfa/sms/send', { body: { tempToken: challenge.tempToken } }));
      setInfo(`We sent a code to the phone ending ${challenge.phoneLast4 ?? '…'}.`);
    } catch (err) {
      setError(explain(err));
    }
  };
  useEffect(() => {
    if (mode === 'sms' && !sent.current) {
      sent.current = true;
      void sendSms();
    }
  });

  const verify = async (e?: React.FormEvent) => {
    e?.preventDefault();
    setBusy(true);
    setError(null);
    try {
      signedIn(
        (await call(
          api.POST('/api/v1/auth/mfa/verify', { body: { tempToken: challenge.tempToken, code: code.trim() } }),
        )) as TokenResponse,
      );
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
      const { options } = await call(
        api.POST('/api/v1/auth/mfa/passkey/options', { body: { tempToken: challenge.tempToken } }),
      );
      const credential = await startAuthentication({ optionsJSON: options as never });
      signedIn(
        (await call(
          api.POST('/api/v1/auth/mfa/passkey/verify', {
            body: { tempToken: challenge.tempToken, credential: credential as never },
          }),
        )) as TokenResponse,
      );
    } catch (err) {
      setError(passkeyError(err));
    } finally {
      setBusy(false);
    }
  };

  const title =
    mode === 'recovery'
      ? 'Use a recovery code'
      : mode === 'passkey'
        ? 'Confirm with your passkey'
        : 'Two-step verification';
  return (
    <AuthCard title={title}>
      <Stack>
        <FormError error={error} />
        {info && mode === 'sms' && <Alert color="blue">{info}</Alert>}
        {mode === 'passkey' ? (
          <Button onClick={() => void passkey()} loading={busy}>
            Use my passkey
          </Button>
        ) : (
          <form onSubmit={verify} noValidate>
            <Stack>
              {mode === 'recovery' ? (
                <TextInput
                  label="Recovery code"
                  autoComplete="off"
                  value={code}
                  onChange={(e) => setCode(e.currentTarget.value)}
                  required
                />
              ) : (
                <>
                  <Text size="sm" id="code-label">
                    {mode === 'totp'
                      ? 'Enter the 6-digit code from your authenticator app.'
                      : 'Enter the 6-digit code we texted you.'}
                  </Text>
                  <PinInput
                    length={6}
                    type="number"
                    oneTimeCode
                    value={code}
                    onChange={setCode}
                    aria-label="Verification code"
                    autoFocus
                  />
                </>
              )}
              <Button type="submit" loading={busy} disabled={code.trim().length < 6}>
                Verify
              </Button>
            </Stack>
          </form>
        )}
        <Stack gap={4}>
          {mode === 'sms' && (
            <Anchor component="button" type="button" size="sm" onClick={() => void sendSms()}>
              Send the code again
            </Anchor>
          )}
          {(challenge.passkeyAvailable || challenge.mfaMethod === 'passkey') && mode !== 'passkey' && (
            <Anchor component="button" type="button" size="sm" onClick={() => setMode('passkey')}>
              Use a passkey instead
            </Anchor>
          )}
          {mode !== challenge.mfaMethod && challenge.mfaMethod !== 'passkey' && (
            <Anchor component="button" type="button" size="sm" onClick={() => setMode(challenge.mfaMethod)}>
              {challenge.mfaMethod === 'sms' ? 'Use a text message code' : 'Use my authenticator app'}
            </Anchor>
          )}
          {mode !== 'recovery' && (
            <Anchor
              component="button"
              type="button"
              size="sm"
              onClick={() => {
                setCode('');
                setMode('recovery');
              }}
            >
              Use a recovery code
            </Anchor>
          )}
          <Anchor component="button" type="button" size="sm" onClick={onRestart}>
            Start again
          </Anchor>
        </Stack>
      </Stack>
    </AuthCard>
  );
}
