import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { articleFormSet, startAdminFixture } from '../admin/support.ts';
import { runEntry } from '../support/child-process.ts';
import { tempDir } from '../support/temp-dir.ts';
import { rewriteStream, storedEvents } from '../support/insider.ts';

/**
 * `annals audit diff A B`: a later export that covers an earlier one's range holds its events unchanged; one
 * that continues it (its range starts where the other's ends) carries on every stream; either's checkpoint
 * extends the earlier one's (a consistency proof between the two signed roots). An export of a log rewritten in
 * between, although signed by the same key over a tree rebuilt from the rewritten log, extends neither: its
 * checkpoint forks from the earlier one's. An export of a log that differs from its tree is not made at all.
 */
describe('audit diff: whether one export extends another', function () {
  this.timeout(180_000);
  let dataDir: string;
  let projectId: string;
  let split: string;
  let target: string;
  const dir = () => tempDir();
  const cli = (data: string, args: string[]) => runEntry('src/cli/main.ts', ['audit', ...args], { DATA_DIR: data, LOG_LEVEL: 'silent' }, 120_000);
  const exportTo = async (data: string, from: string, to: string) => exportOf(data, ['--from', from, '--to', to]);
  const exportOf = async (data: string, selection: string[]) => {
    const file = path.join(dir(), 'export.ndjson');
    const run = await cli(data, ['export', '--project', projectId, ...selection, '--out', file, '--json']);
    expect(run.code, run.stderr).to.equal(0);
    return file;
  };

  before(async () => {
    dataDir = path.join(tempDir(), 'data');
    const f = await startAdminFixture({ dataDir });
    try {
      projectId = f.project.projectId;
      const formSet = await f.call('POST', '/form-sets', { body: articleFormSet });
      const first = await f.call('POST', `/form-sets/${formSet.body.id}/entries`, { body: { slug: 'first', fields: { title: 'First' } } });
      target = first.body.entry.id;
      await new Promise((resolve) => setTimeout(resolve, 20));
      split = new Date().toISOString();
      await new Promise((resolve) => setTimeout(resolve, 20));
      const revision = first.body.revision;
      expect((await f.call('POST', `/revisions/${revision.id}/submit`, { body: {} })).status).to.equal(200);
      expect((await f.call('POST', `/form-sets/${formSet.body.id}/entries`, { body: { slug: 'second', fields: { title: 'Second' } } })).status).to.equal(201);
    } finally {
      await f.stop();
    }
  });

  it('a later export covering the range extends the earlier; one continuing from its end does too; one of a rewritten log does not', async () => {
    const earlier = await exportTo(dataDir, '2020-01-01', split);
    const covering = await exportTo(dataDir, '2020-01-01', '2100-01-01');
    const continuing = await exportTo(dataDir, split, '2100-01-01');

    const covers = await cli(dataDir, ['diff', earlier, covering, '--json']);
    expect(covers.code, covers.stdout + covers.stderr).to.equal(0);
    expect(JSON.parse(covers.stdout)).to.include({ extends: true, relation: 'covers', keys: 'bundles' });
    expect(JSON.parse(covers.stdout).newEvents).to.be.greaterThan(0);
    expect(covers.stderr).to.contain('the keys the bundles carry (give --public-key to check who signed them)');
    const continues = await cli(dataDir, ['diff', earlier, continuing, '--json']);
    expect(continues.code, continues.stdout).to.equal(0);
    expect(JSON.parse(continues.stdout)).to.include({ extends: true, relation: 'continues' });

    // The insider rewrites the first entry's history in a copy. Exported as it is, the log no longer matches its
    // tree: the export is refused, naming the event.
    const copy = path.join(tempDir(), 'data');
    fs.cpSync(dataDir, copy, { recursive: true });
    const file = path.join(copy, 'events.sqlite');
    const stream = storedEvents(file).find((e) => e.type === 'entry.created' && JSON.stringify(e.data).includes(target))!.streamId;
    rewriteStream(file, stream, (events) => events.map((e) => (e.type === 'entry.revision-saved' ? { ...e, data: JSON.parse(JSON.stringify(e.data).replace('"First"', '"Rewritten"')) } : e)));
    const mismatched = await cli(copy, ['export', '--project', projectId, '--from', '2020-01-01', '--to', '2100-01-01', '--out', path.join(dir(), 'x.ndjson'), '--json']);
    expect(mismatched.code).to.equal(1);
    expect(JSON.parse(mismatched.stdout).error).to.include({ code: 'AUDIT_EXPORT_UNAVAILABLE' });
    expect(mismatched.stderr).to.match(/does not hash to the leaf the tree holds/);
    // So the insider rebuilds the tree from the rewritten log too, and exports with the same key: a valid bundle,
    // whose checkpoint forks from the earlier one's.
    fs.rmSync(path.join(copy, 'log-tree.sqlite'));
    const forged = await exportTo(copy, '2020-01-01', '2100-01-01');
    const refused = await cli(dataDir, ['diff', earlier, forged, '--json']);
    expect(refused.code).to.equal(1);
    const result = JSON.parse(refused.stdout);
    expect(result.extends).to.equal(false);
    expect(result.consistency).to.include({ verified: false });
    expect(result.problems[0].detail).to.match(/does not extend that of .*: (the consistency proof does not verify|the same size with another root): the log was rewritten between them/);
    // An export whose range is neither covering nor adjacent shows nothing.
    const gap = await exportTo(dataDir, new Date(Date.parse(split) + 5).toISOString(), '2100-01-01');
    expect(JSON.parse((await cli(dataDir, ['diff', earlier, gap, '--json'])).stdout).relation).to.equal('unrelated');
  });

  it('two exports of one entry compare by log.through: the later holds the earlier\'s events unchanged, and one of another entry is unrelated', async () => {
    const first = await exportOf(dataDir, ['--entry', target]);
    const again = await exportOf(dataDir, ['--entry', target]);
    const same = await cli(dataDir, ['diff', first, again, '--json']);
    expect(same.code, same.stdout + same.stderr).to.equal(0);
    const result = JSON.parse(same.stdout);
    expect(result).to.include({ extends: true, relation: 'covers', newEvents: 0 });
    expect(result.commonEvents).to.be.greaterThan(1);
    expect(result.earlier.selection).to.deep.include({ kind: 'entry', entryId: target });
    const period = await exportTo(dataDir, '2020-01-01', '2100-01-01');
    const unrelated = JSON.parse((await cli(dataDir, ['diff', first, period, '--json'])).stdout);
    expect(unrelated).to.include({ extends: false, relation: 'unrelated' });
  });
});
