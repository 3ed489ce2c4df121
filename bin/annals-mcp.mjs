#!/usr/bin/env node
// The annals MCP tool server on stdio (package bin `annals-mcp`, `npm run mcp`): registers tsx so that
// Node runs the TypeScript sources as they are, then starts src/mcp/main.ts. Settings: ANNALS_ADMIN_BASE,
// ANNALS_AGENT_KEY, optional ANNALS_SESSION_TOKEN with ANNALS_PROJECT_ID (see README).
import { register } from 'tsx/esm/api';

register();
await import(new URL('../src/mcp/main.ts', import.meta.url).href);
