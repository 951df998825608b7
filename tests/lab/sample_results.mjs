// A lab results document (docs/lab.md, "Results file") with realistic figures for the chain,
// amplification, graphql and orders scenarios, for checking the report page without running the lab. Deterministic: the noise
// in the timelines comes from a seeded generator.
//
//   import { sampleResults } from './sample_results.mjs';
//   writeFileSync('lab-results.json', JSON.stringify(sampleResults(), null, 2));
//
//   node tests/lab/sample_results.mjs > lab-results.json

import { pathToFileURL } from 'node:url';

// xorshift32: the same sequence everywhere.
function noise(seed) {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13; x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5; x >>>= 0;
    return x / 0x100000000;
  };
}

const round = (v, digits = 1) => Math.round(v * 10 ** digits) / 10 ** digits;

// ~10 samples a second for `seconds`: pool(t), goodput(t) and answered(t) give the level, plus
// noise.
function timeline(seconds, seed, { pool, goodput, answered = goodput, inFlight, poolSize }) {
  const rnd = noise(seed);
  const samples = [];
  for (let i = 0; i <= seconds * 10; i++) {
    const t = round(i / 10, 1);
    const jitter = () => rnd() - 0.5;
    const complete = Math.max(0, Math.round(goodput(t) * (1 + 0.12 * jitter())));
    samples.push({
      t,
      pool_in_use: Math.max(0, Math.min(poolSize, Math.round(pool(t) + 0.9 * jitter()))),
      pool_waiting: 0,
      db_running: Math.max(0, Math.min(poolSize, Math.round(pool(t)))),
      goodput_rps: complete,
      answered_rps: Math.max(complete, Math.round(answered(t) * (1 + 0.12 * jitter()))),
      in_flight: Math.max(0, Math.round(inFlight(t) * (1 + 0.2 * jitter()))),
    });
  }
  return samples;
}

// 0 before `t0`, rising to `v` over `rise` seconds.
const ramp = (t, t0, rise, v) => (t <= t0 ? 0 : t >= t0 + rise ? v : ((t - t0) / rise) * v);

// The figures of one mode that follow from the others, as the lab computes them: each request
// complete, partial or failed, each failed one counted once by its code (request_errors), the
// errors inside partial answers apart (field_errors), and `errors` every code of every response.
function mode({ requests, partial, requestErrors, fastRequests = 0, fastOk = 0, fastErrors = {}, fieldErrors = {},
                duration, db, zombie, ...rest }) {
  const failed = Object.values(requestErrors).reduce((a, b) => a + b, 0);
  const fastFailed = Object.values(fastErrors).reduce((a, b) => a + b, 0);
  const errors = {};
  for (const codes of [requestErrors, fastErrors, fieldErrors]) {
    for (const [code, n] of Object.entries(codes)) errors[code] = (errors[code] ?? 0) + n;
  }
  const ok = requests - partial - failed;
  return {
    requests, ok, partial, failed,
    fast_requests: fastRequests, fast_ok: fastOk, fast_partial: fastRequests - fastOk - fastFailed, fast_failed: fastFailed,
    goodput_rps: round((ok + fastOk) / duration, 2), answered_rps: round((ok + partial + fastOk) / duration, 2),
    errors, request_errors: requestErrors, fast_request_errors: fastErrors, field_errors: fieldErrors,
    db_seconds: db, zombie_seconds: zombie, zombie_share: round(zombie / db, 3), duration_s: duration,
    ...rest,
  };
}

// The fields cut from one answer: warehouses.<i>.stockValuation for each i, how long each one's
// statement outlived the answer.
const cut = (outlived) => Object.entries(outlived).map(([i, ms]) => ({ path: `warehouses.${i}.stockValuation`, outlived_ms: ms }));

