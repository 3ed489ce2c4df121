import { planAtLeast, type Plan } from '../plans.ts';

/** Spec section 8: agent-key limits per plan. */
export const AGENT_RATE_WINDOW_SECONDS = 60;

/** Active (unrevoked) agent keys a project may hold: one on Free and Solo, unlimited from Standard. */
export function maxActiveAgentKeys(plan: Plan): number {
  return planAtLeast(plan, 'standard') ? Number.POSITIVE_INFINITY : 1;
}

/** Requests per agent key per 60 seconds: 60 on Free and Solo, 300 from Standard. Console sessions are exempt. */
export function agentRateLimit(plan: Plan): { limit: number; windowSeconds: number } {
  return { limit: planAtLeast(plan, 'standard') ? 300 : 60, windowSeconds: AGENT_RATE_WINDOW_SECONDS };
}
