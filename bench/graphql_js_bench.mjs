// The warehouse benchmark on the JavaScript executors, for side-by-side comparison with
// graphql_bench: the same schema, data and operation (8,003 fields), executed and serialized.
//   graphql-js 16   execute() with a field resolver, serialized with JSON.stringify
//   graphql-jit     the operation compiled once (compileQuery), run with resolvers on the
//                   schema where a field needs one (the rest read the property inline), and
//                   serialized with its own compiled stringify
// Timed by the wall clock after a warm-up. Prints one JSON line per engine and mode with fields
// per second.
//
//   node bench/graphql_js_bench.mjs [seconds-per-mode] [engines]   # engines: graphql-js,graphql-jit
import { buildSchema, execute, parse } from 'graphql';
import { compileQuery, isCompiledQuery } from 'graphql-jit';
import { WAREHOUSE_FIELDS, WAREHOUSE_QUERY, WAREHOUSE_SDL, warehouse } from './warehouse.mjs';

const seconds = Number(process.argv[2] ?? 3);
const engines = (process.argv[3] ?? 'graphql-js,graphql-jit').split(',');
const document = parse(WAREHOUSE_QUERY);
const FIELDS = WAREHOUSE_FIELDS;

// graphql-js: one field resolver for every field, as graphql_bench's resolvers are.
function graphqlJs(async) {
  const schema = buildSchema(WAREHOUSE_SDL);
  const fieldResolver = (source, args, context, info) => {
    const key = info.fieldName;
    if (key === 'warehouse') return warehouse;
    if (key === 'bins') return source.bins.slice(0, args.first);
    const v = source[key];
    if (async && (key === 'stock' || key === 'valuation')) return Promise.resolve(v);
    return v;
  };
  return async () => {
    const result = await execute({ schema, document, fieldResolver });
    if (result.errors) throw new Error(result.errors[0].message);
    return JSON.stringify(result).length;
  };
}

// graphql-jit: the way its users run it, resolvers only where a field is not a plain property.
function graphqlJit(async) {
  const schema = buildSchema(WAREHOUSE_SDL);
  schema.getQueryType().getFields().warehouse.resolve = () => warehouse;
  schema.getType('Warehouse').getFields().bins.resolve = (source, args) => source.bins.slice(0, args.first);
  if (async) {
    schema.getType('Bin').getFields().stock.resolve = (source) => Promise.resolve(source.stock);
    schema.getType('Stock').getFields().valuation.resolve = (source) => Promise.resolve(source.valuation);
  }
  const compiled = compileQuery(schema, document);
  if (!isCompiledQuery(compiled)) throw new Error(`graphql-jit: ${JSON.stringify(compiled)}`);
  return async () => {
    const result = await compiled.query(undefined, {}, {});
    if (result.errors) throw new Error(result.errors[0].message);
    return compiled.stringify(result).length;
  };
}

async function run(name, once) {
  const expected = await once();
  for (let i = 0; i < 50; ++i) {  // warm up the JIT
    if ((await once()) !== expected) throw new Error(`${name}: the response changed size`);
  }
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
  console.log(JSON.stringify({ name, operations: n, ms_per_op: (secs * 1000) / n, fields_per_second: (n * FIELDS) / secs,
    response_bytes: expected }));
}

for (const engine of engines) {
  const make = { 'graphql-js': graphqlJs, 'graphql-jit': graphqlJit }[engine];
  if (!make) throw new Error(`unknown engine ${engine} (graphql-js, graphql-jit)`);
  await run(`${engine} sync`, make(false));
  await run(`${engine} async`, make(true));
}
