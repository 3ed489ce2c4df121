import { useState } from 'react';
import { useI18n } from '../i18n/i18n.tsx';

/** Pages through a list the API answers whole (users and keys: a tenant has few). */
export function usePaged<T>(all: T[], size: number) {
  const [index, setIndex] = useState(0);
  const pages = Math.max(1, Math.ceil(all.length / size));
  const current = Math.min(index, pages - 1);
  return { items: all.slice(current * size, (current + 1) * size), page: current, pages, setPage: setIndex };
}

export function Pager({ page, pages, setPage }: { page: number; pages: number; setPage: (page: number) => void }) {
  const { t } = useI18n();
  if (pages <= 1) return null;
  return (
    <nav className="pager" aria-label={t('admin.pages')}>
      <button type="button" disabled={page === 0} onClick={() => setPage(page - 1)}>
        {t('admin.previous')}
      </button>
      <span>{t('admin.pageOf', { page: page + 1, pages })}</span>
      <button type="button" disabled={page >= pages - 1} onClick={() => setPage(page + 1)}>
        {t('admin.next')}
      </button>
    </nav>
  );
}
