/**
 * `npm run mcp` / `annals-mcp`: the MCP tool server on stdio, for AI agents running it as a local
 * process. It talks to the service only through the admin API over HTTP (ANNALS_ADMIN_BASE), so it may
 * run on another machine. Settings: see mcp-settings.ts. Messages go to stderr (stdout is the protocol).
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { sharedHelpCorpus } from '../help/load-help-corpus.ts';
import { packageVersion } from '../package-root.ts';
import { AdminApiClient } from './admin-api-client.ts';
import { createAnnalsMcpServer } from './annals-mcp-server.ts';
import { loadMcpSettings, McpSettingsError } from './mcp-settings.ts';

let settings;
try {
  settings = loadMcpSettings();
} catch (error) {
  if (!(error instanceof McpSettingsError)) throw error;
  process.stderr.write(`annals-mcp: configuration error: ${error.message}\n`);
  process.exit(2);
}

const version = packageVersion();
const api = new AdminApiClient({ adminBase: settings.adminBase, agentKey: settings.agentKey, session: settings.session });
const server = createAnnalsMcpServer({ api, help: sharedHelpCorpus(), transport: 'stdio', serviceUrl: settings.adminBase.replace(/\/admin$/, '') }, { version });
await server.connect(new StdioServerTransport());
process.stderr.write(`annals-mcp ${version}: serving on stdio for ${settings.adminBase} (${settings.agentKey ? 'agent key' : 'session only'}${settings.agentKey && settings.session ? ' and a user session' : ''})\n`);

const stop = () => {
  server.close().finally(() => process.exit(0));
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
process.stdin.on('end', stop);
