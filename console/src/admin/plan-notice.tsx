import { useI18n } from '../i18n/i18n.tsx';
import { useProject } from '../shell/project-context.tsx';
import type { Plan } from './shapes.ts';

const PLAN_NAMES: Record<Plan, string> = { free: 'Free', solo: 'Solo', standard: 'Standard', business: 'Business', enterprise: 'Enterprise' };

/** A plan's name as the pricing page writes it. */
export function planName(plan: Plan): string {
  return PLAN_NAMES[plan];
}

/** Says which plan a feature needs and which plan the project is on. */
export function PlanNotice({ feature, plan }: { feature: string; plan: 'standard' | 'business' }) {
  const { t } = useI18n();
  const { project } = useProject();
  return <p className="notice">{t('admin.planNeeded', { feature, plan: planName(plan), current: planName(project.plan) })}</p>;
}
