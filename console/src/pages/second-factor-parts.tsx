import { WebAuthnError } from '@simplewebauthn/browser';
import { ApiError, type TotpSetup } from '../api/admin-client.ts';
import { useI18n, type Translate } from '../i18n/i18n.tsx';
import { CopyButton } from '../admin/copy-button.tsx';
import { sentence } from '../components/error-message.tsx';

/**
 * What the sign-in's second step and the account page share: an authenticator app's QR code and key, the
 * recovery codes shown once, and the words for a second factor that was not accepted.
 */

/** The QR code an authenticator app scans, and the same secret as a key to type for an app that cannot scan. */
export function TotpQr({ setup }: { setup: TotpSetup }) {
  const { t } = useI18n();
  return (
    <div className="totp-setup">
      <img className="totp-qr" src={setup.qrCode} alt={t('secondFactor.qrAlt')} width={176} height={176} />
      <div className="totp-key">
        <label>
          {t('secondFactor.key')}
          <input type="text" readOnly value={setup.secret} className="secret" spellCheck={false} onFocus={(e) => e.target.select()} />
        </label>
        <CopyButton text={setup.secret} />
      </div>
    </div>
  );
}

/** The code an authenticator app shows: digits, which phones offer a number pad and the one-time code for. */
export function AppCodeField({ value, onChange, autoFocus }: { value: string; onChange: (code: string) => void; autoFocus?: boolean }) {
  const { t } = useI18n();
  return (
    <label>
      {t('secondFactor.appCode')}
      {/* biome-ignore lint/a11y/noAutofocus: the step the person just asked for by signing in, whose only field this is. */}
      <input type="text" inputMode="numeric" autoComplete="one-time-code" required maxLength={8} spellCheck={false} className="one-time-code" autoFocus={autoFocus} value={value} onChange={(e) => onChange(e.target.value)} />
    </label>
  );
}

/**
 * Recovery codes in the one answer that holds them: each signs in once when the app or passkey is lost. They can
 * be copied or downloaded as a text file, and the way on says they are kept.
 */
export function RecoveryCodesShown({ codes, email, onSaved }: { codes: string[]; email: string; onSaved: () => void }) {
  const { t } = useI18n();
  const text = `${t('recovery.fileTitle', { email })}\n\n${codes.join('\n')}\n`;
  const download = () => {
    const url = URL.createObjectURL(new Blob([text], { type: 'text/plain;charset=utf-8' }));
    const link = document.createElement('a');
    link.href = url;
    link.download = 'annals-recovery-codes.txt';
    link.click();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  };
  return (
    <div className="recovery-codes-shown">
      <p className="notice" role="alert">
        {t('recovery.shownOnce')}
      </p>
      <ol className="recovery-codes" aria-label={t('recovery.listLabel')}>
        {codes.map((code) => (
          <li key={code}>
            <code>{code}</code>
          </li>
        ))}
      </ol>
      <div className="recovery-actions">
        <CopyButton text={codes.join('\n')} />
        <button type="button" onClick={download}>
          {t('recovery.download')}
        </button>
      </div>
      <button type="button" className="primary recovery-saved" onClick={onSaved}>
        {t('recovery.saved')}
      </button>
    </div>
  );
}

/** A wait, in the UI's language: "45 seconds", "2 minutes". */
export function waitText(seconds: number, language: string): string {
  const [value, unit] = seconds < 90 ? [Math.max(1, Math.ceil(seconds)), 'second'] : [Math.ceil(seconds / 60), 'minute'];
  return new Intl.NumberFormat(language, { style: 'unit', unit, unitDisplay: 'long' }).format(value);
}

/** The browser's passkey dialog was closed, timed out or refused: nothing was sent. */
function passkeyCancelled(error: unknown): boolean {
  if (error instanceof WebAuthnError) return error.code === 'ERROR_CEREMONY_ABORTED' || (error.cause as { name?: string } | undefined)?.name === 'NotAllowedError';
  return error instanceof Error && (error.name === 'NotAllowedError' || error.name === 'AbortError');
}

/**
 * Why a second factor was not taken, in words for the person at the page: a wrong or used code, too many tries
 * (with the wait the service gave), a sign-in that took too long, a passkey dialog closed.
 */
export function secondFactorProblem(error: unknown, t: Translate, language: string, options: { method: 'code' | 'passkey'; expiresAt?: string }): string {
  if (passkeyCancelled(error)) return t('secondFactor.passkeyCancelled');
  if (error instanceof WebAuthnError && error.code === 'ERROR_AUTHENTICATOR_PREVIOUSLY_REGISTERED') return t('secondFactor.passkeyKnown');
  if (error instanceof WebAuthnError) return t('secondFactor.passkeyFailed', { message: error.message });
  if (error instanceof ApiError) {
    if (error.status === 429) return error.retryAfterSeconds === undefined ? t('secondFactor.tooManyTries') : t('secondFactor.tooManyWait', { wait: waitText(error.retryAfterSeconds, language) });
    if (error.status === 401 && options.expiresAt && Date.now() >= Date.parse(options.expiresAt)) return t('secondFactor.expired');
    if (error.status === 401) return options.method === 'passkey' ? t('secondFactor.passkeyRefused') : t('secondFactor.wrongCode');
    return sentence(error.message, error.hint);
  }
  return t('app.error', { message: error instanceof Error ? error.message : String(error) });
}
