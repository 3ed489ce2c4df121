import { Component, type ErrorInfo, type ReactNode } from 'react';
import { useLocation, useRouteError } from 'react-router';
import { useI18n } from '../i18n/i18n.tsx';

/**
 * What a page shows in its own place when it fails (an error while rendering, a chunk that does not load):
 * never React Router's developer page. The frame around it (header, navigation) stays; what was typed is kept
 * (fields/kept-input.ts) and offered back when the page opens again ("Try again" opens it anew).
 */
export function RouteErrorPanel({ error, onRetry }: { error: unknown; onRetry: () => void }) {
  const { t } = useI18n();
  const message = error instanceof Error ? error.message : String(error);
  return (
    <div className="route-error" role="alert" aria-labelledby="route-error-title">
      <h1 id="route-error-title">{t('boundary.title')}</h1>
      <p>{t('boundary.body')}</p>
      <details>
        <summary>{t('boundary.details')}</summary>
        <pre className="small">{message}</pre>
      </details>
      <div className="row">
        <button type="button" className="primary" onClick={onRetry}>
          {t('app.retry')}
        </button>
      </div>
    </div>
  );
}

interface BoundaryState {
  error: unknown;
  /** Bumped by "Try again": the page is mounted anew. */
  attempt: number;
}

class Boundary extends Component<{ children: ReactNode; render: (error: unknown, retry: () => void) => ReactNode }, BoundaryState> {
  override state: BoundaryState = { error: null, attempt: 0 };

  static getDerivedStateFromError(error: unknown): Partial<BoundaryState> {
    return { error: error ?? new Error('unknown error') };
  }

  override componentDidCatch(error: unknown, info: ErrorInfo): void {
    console.error('A console page failed', error, info.componentStack);
  }

  override render(): ReactNode {
    if (this.state.error) return this.props.render(this.state.error, () => this.setState((s) => ({ error: null, attempt: s.attempt + 1 })));
    return <BoundaryChildren key={this.state.attempt}>{this.props.children}</BoundaryChildren>;
  }
}

function BoundaryChildren({ children }: { children: ReactNode }) {
  return <>{children}</>;
}

/** One boundary per page: a new address starts without the last page's error. */
export function RouteErrorBoundary({ children }: { children: ReactNode }) {
  const { pathname } = useLocation();
  return (
    <Boundary key={pathname} render={(error, retry) => <RouteErrorPanel error={error} onRetry={retry} />}>
      {children}
    </Boundary>
  );
}

/** The router's own error element (errors outside a page's boundary): the same panel, never the developer page. */
export function RouterErrorElement() {
  const error = useRouteError();
  return (
    <main id="main" className="page">
      <RouteErrorPanel error={error} onRetry={() => window.location.reload()} />
    </main>
  );
}
