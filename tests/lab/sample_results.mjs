// A lab results document (docs/lab.md, "Results file") with realistic figures for the three
// scenarios, for checking the report page without running the lab. Deterministic: the noise
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

// ~10 samples a second for `seconds`: pool(t) and goodput(t) give the level, plus noise.
function timeline(seconds, seed, { pool, goodput, inFlight, poolSize }) {
  const rnd = noise(seed);
  const samples = [];
  for (let i = 0; i <= seconds * 10; i++) {
    const t = round(i / 10, 1);
    const jitter = () => rnd() - 0.5;
    samples.push({
      t,
      pool_in_use: Math.max(0, Math.min(poolSize, Math.round(pool(t) + 0.9 * jitter()))),
      goodput_rps: Math.max(0, round(goodput(t) * (1 + 0.12 * jitter()), 1)),
      in_flight: Math.max(0, Math.round(inFlight(t) * (1 + 0.2 * jitter()))),
    });
  }
  return samples;
}

// 0 before `t0`, rising to `v` over `rise` seconds.
const ramp = (t, t0, rise, v) => (t <= t0 ? 0 : t >= t0 + rise ? v : ((t - t0) / rise) * v);

export function sampleResults() {
  const seconds = 20;
  const poolSize = 10;
  return {
    version: 1,
    generated_at: '2026-11-30T12:00:00Z',
    database: 'sqlite',
    settings: { scale: 0.01, duration_s: seconds, clients: 64, target_rps: 240, pool_size: poolSize,
                retries: 2, seed: 7 },
    scenarios: [
      {
        name: 'chain',
        title: 'Timeout chain: user 5 s, service A 2 s, service B 10 s, query 8 s (scaled)',
        modes: {
          none: {
            requests: 4812, ok: 401, goodput_rps: 20.1, p50_ms: 50.2, p99_ms: 51.9,
            errors: { cancelled: 4411 }, pool_size: poolSize, peak_pool_in_use: 10,
            zombie_seconds: 181.4, zombie_statements: 4170, overshoot_p50_ms: null, overshoot_p99_ms: null,
            timeline: timeline(seconds, 11, { poolSize, pool: (t) => ramp(t, 0, 0.6, 10),
                                              goodput: (t) => (t < 0.3 ? 0 : 20), inFlight: (t) => ramp(t, 0, 0.5, 64) }),
          },
          timeouts: {
            requests: 4790, ok: 388, goodput_rps: 19.4, p50_ms: 20.3, p99_ms: 21.6,
            errors: { deadline_exceeded: 4402 }, pool_size: poolSize, peak_pool_in_use: 10,
            zombie_seconds: 176.9, zombie_statements: 4398, overshoot_p50_ms: null, overshoot_p99_ms: null,
            timeline: timeline(seconds, 23, { poolSize, pool: (t) => ramp(t, 0, 0.8, 10),
                                              goodput: (t) => (t < 0.3 ? 0 : 19.5), inFlight: (t) => ramp(t, 0, 0.5, 60) }),
          },
          cutoff: {
            requests: 4801, ok: 3876, goodput_rps: 193.8, p50_ms: 9.7, p99_ms: 20.4,
            errors: { deadline_exceeded: 925 }, pool_size: poolSize, peak_pool_in_use: 6,
            zombie_seconds: 0.42, zombie_statements: 38, overshoot_p50_ms: 0.6, overshoot_p99_ms: 2.9,
            timeline: timeline(seconds, 37, { poolSize, pool: (t) => ramp(t, 0, 0.4, 3.5),
                                              goodput: (t) => ramp(t, 0, 0.4, 194), inFlight: (t) => ramp(t, 0, 0.4, 22) }),
          },
        },
        notes: ['Service A gives up at 2 s, but without propagation service B and its query run on for 8 s.'],
      },
      {
        name: 'amplification',
        title: 'Retry amplification: clients retry twice on timeout during a 5 s slowdown (scaled)',
        modes: {
          none: {
            requests: 5120, ok: 2950, goodput_rps: 147.5, p50_ms: 31.8, p99_ms: 498.2,
            errors: { overloaded: 1688, unavailable: 482 }, pool_size: poolSize, peak_pool_in_use: 10,
            zombie_seconds: 96.3, zombie_statements: 1530, overshoot_p50_ms: null, overshoot_p99_ms: null,
            timeline: timeline(seconds, 41, { poolSize,
              pool: (t) => (t < 5 ? 4 : t < 15 ? 10 : 6),
              goodput: (t) => (t < 5 ? 235 : t < 15 ? 80 : 150), inFlight: (t) => (t < 5 ? 20 : t < 15 ? 190 : 90) }),
          },
          timeouts: {
            requests: 7340, ok: 3120, goodput_rps: 156.0, p50_ms: 28.4, p99_ms: 120.9,
            errors: { attempt_timeout: 2411, overloaded: 1520, deadline_exceeded: 289 }, pool_size: poolSize,
            peak_pool_in_use: 10, zombie_seconds: 118.7, zombie_statements: 2302,
            overshoot_p50_ms: null, overshoot_p99_ms: null,
            timeline: timeline(seconds, 53, { poolSize,
              pool: (t) => (t < 5 ? 4 : t < 16 ? 10 : 5),
              goodput: (t) => (t < 5 ? 236 : t < 16 ? 95 : 210), inFlight: (t) => (t < 5 ? 20 : t < 16 ? 230 : 40) }),
          },
          cutoff: {
            requests: 5010, ok: 4235, goodput_rps: 211.8, p50_ms: 14.2, p99_ms: 60.3,
            errors: { deadline_exceeded: 640, overloaded: 135 }, pool_size: poolSize, peak_pool_in_use: 9,
            zombie_seconds: 1.07, zombie_statements: 61, overshoot_p50_ms: 0.7, overshoot_p99_ms: 3.8,
            timeline: timeline(seconds, 67, { poolSize,
              pool: (t) => (t < 5 ? 4 : t < 10 ? 8 : 4),
              goodput: (t) => (t < 5 ? 236 : t < 10 ? 175 : 226), inFlight: (t) => (t < 5 ? 20 : t < 10 ? 48 : 22) }),
          },
        },
        notes: ['Retries are only sent while budget remains; with cutoff an exhausted budget is not retried.'],
      },
      {
        name: 'graphql',
        title: 'GraphQL fan-out: 3 warehouses x 4 fields, stockValuation slow, 300 ms budget (scaled)',
        modes: {
          none: {
            requests: 2400, ok: 2150, goodput_rps: 107.5, p50_ms: 611.3, p99_ms: 802.7,
            errors: { cancelled: 250 }, pool_size: poolSize, peak_pool_in_use: 10,
            zombie_seconds: 12.8, zombie_statements: 250, overshoot_p50_ms: null, overshoot_p99_ms: null,
            cut_fields: [],
            timeline: timeline(seconds, 71, { poolSize, pool: (t) => ramp(t, 0, 1, 9.5),
                                              goodput: (t) => ramp(t, 0.6, 0.5, 108), inFlight: (t) => ramp(t, 0, 1, 70) }),
          },
          timeouts: {
            requests: 2400, ok: 2361, goodput_rps: 118.1, p50_ms: 300.8, p99_ms: 305.2,
            errors: { deadline_exceeded: 39 }, pool_size: poolSize, peak_pool_in_use: 10,
            zombie_seconds: 342.6, zombie_statements: 7083, overshoot_p50_ms: null, overshoot_p99_ms: null,
            cut_fields: [
              { path: 'warehouses.0.stockValuation', outlived_ms: 301.2 },
              { path: 'warehouses.1.stockValuation', outlived_ms: 298.7 },
              { path: 'warehouses.2.stockValuation', outlived_ms: 305.9 },
            ],
            timeline: timeline(seconds, 83, { poolSize, pool: (t) => ramp(t, 0, 0.5, 10),
                                              goodput: (t) => ramp(t, 0.3, 0.3, 118), inFlight: (t) => ramp(t, 0, 0.5, 36) }),
          },
          cutoff: {
            requests: 2400, ok: 2392, goodput_rps: 119.6, p50_ms: 301.1, p99_ms: 303.9,
            errors: { deadline_exceeded: 8 }, pool_size: poolSize, peak_pool_in_use: 5,
            zombie_seconds: 0.31, zombie_statements: 12, overshoot_p50_ms: 0.5, overshoot_p99_ms: 2.2,
            cut_fields: [
              { path: 'warehouses.0.stockValuation', outlived_ms: 0.6 },
              { path: 'warehouses.1.stockValuation', outlived_ms: 0.4 },
              { path: 'warehouses.2.stockValuation', outlived_ms: null },
            ],
            timeline: timeline(seconds, 97, { poolSize, pool: (t) => ramp(t, 0, 0.5, 4),
                                              goodput: (t) => ramp(t, 0.3, 0.3, 120), inFlight: (t) => ramp(t, 0, 0.5, 36) }),
          },
        },
        notes: ['Partial responses: the fields that made it are returned with a DEADLINE_EXCEEDED error for each cut one.'],
      },
    ],
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.stdout.write(`${JSON.stringify(sampleResults(), null, 2)}\n`);
}
