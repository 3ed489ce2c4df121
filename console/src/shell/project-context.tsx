import { createContext, useContext } from 'react';
import type { ConsoleClient } from '../api/admin-client.ts';

export interface ProjectOverview {
  id: string;
  name: string;
  slug: string;
  plan: string;
  contentLocales: { locales: string[]; defaultLocale: string };
  siteSettings: { siteUrl?: string | null; siteName?: string | null };
}

/** What every page of a project needs: the project, the client acting in it and the user's role. */
export interface ProjectContextValue {
  projectId: string;
  project: ProjectOverview;
  api: ConsoleClient;
  isAdmin: boolean;
  userId: string;
  /** Paths inside this project's part of the console. */
  path(sub: string): string;
}

export const ProjectContext = createContext<ProjectContextValue | null>(null);

export function useProject(): ProjectContextValue {
  const value = useContext(ProjectContext);
  if (!value) throw new Error('useProject outside a project page');
  return value;
}
