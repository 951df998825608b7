// Runs the graphql-http package's GraphQL-over-HTTP server audit against `cutoff graphql serve`.
// Every MUST has to pass; SHOULDs that do not are printed (and documented in docs/graphql.md).
//
//   node tests/graphql/http_audit.mjs --cutoff build/bin/cutoff
import { auditServer } from 'graphql-http';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startService } from '../support/service.mjs';

const { values } = parseArgs({ options: { cutoff: { type: 'string' }, help: { type: 'boolean' } } });
if (values.help || !values.cutoff) {
  console.log('usage: node tests/graphql/http_audit.mjs --cutoff PATH_TO_CUTOFF');
  process.exit(values.help ? 0 : 2);
}

const dir = mkdtempSync(join(tmpdir(), 'cutoff-audit-'));
writeFileSync(join(dir, 'schema.graphql'), 'type Query { hello: String }\ntype Mutation { bump: Int }\n');
writeFileSync(join(dir, 'fixture.json'), JSON.stringify({ hello: 'world', bump: 1 }));
const svc = await startService(values.cutoff, ['graphql', 'serve', '--quiet',
  '--schema', join(dir, 'schema.graphql'), '--fixture', join(dir, 'fixture.json')]);
let failed = 0;
try {
  const results = await auditServer({ url: svc.url + '/graphql' });
  const counts = { ok: 0, warn: 0, error: 0 };
  for (const r of results) {
    counts[r.status]++;
    if (r.status !== 'ok') {
      const why = typeof r.reason === 'string' ? r.reason : JSON.stringify(r.reason);
      console.log(`${r.status === 'error' ? 'FAIL' : 'warn'} ${r.name}: ${why}`);
    }
  }
  console.log(`graphql-http audit: ${counts.ok} passed, ${counts.warn} SHOULD/MAY not met, ${counts.error} MUST failed`);
  failed = counts.error;
} finally {
  await svc.stop();
}
process.exit(failed ? 1 : 0);
