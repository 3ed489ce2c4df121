import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { en, type MessageKey, type Messages } from './en.ts';
import { ja } from './ja.ts';

export const UI_LANGUAGES = { en: 'English', ja: '日本語' } as const;
export type UiLanguage = keyof typeof UI_LANGUAGES;
const MESSAGES: Record<UiLanguage, Messages> = { en, ja };
const STORAGE_KEY = 'annals.console.language';

/** The browser's first language the console speaks, unless the user chose one (kept in localStorage). */
export function initialLanguage(): UiLanguage {
  const chosen = localStorage.getItem(STORAGE_KEY);
  if (chosen === 'en' || chosen === 'ja') return chosen;
  for (const tag of navigator.languages ?? [navigator.language]) {
    const base = tag.toLowerCase().split('-')[0];
    if (base === 'ja' || base === 'en') return base;
  }
  return 'en';
}

export type Translate = (key: MessageKey, vars?: Record<string, string | number>) => string;

interface I18n {
  language: UiLanguage;
  setLanguage(language: UiLanguage): void;
  t: Translate;
  /** A time shown in the user's time zone and language. */
  formatTime(iso: string | null | undefined): string;
}

const I18nContext = createContext<I18n | null>(null);

export function I18nProvider({ children }: { children: ReactNode }) {
  const [language, setLanguageState] = useState<UiLanguage>(initialLanguage);
  useEffect(() => {
    document.documentElement.lang = language;
  }, [language]);
  const setLanguage = useCallback((next: UiLanguage) => {
    localStorage.setItem(STORAGE_KEY, next);
    setLanguageState(next);
  }, []);
  const value = useMemo<I18n>(() => {
    const messages = MESSAGES[language];
    const dateTime = new Intl.DateTimeFormat(language, { dateStyle: 'medium', timeStyle: 'short' });
    return {
      language,
      setLanguage,
      t: (key, vars) => messages[key].replace(/\{(\w+)\}/g, (whole, name: string) => (vars && name in vars ? String(vars[name]) : whole)),
      formatTime: (iso) => (iso ? dateTime.format(new Date(iso)) : ''),
    };
  }, [language, setLanguage]);
  return <I18nContext.Provider value={value}>{children}</I18nContext.Provider>;
}

export function useI18n(): I18n {
  const value = useContext(I18nContext);
  if (!value) throw new Error('useI18n outside I18nProvider');
  return value;
}
