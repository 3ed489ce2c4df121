/**
 * Settings of the stdio MCP server (`npm run mcp`, `annals-mcp`), from the environment:
 *
 * - ANNALS_ADMIN_BASE: the admin API base, ending in /admin without a trailing slash
 *   (https://cms.example.com/admin); tools call `${base}/v1/...`.
 * - ANNALS_AGENT_KEY: the agent key (sk-agent-...), sent as Authorization: Bearer.
 * - ANNALS_SESSION_TOKEN and ANNALS_PROJECT_ID (optional, together): a console user session (from
 *   POST /admin/v1/auth/login) and the project it acts in, for the tools the spec reserves to user
 *   sessions (update_master_record, update_master_tree, patch_project_content_locales). Without an agent
 *   key, every tool uses the session.
 *
 * One of the agent key and the session is required. A bad setting is one line naming the variable, the
 * problem and what is allowed; secrets are never shown.
 */
export interface McpSettings {
  adminBase: string;
  agentKey: string | undefined;
  session: { token: string; projectId: string } | undefined;
}

export class McpSettingsError extends Error {
  override name = 'McpSettingsError';
}

const AGENT_KEY = /^sk-agent-[A-Za-z0-9_-]{20,200}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const MCP_SETTINGS = {
  ANNALS_ADMIN_BASE: 'the admin API base URL, http(s), ending in /admin without a trailing slash, e.g. https://cms.example.com/admin',
  ANNALS_AGENT_KEY: 'an agent key (sk-agent-...) issued for the project; required unless ANNALS_SESSION_TOKEN is set',
  ANNALS_SESSION_TOKEN: 'a console session token from POST /admin/v1/auth/login, set together with ANNALS_PROJECT_ID (optional)',
  ANNALS_PROJECT_ID: 'the UUID of the project the session acts in, set together with ANNALS_SESSION_TOKEN (optional)',
} as const;

export function loadMcpSettings(env: NodeJS.ProcessEnv = process.env): McpSettings {
  const value = (name: keyof typeof MCP_SETTINGS): string | undefined => {
    const raw = env[name]?.trim();
    return raw === undefined || raw === '' ? undefined : raw;
  };
  const problem = (name: keyof typeof MCP_SETTINGS, shown: string, what: string) => new McpSettingsError(`${name}${shown}: ${what}; allowed: ${MCP_SETTINGS[name]}`);

  const base = value('ANNALS_ADMIN_BASE');
  if (base === undefined) throw problem('ANNALS_ADMIN_BASE', ' is unset', 'required');
  const shownBase = `=${JSON.stringify(base)}`;
  let url: URL;
  try {
    url = new URL(base);
  } catch {
    throw problem('ANNALS_ADMIN_BASE', shownBase, 'not a URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw problem('ANNALS_ADMIN_BASE', shownBase, 'not an http or https URL');
  if (url.username || url.password) throw problem('ANNALS_ADMIN_BASE', '=(value hidden)', 'must not hold credentials (use ANNALS_AGENT_KEY)');
  if (url.search || url.hash) throw problem('ANNALS_ADMIN_BASE', shownBase, 'must not have a query or fragment');
  if (base.endsWith('/')) throw problem('ANNALS_ADMIN_BASE', shownBase, 'has a trailing slash');
  if (!url.pathname.endsWith('/admin')) throw problem('ANNALS_ADMIN_BASE', shownBase, 'does not end in /admin');

  const agentKey = value('ANNALS_AGENT_KEY');
  if (agentKey !== undefined && !AGENT_KEY.test(agentKey)) throw problem('ANNALS_AGENT_KEY', '=(value hidden)', 'not an agent key (sk-agent-...)');
  const token = value('ANNALS_SESSION_TOKEN');
  const projectId = value('ANNALS_PROJECT_ID');
  if (token !== undefined && projectId === undefined) throw problem('ANNALS_PROJECT_ID', ' is unset', 'required with ANNALS_SESSION_TOKEN');
  if (projectId !== undefined && token === undefined) throw problem('ANNALS_SESSION_TOKEN', ' is unset', 'required with ANNALS_PROJECT_ID');
  if (projectId !== undefined && !UUID.test(projectId)) throw problem('ANNALS_PROJECT_ID', `=${JSON.stringify(projectId)}`, 'not a project id (UUID)');
  if (token !== undefined && /\s/.test(token)) throw problem('ANNALS_SESSION_TOKEN', '=(value hidden)', 'holds whitespace');
  if (agentKey === undefined && token === undefined) throw problem('ANNALS_AGENT_KEY', ' is unset', 'an agent key, or a session (ANNALS_SESSION_TOKEN with ANNALS_PROJECT_ID), is required');
  return {
    adminBase: `${url.origin}${url.pathname}`,
    agentKey,
    session: token !== undefined && projectId !== undefined ? { token, projectId } : undefined,
  };
}
