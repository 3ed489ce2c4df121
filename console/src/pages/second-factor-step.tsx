import { useState, type FormEvent } from 'react';
import { useQuery } from '@tanstack/react-query';
import { startAuthentication, type PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/browser';
import { signInPasskeyOptions, signInSecondFactor, signInTotpSetup, type SecondFactorChallenge, type SignedIn } from '../api/admin-client.ts';
import { useI18n } from '../i18n/i18n.tsx';
import { ErrorMessage } from '../components/error-message.tsx';
import { AppCodeField, RecoveryCodesShown, secondFactorProblem, TotpQr } from './second-factor-parts.tsx';

/**
 * The second step of a password sign-in, for someone with a second factor or whose organisation requires one:
 * their passkey first when they have one, else the authenticator app's code, or one of their recovery codes. Someone
 * whose organisation requires a second factor and who has none sets up an authenticator app here, and is shown
 * the recovery codes that come with it before going on. "Start again" goes back to the password.
 */
export function SecondFactorStep({ challenge, email, onSignedIn, onStartAgain }: { challenge: SecondFactorChallenge; email: string; onSignedIn: (session: SignedIn) => void; onStartAgain: () => void }) {
  const [withCodes, setWithCodes] = useState<SignedIn | null>(null);
  const done = (session: SignedIn) => (session.recoveryCodes?.length ? setWithCodes(session) : onSignedIn(session));
  if (withCodes) return <CodesBeforeConsole codes={withCodes.recoveryCodes ?? []} email={email} onSaved={() => onSignedIn(withCodes)} />;
  return challenge.enrolmentRequired ? <SetUpOnTheWayIn challenge={challenge} onSignedIn={done} onStartAgain={onStartAgain} /> : <ProveIt challenge={challenge} onSignedIn={done} onStartAgain={onStartAgain} />;
}

function CodesBeforeConsole({ codes, email, onSaved }: { codes: string[]; email: string; onSaved: () => void }) {
  const { t } = useI18n();
  return (
    <div className="sign-in-form second-factor-step">
      <h2>{t('recovery.title')}</h2>
      <RecoveryCodesShown codes={codes} email={email} onSaved={onSaved} />
    </div>
  );
}

function StartAgain({ onClick }: { onClick: () => void }) {
  const { t } = useI18n();
  return (
    <button type="button" className="link-button start-again" onClick={onClick}>
      {t('secondFactor.startAgain')}
    </button>
  );
}

/** A passkey, the app's code or a recovery code, for someone who has a second factor. */
function ProveIt({ challenge, onSignedIn, onStartAgain }: { challenge: SecondFactorChallenge; onSignedIn: (session: SignedIn) => void; onStartAgain: () => void }) {
  const { t, language } = useI18n();
  const hasPasskey = challenge.methods.includes('passkey');
  const hasApp = challenge.methods.includes('totp');
  const [mode, setMode] = useState<'app' | 'recovery' | null>(hasApp ? 'app' : hasPasskey ? null : 'recovery');
  const [code, setCode] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const attempt = async (method: 'code' | 'passkey', run: () => Promise<SignedIn>) => {
    setBusy(true);
    setProblem(null);
    try {
      onSignedIn(await run());
    } catch (error) {
      setProblem(secondFactorProblem(error, t, language, { method, expiresAt: challenge.expiresAt }));
      setBusy(false);
    }
  };
  const signInWithPasskey = () =>
    attempt('passkey', async () => {
      // The challenge comes with a new ticket that carries it: the answer goes with that one.
      const made = await signInPasskeyOptions(challenge.ticket);
      const passkey = await startAuthentication({ optionsJSON: made.options as unknown as PublicKeyCredentialRequestOptionsJSON });
      return signInSecondFactor({ ticket: made.ticket, method: 'passkey', passkey });
    });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!mode) return;
    void attempt('code', () => signInSecondFactor({ ticket: challenge.ticket, method: mode === 'app' ? 'totp' : 'recovery-code', code: code.trim() }));
  };
  const switchTo = (next: 'app' | 'recovery' | null) => {
    setMode(next);
    setCode('');
    setProblem(null);
  };
  return (
    <form className="sign-in-form second-factor-step" onSubmit={submit} aria-labelledby="second-factor-title">
      <h2 id="second-factor-title">{t('secondFactor.title')}</h2>
      <p>{hasPasskey ? (hasApp ? t('secondFactor.introPasskeyOrApp') : t('secondFactor.introPasskey')) : t('secondFactor.introApp')}</p>
      {hasPasskey && (
        <>
          {/* biome-ignore lint/a11y/noAutofocus: the step the person just asked for by signing in; the passkey comes first. */}
          <button type="button" className={mode === 'recovery' ? undefined : 'primary'} autoFocus disabled={busy} onClick={() => void signInWithPasskey()}>
            {t('secondFactor.usePasskey')}
          </button>
          {mode && <p className="sign-in-or">{t('secondFactor.or')}</p>}
        </>
      )}
      {mode === 'app' && <AppCodeField value={code} onChange={setCode} autoFocus={!hasPasskey} />}
      {mode === 'recovery' && (
        <label>
          {t('secondFactor.recoveryCode')}
          {/* biome-ignore lint/a11y/noAutofocus: shown on the person's asking for it, to type the code. */}
          <input type="text" autoComplete="off" autoCapitalize="characters" spellCheck={false} required maxLength={64} className="one-time-code" autoFocus value={code} onChange={(e) => setCode(e.target.value)} />
        </label>
      )}
      {problem && (
        <p className="error" role="alert">
          {problem}
        </p>
      )}
      {mode && (
        <button type="submit" className={hasPasskey ? undefined : 'primary'} disabled={busy}>
          {t('secondFactor.verify')}
        </button>
      )}
      <div className="second-factor-links">
        {mode === 'recovery' ? (
          <button type="button" className="link-button" onClick={() => switchTo(hasApp ? 'app' : null)}>
            {hasApp ? t('secondFactor.useApp') : t('secondFactor.usePasskeyInstead')}
          </button>
        ) : (
          challenge.methods.includes('recovery-code') && (
            <button type="button" className="link-button" onClick={() => switchTo('recovery')}>
              {t('secondFactor.useRecoveryCode')}
            </button>
          )
        )}
        <StartAgain onClick={onStartAgain} />
      </div>
    </form>
  );
}

