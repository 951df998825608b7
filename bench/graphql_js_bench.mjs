// The warehouse benchmark on graphql-js 16, for side-by-side comparison with graphql_bench:
// the same schema, data and operation (8,003 fields), executed and serialized with
// JSON.stringify. Prints one JSON line per mode with fields per second.
//
//   node bench/graphql_js_bench.mjs [seconds-per-mode]
import { buildSchema, execute, parse } from 'graphql';
import { WAREHOUSE_FIELDS, WAREHOUSE_QUERY, WAREHOUSE_SDL, warehouse } from './warehouse.mjs';

const seconds = Number(process.argv[2] ?? 3);
const schema = buildSchema(WAREHOUSE_SDL);
const document = parse(WAREHOUSE_QUERY);
const FIELDS = WAREHOUSE_FIELDS;

function resolvers(async) {
  const fieldResolver = (source, args, context, info) => {
    const key = info.fieldName;
    if (key === 'warehouse') return warehouse;
    if (key === 'bins') return source.bins.slice(0, args.first);
    const v = source[key];
    if (async && (key === 'stock' || key === 'valuation')) return Promise.resolve(v);
    return v;
  };
  return fieldResolver;
}

async function run(name, async) {
  const fieldResolver = resolvers(async);
  const once = async () => {
    const result = await execute({ schema, document, fieldResolver });
    if (result.errors) throw new Error(result.errors[0].message);
    return JSON.stringify(result).length;
  };
  for (let i = 0; i < 20; ++i) await once();  // warm up the JIT
  let n = 0;
  const start = process.hrtime.bigint();
  const end = start + BigInt(Math.round(seconds * 1e9));
  let now = start;
  while (now < end) {
    await once();
    ++n;
    now = process.hrtime.bigint();
  }
  const secs = Number(now - start) / 1e9;
  console.log(JSON.stringify({ name, operations: n, ms_per_op: (secs * 1000) / n, fields_per_second: (n * FIELDS) / secs }));
}

await run('graphql-js sync', false);
await run('graphql-js async', true);
