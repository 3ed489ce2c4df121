import { spawn } from 'node:child_process';
import path from 'node:path';
import { expect } from 'chai';
import { loadMcpSettings, McpSettingsError } from '../../src/mcp/mcp-settings.ts';
import { ROOT } from './support.ts';

const KEY = `sk-agent-${'a'.repeat(43)}`;
const PROJECT = '8e5c1a52-8d0c-4d55-9d34-5b0f3f4a1f0e';

describe('MCP server settings', () => {
  it('reads the admin base and the agent key, and an optional session with its project', () => {
    expect(loadMcpSettings({ ANNALS_ADMIN_BASE: 'https://cms.example.com/admin', ANNALS_AGENT_KEY: KEY })).to.deep.equal({
      adminBase: 'https://cms.example.com/admin',
      agentKey: KEY,
      session: undefined,
    });
    expect(loadMcpSettings({ ANNALS_ADMIN_BASE: 'http://127.0.0.1:8080/cms/admin', ANNALS_SESSION_TOKEN: 'eyJ.x.y', ANNALS_PROJECT_ID: PROJECT })).to.deep.equal({
      adminBase: 'http://127.0.0.1:8080/cms/admin',
      agentKey: undefined,
      session: { token: 'eyJ.x.y', projectId: PROJECT },
    });
  });

  it('refuses a bad setting with one line naming the variable, never showing a secret', () => {
    const problem = (env: Record<string, string>) => {
      try {
        loadMcpSettings(env);
      } catch (error) {
        expect(error).to.be.instanceOf(McpSettingsError);
        expect((error as Error).message).not.to.include('\n');
        return (error as Error).message;
      }
      throw new Error('expected a settings error');
    };
    expect(problem({ ANNALS_AGENT_KEY: KEY })).to.match(/^ANNALS_ADMIN_BASE is unset: required; allowed: .*ending in \/admin/);
    expect(problem({ ANNALS_ADMIN_BASE: 'https://cms.example.com/admin/', ANNALS_AGENT_KEY: KEY })).to.match(/^ANNALS_ADMIN_BASE="https:\/\/cms.example.com\/admin\/": has a trailing slash/);
    expect(problem({ ANNALS_ADMIN_BASE: 'https://cms.example.com/api', ANNALS_AGENT_KEY: KEY })).to.match(/does not end in \/admin/);
    expect(problem({ ANNALS_ADMIN_BASE: 'ftp://cms.example.com/admin', ANNALS_AGENT_KEY: KEY })).to.match(/not an http or https URL/);
    expect(problem({ ANNALS_ADMIN_BASE: 'https://cms.example.com/admin' })).to.match(/^ANNALS_AGENT_KEY is unset/);
    const badKey = problem({ ANNALS_ADMIN_BASE: 'https://cms.example.com/admin', ANNALS_AGENT_KEY: 'service_pub_secretvalue1234567890' });
    expect(badKey).to.match(/^ANNALS_AGENT_KEY=\(value hidden\): not an agent key/);
    expect(badKey).not.to.include('secretvalue');
    expect(problem({ ANNALS_ADMIN_BASE: 'https://cms.example.com/admin', ANNALS_SESSION_TOKEN: 'tok' })).to.match(/^ANNALS_PROJECT_ID is unset: required with ANNALS_SESSION_TOKEN/);
    expect(problem({ ANNALS_ADMIN_BASE: 'https://cms.example.com/admin', ANNALS_AGENT_KEY: KEY, ANNALS_PROJECT_ID: PROJECT })).to.match(/^ANNALS_SESSION_TOKEN is unset/);
  });

  it('stops the server with exit code 2 and the message on stderr', async function () {
    this.timeout(30_000);
    const child = spawn(process.execPath, [path.join(ROOT, 'bin/annals-mcp.mjs')], {
      cwd: ROOT,
      env: { PATH: process.env['PATH'] ?? '', ANNALS_ADMIN_BASE: 'https://cms.example.com/admin/', ANNALS_AGENT_KEY: KEY },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    let stdout = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).to.equal(2);
    expect(stderr).to.match(/^annals-mcp: configuration error: ANNALS_ADMIN_BASE=.*has a trailing slash.*\n$/);
    expect(stdout).to.equal('');
  });
});