/** The organisation requires a second factor and this person has none: an authenticator app, set up with its first code. */
function SetUpOnTheWayIn({ challenge, onSignedIn, onStartAgain }: { challenge: SecondFactorChallenge; onSignedIn: (session: SignedIn) => void; onStartAgain: () => void }) {
  const { t, language } = useI18n();
  const setup = useQuery({ queryKey: ['sign-in', 'totp-setup', challenge.ticket], queryFn: () => signInTotpSetup(challenge.ticket), retry: false, staleTime: Number.POSITIVE_INFINITY, gcTime: 0 });
  const [code, setCode] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!setup.data) return;
    setBusy(true);
    setProblem(null);
    try {
      onSignedIn(await signInSecondFactor({ ticket: challenge.ticket, method: 'totp', code: code.trim(), setupToken: setup.data.setupToken }));
    } catch (error) {
      setProblem(secondFactorProblem(error, t, language, { method: 'code', expiresAt: challenge.expiresAt }));
      setBusy(false);
    }
  };
  return (
    <form className="sign-in-form second-factor-step" onSubmit={(e) => void submit(e)} aria-labelledby="second-factor-title">
      <h2 id="second-factor-title">{t('secondFactor.setUpTitle')}</h2>
      <p>{t('secondFactor.setUpIntro')}</p>
      <ErrorMessage error={setup.error} />
      {setup.isPending && <p>{t('app.loading')}</p>}
      {setup.data && (
        <>
          <TotpQr setup={setup.data} />
          <AppCodeField value={code} onChange={setCode} />
          {problem && (
            <p className="error" role="alert">
              {problem}
            </p>
          )}
          <button type="submit" className="primary" disabled={busy}>
            {t('secondFactor.setUpAndSignIn')}
          </button>
        </>
      )}
      <div className="second-factor-links">
        <StartAgain onClick={onStartAgain} />
      </div>
    </form>
  );
}