export function sampleResults() {
  const seconds = 20;
  const poolSize = 4;
  const pool = { pool_size: poolSize };
  return {
    version: 1,
    generated_at: '2026-11-30T12:00:00Z',
    database: 'sqlite',
    settings: { scale: 0.05, duration_s: seconds, pool_size: poolSize, user_ms: 250, gateway_ms: 100, inventory_ms: 500,
                query_ms: 400, valuation_steps: 1186794, cores: 2 },
    scenarios: [
      {
        name: 'chain',
        title: 'Timeout chain: user 250 ms, gateway 100 ms, inventory 500 ms, valuation query 400 ms (5 s / 2 s / 10 s / 8 s scaled; stockValuation capped at 75 ms), with cheap bin lookups alongside',
        modes: {
          none: mode({
            requests: 320, partial: 0, requestErrors: { client_gave_up: 320 },
            fastRequests: 320, fastOk: 53, fastErrors: { client_gave_up: 267 },
            p50_ms: 250.6, p99_ms: 262.0, fast_p99_ms: 262.1, retries: 0, ...pool, peak_pool_in_use: 4,
            peak_pool_waiting: 69, pool_queued_s: 19.6, peak_db_running: 4, duration: 20.3, db: 196.2, zombie: 189.9,
            zombie_statements: 118, overshoot_p50_ms: 3382.3, overshoot_p99_ms: 6366.1, drained: false,
            timeline: timeline(seconds, 11, { poolSize, pool: (t) => ramp(t, 0, 0.3, 4),
                                              goodput: (t) => (t < 1 ? 8 : 2), inFlight: (t) => ramp(t, 0, 0.5, 14) }),
          }),
          timeouts: mode({
            requests: 320, partial: 74, requestErrors: { upstream_timeout: 246 }, fieldErrors: { deadline_exceeded: 74 },
            fastRequests: 320, fastOk: 77, fastErrors: { upstream_timeout: 243 },
            p50_ms: 101.1, p99_ms: 171.8, fast_p99_ms: 110.3, retries: 0, ...pool, peak_pool_in_use: 4,
            peak_pool_waiting: 18, pool_queued_s: 18.1, peak_db_running: 4, duration: 20.1, db: 97.5, zombie: 92.7,
            zombie_statements: 73, overshoot_p50_ms: 218.7, overshoot_p99_ms: 2358.5, drained: true,
            timeline: timeline(seconds, 23, { poolSize, pool: (t) => ramp(t, 0, 0.3, 4), goodput: () => 4,
                                              answered: () => 7.5, inFlight: (t) => ramp(t, 0, 0.5, 6) }),
          }),
          cutoff: mode({
            requests: 320, partial: 320, requestErrors: {}, fieldErrors: { deadline_exceeded: 320 },
            fastRequests: 320, fastOk: 320, fastErrors: {},
            p50_ms: 75.1, p99_ms: 85.8, fast_p99_ms: 10.7, retries: 0, ...pool, peak_pool_in_use: 2,
            peak_pool_waiting: 0, pool_queued_s: 0, peak_db_running: 2, duration: 20.1, db: 24.1, zombie: 0.05,
            zombie_statements: 1, overshoot_p50_ms: 0.1, overshoot_p99_ms: 3.9, drained: true,
            timeline: timeline(seconds, 37, { poolSize, pool: (t) => ramp(t, 0, 0.2, 1.3),
                                              goodput: (t) => ramp(t, 0, 1, 16), answered: (t) => ramp(t, 0, 1, 32),
                                              inFlight: (t) => ramp(t, 0, 0.4, 2) }),
          }),
        },
        notes: ['The gateway gives up at 100 ms, but without propagation the inventory and its query run on for 400 ms.'],
      },
      {
        name: 'amplification',
        title: 'Rising load on the slow valuation, each failure retried twice, and cheap bin lookups queueing behind it',
        modes: {
          none: mode({
            requests: 268, partial: 0, requestErrors: { client_gave_up: 268 },
            fastRequests: 320, fastOk: 131, fastErrors: { client_gave_up: 189 },
            p50_ms: 250.4, p99_ms: 275.2, fast_p99_ms: 258.1, retries: 170, ...pool, peak_pool_in_use: 4,
            peak_pool_waiting: 44, pool_queued_s: 15.8, peak_db_running: 4, duration: 20.4, db: 205.1, zombie: 196.8,
            zombie_statements: 120, overshoot_p50_ms: 844.2, overshoot_p99_ms: 6480.2, drained: false,
            timeline: timeline(seconds, 41, { poolSize, pool: (t) => (t < 2 ? 2 : 4),
                                              goodput: (t) => (t < 5 ? 12 : 4), inFlight: (t) => (t < 5 ? 6 : 20) }),
          }),
          timeouts: mode({
            requests: 287, partial: 87, requestErrors: { upstream_timeout: 200 }, fieldErrors: { deadline_exceeded: 87 },
            fastRequests: 320, fastOk: 86, fastErrors: { upstream_timeout: 234 },
            p50_ms: 100.6, p99_ms: 175.8, fast_p99_ms: 116.1, retries: 181, ...pool, peak_pool_in_use: 4,
            peak_pool_waiting: 20, pool_queued_s: 16.9, peak_db_running: 4, duration: 20.1, db: 100.8, zombie: 96.2,
            zombie_statements: 71, overshoot_p50_ms: 221.4, overshoot_p99_ms: 1805.3, drained: true,
            timeline: timeline(seconds, 53, { poolSize, pool: (t) => (t < 2 ? 3 : 4),
                                              goodput: (t) => (t < 5 ? 10 : 3), answered: (t) => (t < 5 ? 14 : 8),
                                              inFlight: (t) => (t < 5 ? 5 : 9) }),
          }),
          cutoff: mode({
            requests: 293, partial: 293, requestErrors: {}, fieldErrors: { deadline_exceeded: 293 },
            fastRequests: 320, fastOk: 320, fastErrors: {},
            p50_ms: 73.5, p99_ms: 80.1, fast_p99_ms: 7.9, retries: 195, ...pool, peak_pool_in_use: 3,
            peak_pool_waiting: 0, pool_queued_s: 0, peak_db_running: 2, duration: 20.1, db: 21.6, zombie: 0.04,
            zombie_statements: 0, overshoot_p50_ms: 0, overshoot_p99_ms: 3.7, drained: true,
            timeline: timeline(seconds, 67, { poolSize, pool: (t) => 1 + t / 20,
                                              goodput: (t) => ramp(t, 0, 1, 16), answered: (t) => ramp(t, 0, 1, 30),
                                              inFlight: (t) => ramp(t, 0, 0.4, 3) }),
          }),
        },
        notes: ['Every mode\'s user retries a request that got no complete answer; what a retry costs the database is what differs.'],
      },
      {
        name: 'graphql',
        title: 'One operation with concurrent resolvers: every warehouse\'s valuation and its first bins, cut at the deadline',
        modes: {
          none: mode({
            requests: 40, partial: 0, requestErrors: { client_gave_up: 40 },
            p50_ms: 253.8, p99_ms: 269.2, fast_p99_ms: 0, retries: 0, ...pool, peak_pool_in_use: 4,
            peak_pool_waiting: 31, pool_queued_s: 18.1, peak_db_running: 4, duration: 20.1, db: 190.3, zombie: 181.2,
            zombie_statements: 320, overshoot_p50_ms: 2242.7, overshoot_p99_ms: 5091.7, drained: false,
            valuations_asked: 0, cut_fields_total: 0, cut_fields_gone: 0, cut_outlived_p50_ms: null,
            cut_outlived_max_ms: null, cut_fields: [],
            timeline: timeline(seconds, 71, { poolSize, pool: (t) => ramp(t, 0, 0.2, 4), goodput: () => 0,
                                              inFlight: () => 1 }),
          }),
          timeouts: mode({
            requests: 56, partial: 31, requestErrors: { upstream_timeout: 25 },
            fieldErrors: { deadline_exceeded: 242, upstream_timeout: 211 },
            p50_ms: 103.6, p99_ms: 196.8, fast_p99_ms: 0, retries: 0, ...pool, peak_pool_in_use: 4,
            peak_pool_waiting: 15, pool_queued_s: 17.2, peak_db_running: 4, duration: 20.2, db: 90.2, zombie: 84.8,
            zombie_statements: 141, overshoot_p50_ms: 317.0, overshoot_p99_ms: 2140.6, drained: true,
            valuations_asked: 248, cut_fields_total: 242, cut_fields_gone: 101, cut_outlived_p50_ms: 225.0,
            cut_outlived_max_ms: 2164.1,
            cut_fields: cut({ 0: 1069.3, 1: 119.0, 2: 691.8, 3: 140.3, 4: 1073.3, 5: 0, 6: 0, 7: 0 }),
            timeline: timeline(seconds, 83, { poolSize, pool: (t) => ramp(t, 0, 0.2, 4), goodput: () => 0,
                                              answered: () => 1.5, inFlight: () => 1 }),
          }),
          cutoff: mode({
            requests: 61, partial: 61, requestErrors: {}, fieldErrors: { deadline_exceeded: 427 },
            p50_ms: 77.7, p99_ms: 93.9, fast_p99_ms: 0, retries: 0, ...pool, peak_pool_in_use: 4,
            peak_pool_waiting: 11, pool_queued_s: 4.6, peak_db_running: 4, duration: 20.3, db: 18.0, zombie: 0,
            zombie_statements: 0, overshoot_p50_ms: 0, overshoot_p99_ms: 0, drained: true,
            valuations_asked: 488, cut_fields_total: 427, cut_fields_gone: 427, cut_outlived_p50_ms: 0,
            cut_outlived_max_ms: 0.1,
            cut_fields: cut({ 0: 0, 1: 0, 2: 0, 4: 0, 5: 0, 6: 0, 7: 0 }),
            timeline: timeline(seconds, 97, { poolSize, pool: (t) => ((t * 10) % 3 < 1 ? 4 : 0), goodput: () => 0,
                                              answered: (t) => ramp(t, 0, 1, 3), inFlight: () => 1 }),
          }),
        },
        notes: ['Partial responses: the fields that made it are returned with a DEADLINE_EXCEEDED error for each cut one.'],
      },
      {
        name: 'orders',
        title: 'Orders: a saga reserves stock in the inventory, then books the shipment with the shipping service (20 to 160 ms a booking); users wait 250 ms or 62 ms, some hang up half-way, and one order in eight is refused',
        modes: {
          none: mode({
            requests: 80, partial: 0, requestErrors: { client_gave_up: 16, hung_up: 10, invalid_argument: 10 },
            p50_ms: 95.2, p99_ms: 161.5, fast_p99_ms: 0, retries: 0, ...pool, peak_pool_in_use: 1,
            peak_pool_waiting: 0, pool_queued_s: 0, peak_db_running: 1, duration: 10.2, db: 0.06, zombie: 0.008,
            zombie_statements: 0, overshoot_p50_ms: 2.1, overshoot_p99_ms: 9.8, drained: true,
            orders: 80, told_ambiguous: 0, sagas_left: { completed: 70, compensated: 10 }, left_unsettled: 0, resumed: 0,
            resumed_final: 0, unsettled: 0, completed_orders: 70, compensated_orders: 10, shipments: 70,
            orphan_shipments: 0, unshipped_orders: 0, false_failures: 0, false_successes: 0,
            reserved_drift_before_resume: 0, reserved_drift: 0, reserved_after: 140,
            timeline: timeline(10, 101, { poolSize, pool: () => 0.3, goodput: () => 4.4, inFlight: () => 1 }),
          }),
          timeouts: mode({
            requests: 80, partial: 0,
            requestErrors: { deadline_exceeded: 16, client_gave_up: 16, hung_up: 10, invalid_argument: 10 },
            p50_ms: 92.7, p99_ms: 105.1, fast_p99_ms: 0, retries: 0, ...pool, peak_pool_in_use: 1,
            peak_pool_waiting: 0, pool_queued_s: 0, peak_db_running: 1, duration: 10.1, db: 0.08, zombie: 0.013,
            zombie_statements: 1, overshoot_p50_ms: 3.4, overshoot_p99_ms: 12.0, drained: true,
            orders: 80, told_ambiguous: 0, sagas_left: { completed: 42, compensated: 38 }, left_unsettled: 0, resumed: 0,
            resumed_final: 0, unsettled: 0, completed_orders: 42, compensated_orders: 38, shipments: 70,
            orphan_shipments: 28, unshipped_orders: 0, false_failures: 16, false_successes: 0,
            reserved_drift_before_resume: 0, reserved_drift: 0, reserved_after: 84,
            timeline: timeline(10, 103, { poolSize, pool: () => 0.3, goodput: () => 2.8, inFlight: () => 1 }),
          }),
          cutoff: mode({
            requests: 80, partial: 0, requestErrors: { deadline_exceeded: 20, hung_up: 10, invalid_argument: 10 },
            p50_ms: 88.4, p99_ms: 165.4, fast_p99_ms: 0, retries: 0, ...pool, peak_pool_in_use: 1,
            peak_pool_waiting: 0, pool_queued_s: 0, peak_db_running: 1, duration: 10.2, db: 0.05, zombie: 0.002,
            zombie_statements: 0, overshoot_p50_ms: 0.5, overshoot_p99_ms: 0.9, drained: true,
            orders: 80, told_ambiguous: 0, sagas_left: { completed: 40, compensated: 30, step_ambiguous: 10 },
            left_unsettled: 10, resumed: 10, resumed_final: 10, unsettled: 0, completed_orders: 50,
            compensated_orders: 30, shipments: 50, orphan_shipments: 0, unshipped_orders: 0, false_failures: 0,
            false_successes: 0, reserved_drift_before_resume: 0, reserved_drift: 0, reserved_after: 100,
            timeline: timeline(10, 107, { poolSize, pool: () => 0.3, goodput: () => 4, inFlight: () => 1 }),
          }),
        },
      },
    ],
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.stdout.write(`${JSON.stringify(sampleResults(), null, 2)}\n`);
}
