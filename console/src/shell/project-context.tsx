import type { AdminSchema } from '@annals/client';
import { createContext, useContext } from 'react';
import type { ConsoleClient } from '../api/admin-client.ts';
import type { Capability, Grants } from '../session/grants.ts';

/** The project as GET /project answers it. */
export type ProjectOverview = AdminSchema<'ProjectOverview'>;

/** What every page of a project needs: the project, the client acting in it and what the user may do. */
export interface ProjectContextValue {
  projectId: string;
  project: ProjectOverview;
  api: ConsoleClient;
  userId: string;
  /** What the user may do (GET /auth/session): their role's capabilities and form-set limit. */
  grants: Grants;
  /**
   * Whether the user may do what a capability allows; in a form set when one is given (a custom role may limit
   * content.write, content.submit, content.approve and content.delete to some form sets). The console shows only
   * what they may do; the service refuses the rest anyway.
   */
  can(capability: Capability, formSetId?: string): boolean;
  /** Whether the user defines roles and single sign-on (a tenant_admin). */
  manageRoles: boolean;
  /** Paths inside this project's part of the console. */
  path(sub: string): string;
}

export const ProjectContext = createContext<ProjectContextValue | null>(null);

export function useProject(): ProjectContextValue {
  const value = useContext(ProjectContext);
  if (!value) throw new Error('useProject outside a project page');
  return value;
}
