import { forwardRef, useImperativeHandle, useRef, useState, type KeyboardEvent } from 'react';

export interface ToolbarItem {
  /** The button's accessible name (and tooltip). */
  label: string;
  /** What the button shows. */
  text: string;
  run(): void;
  /** aria-pressed for toggles (a mark or block in force where the cursor is). */
  pressed?: boolean;
  disabled?: boolean;
  /** A group starts here (a separator before it). */
  group?: boolean;
}

export interface ToolbarHandle {
  /** Moves focus to the toolbar's current button (Alt+F10 from the text). */
  focus(): void;
}

/**
 * A toolbar as the WAI-ARIA toolbar pattern has it: one tab stop; Left and Right (wrapping), Home and End move
 * between buttons; Escape goes back to the text (`onLeave`). Every button has its label as its name (and title).
 */
export const Toolbar = forwardRef<ToolbarHandle, { label: string; items: ToolbarItem[]; onLeave: () => void }>(function Toolbar({ label, items, onLeave }, ref) {
  const [current, setCurrent] = useState(0);
  const buttons = useRef<Array<HTMLButtonElement | null>>([]);
  const index = Math.min(current, items.length - 1);
  const move = (to: number) => {
    const next = (to + items.length) % items.length;
    setCurrent(next);
    buttons.current[next]?.focus();
  };
  useImperativeHandle(ref, () => ({ focus: () => buttons.current[index]?.focus() }), [index]);
  const onKeyDown = (event: KeyboardEvent) => {
    const key = event.key;
    if (key !== 'ArrowRight' && key !== 'ArrowLeft' && key !== 'Home' && key !== 'End' && key !== 'Escape') return;
    event.preventDefault();
    if (key === 'Escape') onLeave();
    else move(key === 'ArrowRight' ? index + 1 : key === 'ArrowLeft' ? index - 1 : key === 'Home' ? 0 : items.length - 1);
  };
  return (
    <div className="toolbar" role="toolbar" aria-label={label} onKeyDown={onKeyDown}>
      {items.map((item, i) => (
        <button
          key={item.label}
          ref={(el) => {
            buttons.current[i] = el;
          }}
          type="button"
          className={item.group ? 'group-start' : undefined}
          tabIndex={i === index ? 0 : -1}
          title={item.label}
          {...(item.pressed === undefined ? {} : { 'aria-pressed': item.pressed })}
          // Still focusable (a disabled button would break moving along the toolbar), but does nothing.
          aria-disabled={item.disabled || undefined}
          onFocus={() => setCurrent(i)}
          // The text keeps its selection while a button is clicked.
          onMouseDown={(e) => e.preventDefault()}
          onClick={() => {
            if (!item.disabled) item.run();
          }}
        >
          {/* Named by its label (the symbol is decoration): no aria-label that its visible text would contradict. */}
          <span aria-hidden="true">{item.text}</span>
          <span className="visually-hidden">{item.label}</span>
        </button>
      ))}
    </div>
  );
});
