import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, test } from 'node:test';
import { backupDatabase, BackupError } from '../../src/store/backup.ts';
import { tempDir } from '../helpers.ts';

const { dir, remove } = tempDir();
after(remove);

test('finishes while another connection commits between its steps, with every row committed before it began', async () => {
  const live = path.join(dir, 'live.db');
  const keyFile = `${live}.key`;
  writeFileSync(keyFile, 'a key\n', { mode: 0o600 });
  const writer = new DatabaseSync(live);
  writer.exec('PRAGMA journal_mode = WAL; CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL); BEGIN');
  const insert = writer.prepare('INSERT INTO t (v) VALUES (?)');
  for (let i = 0; i < 20_000; i++) insert.run('x'.repeat(100));
  writer.exec('COMMIT');
  // A commit every millisecond, for up to 20 s: a backup that took a new snapshot at each step
  // would restart at each commit, and end only once they stop.
  let committing = true;
  const commits = setInterval(() => insert.run('during'), 1);
  const stopCommits = () => {
    committing = false;
    clearInterval(commits);
  };
  const deadline = setTimeout(stopCommits, 20_000);
  try {
    const copy = path.join(dir, 'out', 'copy.db');
    const { pages, keyFile: copiedKey } = await backupDatabase(live, copy, { keyFile, rate: 8 });
    assert.equal(committing, true, 'the backup ended only once the commits stopped');
    stopCommits();
    assert.ok(pages > 200, `${pages} pages`);
    assert.equal(copiedKey, `${copy}.key`);
    assert.equal(readFileSync(copiedKey, 'utf8'), 'a key\n');
    assert.deepEqual(readdirSync(path.dirname(copy)).sort(), ['copy.db', 'copy.db.key']);
    assert.equal(statSync(path.dirname(copy)).mode & 0o777, 0o700);
    for (const file of [copy, copiedKey]) assert.equal(statSync(file).mode & 0o777, 0o600);
    const db = new DatabaseSync(copy, { readOnly: true });
    try {
      const { n } = db.prepare(`SELECT count(*) AS n FROM t WHERE v <> 'during'`).get() as { n: number };
      assert.equal(n, 20_000);
    } finally {
      db.close();
    }
  } finally {
    clearTimeout(deadline);
    stopCommits();
    writer.close();
  }
});

test('refuses a missing database or key file, and leaves nothing behind', async () => {
  const copy = path.join(dir, 'refused', 'copy.db');
  await assert.rejects(backupDatabase(path.join(dir, 'none.db'), copy, { keyFile: path.join(dir, 'live.db.key') }), new BackupError(`no database at ${path.join(dir, 'none.db')}`));
  await assert.rejects(
    backupDatabase(path.join(dir, 'live.db'), copy, { keyFile: path.join(dir, 'none.key') }),
    new BackupError(`no secret key file at ${path.join(dir, 'none.key')}; a copy without it verifies no app secret`),
  );
  await assert.rejects(backupDatabase(path.join(dir, 'live.db'), copy, { keyFile: path.join(dir, 'live.db.key'), rate: 0 }), TypeError);
  assert.equal(readdirSync(dir).includes('refused'), false);
});
