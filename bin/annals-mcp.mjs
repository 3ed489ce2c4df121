#!/usr/bin/env node
// The annals MCP tool server on stdio (package bin `annals-mcp`, `npm run mcp`): runs the compiled
// src/mcp/main.ts. Settings: ANNALS_ADMIN_BASE, ANNALS_AGENT_KEY, optional ANNALS_SESSION_TOKEN with
// ANNALS_PROJECT_ID (see docs/configuration.md).
import { runCompiled } from './run-compiled.mjs';

await runCompiled('annals-mcp', 'src/mcp/main.js');
