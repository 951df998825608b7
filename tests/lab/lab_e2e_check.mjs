// The lab end to end: runs `cutoff lab` on a real database with small settings and checks the
// outcome the lab exists to show.
//
// - With cutoff, zombie work (statement time after the caller had its answer) is under 1% of
//   what the per-layer timeouts leave behind, in every scenario.
// - With cutoff, the pool never saturates in the chain and amplification scenarios: no caller
//   ever queues for a connection.
// - With timeouts the amplification is visible: the pool saturates, callers queue, the
//   database spends most of its time on work nobody waits for, retries happen and fewer of the
//   unrelated cheap lookups succeed than with cutoff.
// - With cutoff, every valuation request is answered before its user gives up: at least 95%
//   with data (the valuation cut), any others with the gateway's own deadline_exceeded.
// - The GraphQL scenario gives partial responses under cutoff, whose cut fields' backend work
//   had stopped when the answer arrived (within milliseconds of the response); under timeouts
//   it outlives the response.
// - Under overload (three times the measured capacity, offered by users who retry) cutoff keeps
//   most of its capacity as goodput and its cheap lookups recover within seconds of the excess
//   stopping, while timeouts collapse: retries multiply the load, most database time is zombie
//   work, and the lookups recover later or never.
// - Orders (a saga across the inventory and the shipping service): under cutoff no user is told
//   an order failed that shipped, no shipment goes out with its stock released, every saga left
//   ambiguous is settled by resuming it, and the stock agrees with the saga journal; under
//   timeouts the shipping service's own timeout answers 504 and books anyway, so shipments go
//   out with their stock released and users are told failed orders that shipped.
// - lab-results.json has the documented shape (docs/lab.md) and adds up (each request complete,
//   partial or failed; failed requests counted once by their code, field errors apart), and the
//   report page made from it draws every chart in headless Chromium without an error, at a
//   desktop's and a phone's width (report_check.mjs).
//
//   node tests/lab/lab_e2e_check.mjs --cutoff build/bin/cutoff [--db URL | --db-url-file FILE]
//                                    [--inventory-transport grpc]
//
// Options:
//   --cutoff PATH          the cutoff binary (required)
//   --db URL               database URL (default: a SQLite file in a temporary directory)
//   --db-url-file FILE     read the database URL from FILE (scripts/pg-test-server writes one)
//   --duration-s N         load per scenario and mode (default 5)
//   --keep DIR             write the results and the report into DIR (default: a temporary dir)
//   --shape-only           check that the lab runs and what it writes, not its figures (for
//                          sanitizer builds, whose slowdown is not the machine's)
//   --inventory-transport grpc  the gateway calls the inventory over gRPC; runs and checks the
//                          chain scenario only
//   -h, --help             this text
//
// Exit status: 0 when every check passes, 1 when one fails (with the reason), 2 for bad usage.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { faultPoint, runChild } from '../support/children.mjs';
import { runCheck as checkReportPage } from './report_check.mjs';

const NAME = 'lab_e2e_check';
const MODES = ['none', 'timeouts', 'cutoff'];
const FIGURES = ['requests', 'ok', 'partial', 'failed', 'fast_requests', 'fast_ok', 'fast_partial', 'fast_failed',
  'goodput_rps', 'answered_rps', 'p50_ms', 'p99_ms', 'errors', 'request_errors', 'fast_request_errors', 'field_errors',
  'pool_size', 'peak_pool_in_use', 'peak_pool_waiting', 'pool_queued_s', 'db_seconds', 'zombie_seconds', 'zombie_share',
  'overshoot_p50_ms', 'overshoot_p99_ms', 'retries', 'timeline'];
const OVERLOAD_FIGURES = ['capacity_per_s', 'offered_per_s', 'goodput_per_s', 'goodput_ratio', 'overload_attempts_per_s',
  'overload_retries', 'baseline_fast_p99_ms', 'recovered', 'recovery_s', 'phases', 'fast_p99_windows'];
const ORDERS_FIGURES = ['orders', 'told_ambiguous', 'sagas_left', 'left_unsettled', 'resumed', 'resumed_final',
  'unsettled', 'completed_orders', 'compensated_orders', 'shipments', 'orphan_shipments', 'unshipped_orders',
  'false_failures', 'false_successes', 'reserved_drift_before_resume', 'reserved_drift', 'reserved_after'];
const GRAPHQL_FIGURES = ['valuations_asked', 'cut_fields_total', 'cut_fields_gone', 'cut_outlived_p50_ms',
  'cut_outlived_max_ms', 'cut_fields'];

function usage() {
  return readFileSync(new URL(import.meta.url), 'utf8').split('\n').slice(0, 35)
    .map((l) => l.replace(/^\/\/ ?/, '')).join('\n');
}

