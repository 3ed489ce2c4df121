import { useI18n } from '../i18n/i18n.tsx';

/**
 * The header of a table's last column of row buttons: named for screen readers ("Actions"), shown empty
 * (the buttons say what they do). `label` names it otherwise.
 */
export function ActionsColumnHeader({ label }: { label?: string }) {
  const { t } = useI18n();
  return (
    <th scope="col">
      <span className="visually-hidden">{label ?? t('keys.actions')}</span>
    </th>
  );
}
