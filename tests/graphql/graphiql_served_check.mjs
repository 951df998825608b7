// The GraphiQL page as `cutoff graphql serve` serves it, checked in headless Chromium: it loads,
// runs `{ fast slow }` against the real /graphql endpoint, and shows the partial result with a
// DEADLINE_EXCEEDED error (the server grants at most 300 ms; `slow` takes 5 s).
//
//   node tests/graphql/graphiql_served_check.mjs --cutoff build/bin/cutoff [-- graphiql_check options]
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parseCheckArgs, runCheck } from './graphiql_check.mjs';
import { startService } from '../support/service.mjs';

const { values, positionals } = parseArgs({
  options: { cutoff: { type: 'string' }, help: { type: 'boolean' } }, allowPositionals: true,
});
if (values.help || !values.cutoff) {
  console.log('usage: node tests/graphql/graphiql_served_check.mjs --cutoff PATH [-- graphiql_check options]');
  process.exit(values.help ? 0 : 2);
}
const dir = mkdtempSync(join(tmpdir(), 'cutoff-graphiql-'));
writeFileSync(join(dir, 'schema.graphql'), 'type Query { fast: String, slow: String }\n');
writeFileSync(join(dir, 'fixture.json'),
              JSON.stringify({ fast: 'ok', slow: { $delay_ms: 5000, $value: 'late' } }));
const svc = await startService(values.cutoff, ['graphql', 'serve', '--max-budget-ms', '300',
  '--schema', join(dir, 'schema.graphql'), '--fixture', join(dir, 'fixture.json')]);
let status = 1;
try {
  const options = parseCheckArgs(['--url', svc.url + '/graphiql', '--query', '{ fast slow }',
                                  '--expect-code', 'DEADLINE_EXCEEDED', ...positionals]);
  status = (await runCheck(options)) ? 0 : 1;
} finally {
  await svc.stop();
}
process.exit(status);
