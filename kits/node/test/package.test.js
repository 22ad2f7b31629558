// The package as npm publishes it: packed, installed in an empty project
// with no database client, it loads through its exports and brings in
// nothing.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

test('the packed package installs alone and loads', () => {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const dir = mkdtempSync(join(tmpdir(), 'webhooks-node-pack-'));
  try {
    const npm = (args, cwd) => execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: 'pipe' });
    npm(['pack', '--silent', '--pack-destination', dir], root);
    const [tarball] = readdirSync(dir).filter((f) => f.endsWith('.tgz'));
    const project = join(dir, 'customer');
    execFileSync('mkdir', [project]);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'customer', private: true, type: 'module' }));
    npm(['install', '--offline', '--no-audit', '--no-fund', join(dir, tarball)], project);
    assert.deepEqual(readdirSync(join(project, 'node_modules')).sort(), ['.package-lock.json', '@factuarea'], 'installed packages');
    const out = execFileSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import * as kit from '@factuarea/webhooks-receiver';
         const err = await kit.createTable({}).catch((e) => e);
         console.log(typeof kit.Receiver, err instanceof kit.UnsupportedDatabaseError, kit.DEFAULT_RETENTION_MS);`,
      ],
      { cwd: project, encoding: 'utf8' },
    );
    assert.equal(out.trim(), `function true ${7 * 24 * 3600 * 1000}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