function parse(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      cutoff: { type: 'string' },
      db: { type: 'string' },
      'db-url-file': { type: 'string' },
      'duration-s': { type: 'string', default: '5' },
      keep: { type: 'string' },
      'shape-only': { type: 'boolean' },
      'inventory-transport': { type: 'string', default: 'http' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return { help: true };
  if (!values.cutoff) throw new Error('--cutoff is required');
  const duration = Number(values['duration-s']);
  if (!(duration >= 1)) throw new Error('--duration-s must be a number >= 1');
  let db = values.db;
  if (values['db-url-file']) db = readFileSync(values['db-url-file'], 'utf8').trim();
  const transport = values['inventory-transport'];
  if (!['http', 'grpc'].includes(transport)) throw new Error('--inventory-transport must be http or grpc');
  return { cutoff: values.cutoff, db, duration, keep: values.keep, shapeOnly: values['shape-only'], transport };
}

const failures = [];
function check(ok, what) {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (!ok) failures.push(what);
}

// What the lab exists to show (see the top of this file).
function checkFigures(byName) {
  // Zombie statement time: the orders scenario's statements are short (its point is what the
  // users are told), so it is checked apart.
  for (const [name, { timeouts, cutoff }] of Object.entries(byName).filter(([n]) => n !== 'orders')) {
    check(timeouts.zombie_seconds > 0.5, `${name}: timeouts leave zombie work (${timeouts.zombie_seconds} s)`);
    check(cutoff.zombie_seconds < 0.01 * timeouts.zombie_seconds,
      `${name}: cutoff's zombie work ${cutoff.zombie_seconds} s is under 1% of timeouts' ${timeouts.zombie_seconds} s`);
    check(cutoff.overshoot_p50_ms < 25,
      `${name}: cutoff stops statements within 25 ms (p50 ${cutoff.overshoot_p50_ms} ms, p99 ${cutoff.overshoot_p99_ms} ms)`);
  }
  const chains = ['chain', 'amplification'].filter((name) => byName[name]);
  for (const name of chains) {
    const { timeouts, cutoff } = byName[name];
    // Saturated: a caller had to queue for a connection.
    check(cutoff.peak_pool_waiting === 0 && cutoff.pool_queued_s === 0,
      `${name}: cutoff never saturates the pool (peak ${cutoff.peak_pool_in_use}/${cutoff.pool_size}, ` +
      `${cutoff.peak_pool_waiting} queued)`);
    check(timeouts.peak_pool_in_use === timeouts.pool_size && timeouts.pool_queued_s > 0.5,
      `${name}: timeouts saturate the pool (peak ${timeouts.peak_pool_in_use}/${timeouts.pool_size}, ` +
      `callers queued ${timeouts.pool_queued_s} s)`);
    check(cutoff.fast_ok > timeouts.fast_ok,
      `${name}: more cheap lookups succeed with cutoff (${cutoff.fast_ok}) than with timeouts (${timeouts.fast_ok})`);
    check(cutoff.goodput_rps > timeouts.goodput_rps,
      `${name}: goodput is higher with cutoff (${cutoff.goodput_rps}/s) than with timeouts (${timeouts.goodput_rps}/s)`);
  }
  if (byName.amplification) {
    const amp = byName.amplification.timeouts;
    check(amp.retries > 0, `amplification: timeouts' users retried (${amp.retries})`);
    check(amp.zombie_share > 0.5, `amplification: with timeouts most database time is zombie work (${amp.zombie_share})`);
  }

  for (const name of chains) {
    const { cutoff } = byName[name];
    // Every user gets the gateway's answer before giving up: with data (the valuation cut at its
    // cap), or, when a starved machine delays the cheap warehouse lookup itself past the
    // gateway's budget, the gateway's own deadline_exceeded. Never silence, never another error.
    const failures = Object.entries(cutoff.request_errors ?? {});
    check(failures.every(([code]) => code === 'deadline_exceeded'),
      `${name}: cutoff answers every valuation request before its user gives up ` +
      `(failed: ${failures.map(([c, n]) => `${c}=${n}`).join(' ') || 'none'})`);
    check(cutoff.partial + cutoff.ok >= 0.95 * cutoff.requests,
      `${name}: cutoff answers at least 95% of the valuation requests with data (${cutoff.ok} + ${cutoff.partial} of ` +
      `${cutoff.requests})`);
  }
  if (byName.graphql) checkGraphQL(byName.graphql);
  if (byName.overload) checkOverload(byName.overload);
  if (byName.orders) checkOrders(byName.orders);
}

function checkOrders(orders) {
  for (const mode of MODES) {
    const m = orders[mode];
    check(m.orders > 0 && m.orders === m.requests, `orders/${mode}: orders were placed (${m.orders})`);
    // The journal is the truth about the local step in every mode: its effect and its row commit together.
    check(m.reserved_drift === 0 && m.reserved_drift_before_resume === 0,
      `orders/${mode}: the stock reserved agrees with the saga journal (drift ${m.reserved_drift_before_resume} ` +
      `before resuming, ${m.reserved_drift} after)`);
    check(m.false_successes === 0 && m.unshipped_orders === 0,
      `orders/${mode}: every order told completed shipped (${m.false_successes} not, ${m.unshipped_orders} ` +
      'completed without a shipment)');
  }
  const { timeouts, cutoff } = orders;
  check(cutoff.false_failures === 0 && cutoff.orphan_shipments === 0,
    `orders: under cutoff no user is told a failed order that shipped (${cutoff.false_failures}) and no shipment ` +
    `goes out with its stock released (${cutoff.orphan_shipments})`);
  check(cutoff.resumed > 0 && cutoff.resumed_final === cutoff.resumed && cutoff.unsettled === 0,
    `orders: under cutoff every saga left ambiguous is settled by resuming it (${cutoff.resumed_final} of ` +
    `${cutoff.resumed}, ${cutoff.unsettled} left)`);
  check(timeouts.orphan_shipments > 0 && timeouts.false_failures > 0,
    `orders: under timeouts shipping's own timeout answers 504 and books anyway: ${timeouts.orphan_shipments} ` +
    `shipments with their stock released, ${timeouts.false_failures} users told a failed order that shipped`);
}

function checkGraphQL(gql) {
  check(gql.cutoff.partial > 0, `graphql: cutoff answers with partial responses (${gql.cutoff.partial})`);
  check(gql.cutoff.cut_fields_total > 0 && gql.cutoff.cut_fields_gone >= 0.9 * gql.cutoff.cut_fields_total,
    `graphql: with cutoff the statements behind the cut fields had stopped when the answer arrived ` +
    `(${gql.cutoff.cut_fields_gone} of ${gql.cutoff.cut_fields_total})`);
  check(gql.timeouts.cut_fields_gone < gql.timeouts.cut_fields_total,
    `graphql: with timeouts some cut fields' statements were still running after the answer ` +
    `(${gql.timeouts.cut_fields_total - gql.timeouts.cut_fields_gone} of ${gql.timeouts.cut_fields_total}, up to ` +
    `${gql.timeouts.cut_outlived_max_ms} ms)`);
  check(gql.cutoff.cut_fields.length > 0, `graphql: cutoff names the cut fields (${gql.cutoff.cut_fields.length})`);
  check(gql.cutoff.cut_fields.every((f) => f.outlived_ms < 50),
    `graphql: with cutoff no cut field's backend work outlived the response by 50 ms ` +
    `(${gql.cutoff.cut_fields.map((f) => f.outlived_ms).join(', ')})`);
  check(gql.timeouts.cut_fields.some((f) => f.outlived_ms > 50),
    `graphql: with timeouts cut fields' work outlived the response ` +
    `(${gql.timeouts.cut_fields.map((f) => f.outlived_ms).join(', ')})`);
}

function checkOverload(ov) {
  // Overload: three times the capacity, offered by users who retry. The target (docs/lab.md)
  // is cutoff keeping 0.9 of its capacity as goodput. On 2 shared cores SQLite gave 0.84 to
  // 1.01 in ten-second runs; PostgreSQL, whose server processes compete for the same cores
  // with the load and the services, 0.44 to 0.98. A five-second run measures the capacity over
  // barely more than a second, and a busy or different machine moves both numbers: runs beside
  // a process spinning on one core gave 0.73 to 1.3, and a CI machine once gave 0.37 on
  // SQLite. What is asserted is the shape: a quarter of the capacity at least, on either
  // database, and five times the ratio of timeouts, which keeps a few hundredths.
  for (const mode of MODES) {
    check(ov[mode].capacity_per_s > 5, `overload/${mode}: a capacity was measured (${ov[mode].capacity_per_s}/s)`);
  }
  const leastRatio = 0.25;
  check(ov.cutoff.goodput_ratio >= leastRatio && ov.cutoff.goodput_ratio >= 5 * ov.timeouts.goodput_ratio,
    `overload: cutoff keeps a share of its capacity as goodput, five times timeouts' at least ` +
    `(${ov.cutoff.goodput_ratio} of ${ov.cutoff.capacity_per_s}/s, against ${ov.timeouts.goodput_ratio})`);
  check(ov.timeouts.goodput_ratio <= 0.5 && ov.timeouts.goodput_ratio < ov.cutoff.goodput_ratio / 2,
    `overload: timeouts collapse (goodput ${ov.timeouts.goodput_ratio} of capacity, against cutoff's ` +
    `${ov.cutoff.goodput_ratio})`);
  check(ov.timeouts.overload_retries > 0 && ov.timeouts.overload_attempts_per_s > 1.5 * ov.timeouts.offered_per_s,
    `overload: timeouts' retries multiply the load (${ov.timeouts.overload_attempts_per_s}/s sent for ` +
    `${ov.timeouts.offered_per_s}/s offered)`);
  check(ov.timeouts.zombie_share > 0.5, `overload: with timeouts most database time is zombie work (${ov.timeouts.zombie_share})`);
  check(ov.cutoff.recovered && ov.cutoff.recovery_s <= 3,
    `overload: cutoff's lookups are back within 3 s of the excess stopping (${ov.cutoff.recovery_s} s)`);
  check(!ov.timeouts.recovered || ov.timeouts.recovery_s > ov.cutoff.recovery_s,
    `overload: timeouts recover later than cutoff, or never (${ov.timeouts.recovered ? `${ov.timeouts.recovery_s} s` : 'never'})`);
}

async function main() {
  let opts;
  try {
    opts = parse(process.argv.slice(2));
  } catch (e) {
    console.error(`${NAME}: ${e.message}\n\n${usage()}`);
    return 2;
  }
  if (opts.help) {
    console.log(usage());
    return 0;
  }
  const dir = opts.keep ?? mkdtempSync(join(tmpdir(), 'cutoff-lab-e2e-'));
  mkdirSync(dir, { recursive: true });
  const db = opts.db ?? `sqlite:${join(dir, 'lab.db')}`;
  const results = join(dir, 'lab-results.json');
  const report = join(dir, 'lab-report.html');
  const args = ['lab', '--db', db, '--duration-s', String(opts.duration), '--results', results, '--report', report];
  // Over gRPC the chain alone: the transport changes the calls, not what the other scenarios show.
  const expected = opts.transport === 'grpc' ? ['chain'] : ['chain', 'amplification', 'graphql', 'overload', 'orders'];
  if (opts.transport === 'grpc') args.push('--inventory-transport', 'grpc', '--scenarios', 'chain');
  console.log(`${NAME}: ${opts.cutoff} ${args.join(' ')}`);
  const running = runChild(opts.cutoff, args, { timeoutMs: 600_000 });
  await faultPoint('lab');
  const run = await running;
  process.stdout.write(run.stdout);
  if (run.error || run.status !== 0) {
    const why = run.error ? `could not start: ${run.error.message}` : run.timedOut ? 'ran out of time (600 s)'
      : `exited with ${run.status ?? run.signal}`;
    console.error(`${NAME}: cutoff lab ${why}\n${run.stderr}`);
    return 1;
  }
  check(run.stderr.includes('sent') && run.stderr.includes('pool'), 'a progress line was printed');
  check(existsSync(report) && statSync(report).size > 10_000, `the report page was written (${report})`);
  const doc = JSON.parse(readFileSync(results, 'utf8'));
  check(doc.database === (db.startsWith('sqlite:') ? 'sqlite' : 'postgresql'), `the database is named (${doc.database})`);
  const byName = Object.fromEntries((doc.scenarios ?? []).map((s) => [s.name, s.modes]));
  check(expected.every((n) => byName[n]), `every scenario is in the results (${expected})`);
  check(doc.settings?.inventory_transport === opts.transport,
    `the gateway called the inventory over ${opts.transport} (${doc.settings?.inventory_transport})`);
  for (const [name, modes] of Object.entries(byName)) {
    for (const mode of MODES) {
      const m = modes?.[mode];
      const own = { graphql: GRAPHQL_FIGURES, overload: OVERLOAD_FIGURES, orders: ORDERS_FIGURES }[name] ?? [];
      const missing = [...FIGURES, ...own].filter((f) => !(m && f in m));
      check(missing.length === 0, `${name}/${mode} has every figure${missing.length ? ` (missing ${missing})` : ''}`);
    }
  }
  if (failures.length) return 1;
  if (!opts.shapeOnly) checkFigures(byName);

  if (failures.length) {
    console.error(`${NAME}: ${failures.length} check(s) failed; results in ${results}`);
    return 1;
  }
  const page = await checkReportPage({ cutoff: opts.cutoff, results, keep: join(dir, 'report-check'), timeoutMs: 60_000,
    chromium: process.env.CHROMIUM || '/usr/bin/chromium' });
  check(page, 'the report page of this run renders in Chromium');
  if (failures.length) return 1;
  console.log(`${NAME}: every check passed (${results})`);
  return 0;
}

main().then((code) => { process.exitCode = code; }, (e) => { console.error(`${NAME}: ${e.stack ?? e}`); process.exitCode = 1; });
