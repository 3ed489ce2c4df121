import { useEffect, useState, type FormEvent } from 'react';
import { Link, useNavigate } from 'react-router';
import { acceptInvitation } from '../api/admin-client.ts';
import { useI18n } from '../i18n/i18n.tsx';
import { SignInForm } from './sign-in.tsx';
import { useSession } from '../session/session.tsx';

/**
 * /console/accept-invitation#{token}: the page an invitation e-mail links to. The token is in the address's
 * fragment, which the browser never sends to a server; the person chooses a password (twice), and then signs in
 * with it here.
 */
export function AcceptInvitationPage() {
  const { t } = useI18n();
  const [token] = useState(() => decodeURIComponent(window.location.hash.replace(/^#/, '')));
  const [password, setPassword] = useState('');
  const [again, setAgain] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [accepted, setAccepted] = useState<string | null>(null);
  const { status } = useSession();
  const navigate = useNavigate();
  // Signed in with the new password: on to the console.
  useEffect(() => {
    if (accepted && status === 'signed-in') void navigate('/', { replace: true });
  }, [accepted, status, navigate]);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    if (password !== again) {
      setError(t('invitation.mismatch'));
      return;
    }
    setBusy(true);
    try {
      setAccepted((await acceptInvitation({ token, password })).email);
      // The token is spent: it leaves the address bar and the history entry.
      window.history.replaceState(null, '', window.location.pathname);
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main id="main" className="sign-in-page">
      <div className="sign-in-card">
        <h1>{t('invitation.title')}</h1>
        {accepted ? (
          <>
            <p role="status">{t('invitation.accepted', { email: accepted })}</p>
            <SignInForm email={accepted} />
          </>
        ) : !token ? (
          <p className="error" role="alert">
            {t('invitation.noToken')} <Link to="/">{t('invitation.toSignIn')}</Link>
          </p>
        ) : (
          <form onSubmit={submit} className="sign-in-form">
            <p>{t('invitation.intro')}</p>
            <label>
              {t('invitation.password')}
              <input type="password" autoComplete="new-password" required minLength={8} value={password} onChange={(e) => setPassword(e.target.value)} />
            </label>
            <label>
              {t('invitation.again')}
              <input type="password" autoComplete="new-password" required value={again} onChange={(e) => setAgain(e.target.value)} />
            </label>
            {error && (
              <p className="error" role="alert">
                {error}
              </p>
            )}
            <button type="submit" className="primary" disabled={busy}>
              {t('invitation.submit')}
            </button>
          </form>
        )}
      </div>
    </main>
  );
}
