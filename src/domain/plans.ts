import { DomainError } from './domain-error.ts';

/** The project plans, lowest first (spec section 8). */
export const PLANS = ['free', 'solo', 'standard', 'business', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];

export function planAtLeast(plan: Plan, minimum: Plan): boolean {
  return PLANS.indexOf(plan) >= PLANS.indexOf(minimum);
}

/** Throws PLAN_REQUIRED naming the feature and the plan it needs. */
export function requirePlan(plan: Plan, minimum: Plan, feature: string): void {
  if (!planAtLeast(plan, minimum)) {
    throw new DomainError('PLAN_REQUIRED', `${feature} requires the ${capitalise(minimum)} plan or above; this project is on ${capitalise(plan)}.`, `Upgrade the project to ${capitalise(minimum)} or above.`);
  }
}

function capitalise(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}
