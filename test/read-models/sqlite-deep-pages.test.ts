import { expect } from 'chai';
import Database from 'better-sqlite3';
import { BLOCK_SIZE, DEEP_OFFSET, MAX_LEAD, MAX_LISTS, SqliteDeepPages, type PageColumns } from '../../src/read-models/sqlite-deep-pages.ts';

/**
 * SqliteDeepPages on a plain table through its port (DeepPagesSql), with the file's bookkeeping tables as the
 * store makes them: which lists it counts, and when it walks a list's index to count it.
 */
describe('deep pages of sorted lists (SqliteDeepPages)', () => {
  const LIST_LENGTH = DEEP_OFFSET + 40;
  const open = () => {
    const db = new Database(':memory:');
    db.exec(`
      CREATE TABLE t (id TEXT PRIMARY KEY, k, v INTEGER NOT NULL);
      CREATE INDEX t_by_k_v ON t (k, v, id);
      CREATE TABLE document_commits (id INTEGER PRIMARY KEY CHECK (id = 0), n INTEGER NOT NULL);
      INSERT INTO document_commits VALUES (0, 1);
      CREATE TABLE counted_fields (name TEXT PRIMARY KEY, fields TEXT NOT NULL);
      INSERT INTO counted_fields VALUES ('t', '["k","v"]');
    `);
    const prepared = new Map<string, Database.Statement>();
    /** How many times a list was counted (its index walked whole: the one statement without LIMIT). */
    const counts = { made: 0 };
    /** The SQL of every page walked (asked for with LIMIT and OFFSET). */
    const walks: string[] = [];
    const pages = new SqliteDeepPages({
      field: (path) => `d.${path}`,
      orderBy: (sort) => [...sort.map(([field, direction]) => `d.${field} ${direction.toUpperCase()}`), `d.id ${sort.at(-1)?.[1] === 'desc' ? 'DESC' : 'ASC'}`].join(', '),
      statement: (sql) => {
        if (sql.startsWith('SELECT d.') && !sql.includes('LIMIT')) counts.made++;
        if (sql.includes('OFFSET')) walks.push(sql);
        let statement = prepared.get(sql);
        if (!statement) prepared.set(sql, (statement = db.prepare(sql)));
        return statement;
      },
      record: async () => {},
    });
    return { db, pages, counts, walks };
  };
  const ids: PageColumns = { select: 'd.id', read: (statement, params) => statement.pluck().all(...params) };
  const fill = (db: Database.Database, values: unknown[]) => {
    const insert = db.prepare('INSERT INTO t (id, k, v) VALUES (?, ?, ?)');
    db.transaction(() => {
      for (const [n, value] of values.entries()) for (let i = 0; i < LIST_LENGTH; i++) insert.run(`${n}-${String(i).padStart(4, '0')}`, value, i);
    })();
  };
  const deepPage = (pages: SqliteDeepPages, value: unknown) => pages.page('t', { k: value as string }, [['v', 'desc']], ids, 5, DEEP_OFFSET);

  it('keeps the lists read most recently when it counts more than it may: the least recently read is dropped', () => {
    const { db, pages, counts } = open();
    const values = Array.from({ length: MAX_LISTS + 1 }, (_, n) => `list-${n}`);
    fill(db, values);
    /** Reads a list's deep page; whether that counted the list. */
    const counted = (value: string) => {
      const before = counts.made;
      expect(deepPage(pages, value)).to.have.length(5);
      return counts.made > before;
    };
    for (const value of values.slice(0, MAX_LISTS)) expect(counted(value), value).to.equal(true);
    expect(pages.size).to.equal(MAX_LISTS);
    // The first list read again (still counted): the second is now the least recently read.
    expect(counted(values[0]!)).to.equal(false);
    expect(counted(values[MAX_LISTS]!)).to.equal(true);
    expect(pages.size).to.equal(MAX_LISTS);
    expect(counted(values[0]!), 'the first list kept').to.equal(false);
    expect(counted(values[2]!), 'the third list kept').to.equal(false);
    expect(counted(values[1]!), 'the second list dropped: counted again').to.equal(true);
  });

  it('tells lists apart by the type of a filter value (1 and "1" are different lists)', () => {
    const { db, pages } = open();
    fill(db, [1, '1']);
    const number = deepPage(pages, 1);
    const text = deepPage(pages, '1');
    expect(number).to.deep.equal(['0-0039', '0-0038', '0-0037', '0-0036', '0-0035']);
    expect(text).to.deep.equal(['1-0039', '1-0038', '1-0037', '1-0036', '1-0035']);
    expect(pages.size).to.equal(2);
  });

  it("walks a page from the ties of its block's start (a plain range of the index) where few keys share its value, from its whole key where many do; the same pages either way", () => {
    const { db, pages, walks } = open();
    const insert = db.prepare('INSERT INTO t (id, k, v) VALUES (?, ?, ?)');
    const length = 2_000;
    // "few": 10 keys share each value; "many": 200 do (more than a block and more than MAX_LEAD).
    const ties = { few: 10, many: 200 };
    db.transaction(() => {
      for (const [k, tie] of Object.entries(ties)) for (let i = 0; i < length; i++) insert.run(`${k}-${String(i).padStart(4, '0')}`, k, Math.floor(i / tie));
    })();
    expect(ties.many).to.be.greaterThan(Math.max(MAX_LEAD, 2 * BLOCK_SIZE));
    const byOffset = db.prepare('SELECT id FROM t WHERE k = ? ORDER BY v DESC, id DESC LIMIT 5 OFFSET ?').pluck();
    for (const k of Object.keys(ties)) {
      walks.length = 0;
      for (let offset = DEEP_OFFSET; offset < length + 3; offset += 7) {
        expect(pages.page('t', { k }, [['v', 'desc']], ids, 5, offset), `${k} at ${offset}`).to.deep.equal(byOffset.all(k, offset));
      }
      const fromKey = walks.filter((sql) => sql.includes(' OR ')).length;
      if (k === 'few') expect(fromKey, 'pages walked from their whole key').to.equal(0);
      // Blocks of 63 keys inside a value's 200: their leads are up to 189.
      else expect(fromKey, 'pages walked from their whole key').to.be.within(walks.length / 3, walks.length - 1);
    }
  });

  it('walks from the ties of the second sort value in the part of a list whose first is NULL', () => {
    const { db, pages, walks } = open();
    db.exec(`
      CREATE TABLE u (id TEXT PRIMARY KEY, k, n, v INTEGER NOT NULL);
      CREATE INDEX u_by_k_n_v ON u (k, n DESC, v, id);
      INSERT INTO counted_fields VALUES ('u', '["k","n","v"]');
    `);
    const insert = db.prepare('INSERT INTO u (id, k, n, v) VALUES (?, ?, ?, ?)');
    // Half the rows without n (last in a descending sort), 10 rows to each value of v.
    db.transaction(() => {
      for (let i = 0; i < 1_000; i++) insert.run(`r${String(i).padStart(4, '0')}`, 'x', i % 2 === 0 ? null : i % 7, Math.floor(i / 20));
    })();
    const sort: Array<[string, 'asc' | 'desc']> = [['n', 'desc'], ['v', 'asc']];
    const byOffset = db.prepare('SELECT id FROM u WHERE k = ? ORDER BY n DESC, v ASC, id ASC LIMIT 5 OFFSET ?').pluck();
    for (let offset = DEEP_OFFSET; offset < 1_003; offset += 3) {
      expect(pages.page('u', { k: 'x' }, sort, ids, 5, offset), `at ${offset}`).to.deep.equal(byOffset.all('x', offset));
    }
    // (The part with n has runs of ~70 rows of one n: many of its pages walk from their whole key.)
    const nullPart = walks.filter((sql) => sql.includes('IS NULL'));
    expect(nullPart.filter((sql) => sql.includes('d.v >= ?')).length, 'pages of the NULL part walked from the ties of v').to.be.greaterThan(0);
    expect(nullPart.filter((sql) => sql.includes(' OR ')), 'pages of the NULL part walked from their whole key').to.deep.equal([]);
  });
});
