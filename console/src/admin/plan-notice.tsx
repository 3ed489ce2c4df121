import { useI18n } from '../i18n/i18n.tsx';
import { useProject } from '../shell/project-context.tsx';
import type { Plan } from './shapes.ts';

const PLAN_NAMES: Record<Plan, string> = { free: 'Free', solo: 'Solo', standard: 'Standard', business: 'Business', enterprise: 'Enterprise' };

/** Says which plan a feature needs and which plan the project is on. */
export function PlanNotice({ feature, plan }: { feature: string; plan: 'standard' | 'business' }) {
  const { t } = useI18n();
  const { project } = useProject();
  return <p className="notice">{t('admin.planNeeded', { feature, plan: PLAN_NAMES[plan], current: PLAN_NAMES[project.plan] })}</p>;
}
