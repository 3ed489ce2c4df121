import type { AdminSchema } from '@annals/client';
import { createContext, useContext } from 'react';
import type { ConsoleClient } from '../api/admin-client.ts';

/** The project as GET /project answers it. */
export type ProjectOverview = AdminSchema<'ProjectOverview'>;

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
