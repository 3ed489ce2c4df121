import { useState, type FormEvent } from 'react';
import { useQuery } from '@tanstack/react-query';
import { loginBranding, signIn, signInOptions, type SecondFactorChallenge, type SignedIn } from '../api/admin-client.ts';
import { useI18n } from '../i18n/i18n.tsx';
import { useSession } from '../session/session.tsx';
import { Modal } from '../components/modal.tsx';
import { SecondFactorStep } from './second-factor-step.tsx';

/**
 * E-mail and password for the session cookie; on a project's page the project's allowlist applies and its
 * branding shows. Signing in again over a page whose session ended is for the same account: the e-mail is fixed.
 * Someone with a second factor (or whose organisation requires one) gives it next (second-factor-step.tsx).
 */
export function SignInForm({ projectId, email: knownEmail }: { projectId?: string; email?: string }) {
  const { t } = useI18n();
  const options = useQuery({ queryKey: ['sign-in-options', projectId], queryFn: () => signInOptions(projectId!), enabled: Boolean(projectId), retry: false });
  const { signedIn } = useSession();
  const [email, setEmail] = useState(knownEmail ?? '');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [challenge, setChallenge] = useState<SecondFactorChallenge | null>(null);
  const begin = ({ recoveryCodes: _shown, ...session }: SignedIn) => signedIn(session);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const answer = await signIn({ email, password, ...(projectId ? { projectId } : {}) });
      if (answer.kind === 'session') begin(answer.session);
      else setChallenge(answer.challenge);
    } catch (e) {
      setError(t('signIn.refused', { message: e instanceof Error ? e.message : String(e) }));
    } finally {
      setBusy(false);
    }
  };
  if (challenge) {
    const startAgain = () => {
      setChallenge(null);
      setPassword('');
    };
    return <SecondFactorStep challenge={challenge} email={email} onSignedIn={begin} onStartAgain={startAgain} />;
  }
  const sso = options.data?.oidc ?? options.data?.saml;
  // The organisation's identity provider (OpenID Connect or SAML: one of them at most), first when it has one; passwords below it unless it signs in with single sign-on only.
  // Over a page whose session ended (the e-mail is known), the provider opens in a new tab: the page and what
  // was typed on it stay, and go on once that tab is signed in (it tells the other tabs).
  const overPage = knownEmail !== undefined;
  const ssoButton = sso && (
    <a className="button primary sso-button" href={sso.startUrl} {...(overPage ? { target: '_blank', rel: 'noopener' } : {})}>
      {t('signIn.sso')}
    </a>
  );
  if (options.data && !options.data.password) {
    return (
      <div className="sign-in-form">
        <p>{t('signIn.ssoOnly')}</p>
        {ssoButton}
      </div>
    );
  }
  return (
    <form onSubmit={submit} className="sign-in-form">
      {ssoButton && (
        <>
          {ssoButton}
          <p className="sign-in-or">{t('signIn.or')}</p>
        </>
      )}
      <label>
        {t('signIn.email')}
        {/* Known (signing in again): shown, not a stop on the way to the password, which the dialog focuses. */}
        <input type="email" autoComplete="username" required value={email} readOnly={knownEmail !== undefined} tabIndex={knownEmail !== undefined ? -1 : undefined} onChange={(e) => setEmail(e.target.value)} />
      </label>
      <label>
        {t('signIn.password')}
        <input type="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} />
      </label>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      <button type="submit" className={sso ? undefined : 'primary'} disabled={busy}>
        {t('signIn.submit')}
      </button>
    </form>
  );
}

/** The sign-in page, with the project's login branding and appearance when the URL names a project. */
export function SignInPage({ projectId }: { projectId?: string }) {
  const { t } = useI18n();
  const branding = useQuery({ queryKey: ['login-branding', projectId], queryFn: () => loginBranding(projectId!), enabled: Boolean(projectId), retry: false });
  const b = branding.data;
  const style = {
    ...(b?.primaryColor ? { ['--brand' as string]: b.primaryColor } : {}),
    ...(b?.accentColor ? { ['--accent' as string]: b.accentColor } : {}),
  };
  return (
    <main id="main" className="sign-in-page" style={style}>
      <div className="sign-in-card">
        {b?.logoUrl && <img className="sign-in-logo" src={b.logoUrl} alt={b.projectName} />}
        <h1>{b ? `${b.projectName}: ${t('signIn.title')}` : `${t('app.name')}: ${t('signIn.title')}`}</h1>
        {b?.message && <p className="sign-in-message">{b.message}</p>}
        <SignInForm {...(projectId ? { projectId } : {})} />
      </div>
    </main>
  );
}

/**
 * Over the page whose session ended (expired, or signed out in another tab or on the service): sign in again
 * without leaving it. The page stays as it was underneath, and its calls wait: once signed in, they go on with
 * the new session. "Sign out" leaves instead.
 */
export function SessionExpiredDialog({ projectId }: { projectId?: string }) {
  const { t } = useI18n();
  const { ended, session, signOut } = useSession();
  return (
    <Modal open={ended !== null} title={t('signIn.title')}>
      <p>{ended === 'signed-out' ? t('signIn.signedOutElsewhere') : t('signIn.expired')}</p>
      <SignInForm {...(projectId ? { projectId } : {})} {...(session ? { email: session.user.email } : {})} />
      <div className="dialog-actions">
        <button type="button" onClick={() => void signOut()}>
          {t('nav.signOut')}
        </button>
      </div>
    </Modal>
  );
}
