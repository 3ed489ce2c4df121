import { useI18n } from '../i18n/i18n.tsx';
import type { MessageKey } from '../i18n/en.ts';

export function StatusBadge({ status }: { status: string }) {
  const { t } = useI18n();
  return <span className={`badge status-${status}`}>{t(`status.${status}` as MessageKey)}</span>;
}
