import { useMemo, useState } from 'react';
import { useI18n } from '../i18n/i18n.tsx';

/**
 * A publish time entered in a time zone (the user's by default, spec section 3 rule 3): sent as
 * {local, timeZone}; the service stores it in UTC and the console shows it back in the user's zone.
 */
export function useSchedule() {
  const userZone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const [local, setLocal] = useState('');
  const [timeZone, setTimeZone] = useState(userZone);
  return { local, setLocal, timeZone, setTimeZone, publishAt: () => ({ local, timeZone }) };
}

export function ScheduleFields({ schedule }: { schedule: ReturnType<typeof useSchedule> }) {
  const { t } = useI18n();
  const zones = useMemo(() => {
    const all = (Intl as unknown as { supportedValuesOf?: (key: string) => string[] }).supportedValuesOf?.('timeZone') ?? [];
    return all.includes(schedule.timeZone) ? all : [schedule.timeZone, ...all];
  }, [schedule.timeZone]);
  return (
    <div className="schedule-fields">
      <label>
        {t('action.scheduleAt')}
        <input type="datetime-local" required value={schedule.local} onChange={(e) => schedule.setLocal(e.target.value)} />
      </label>
      <label>
        {t('action.timeZone')}
        <select value={schedule.timeZone} onChange={(e) => schedule.setTimeZone(e.target.value)}>
          {zones.map((zone) => (
            <option key={zone} value={zone}>
              {zone}
            </option>
          ))}
        </select>
      </label>
    </div>
  );
}
