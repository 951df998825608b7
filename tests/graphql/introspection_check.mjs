// Checks cutoff's introspection against graphql-js 16: runs the official introspection query
// (getIntrospectionQuery, with descriptions, specifiedByURL, repeatable directives and
// deprecated input values) through `cutoff graphql exec`, rebuilds a schema from the result
// with graphql-js's buildClientSchema (what GraphiQL does), and compares its printSchema with
// graphql-js's own printSchema of the same SDL.
//
//   node tests/graphql/introspection_check.mjs path/to/cutoff
import { buildClientSchema, buildSchema, getIntrospectionQuery, printSchema } from 'graphql';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const cutoff = process.argv[2] ?? 'build/bin/cutoff';
const sdl = `
"""The warehouse API."""
schema { query: Query mutation: Mutation }
type Query {
  "A warehouse by id."
  warehouse(id: ID!): Warehouse
  node(id: ID!): Node
  search(text: String = "x", filter: Filter, first: Int = 10): [SearchResult!]!
  now: DateTime
}
type Mutation { reserve(sku: String!, qty: Int! = 1, mode: Mode = FAST): Reservation }
interface Node { id: ID! }
interface Named implements Node { id: ID! name: String }
type Warehouse implements Node & Named {
  id: ID!
  name: String
  bins(first: Int!): [Bin!]!
  legacy: String @deprecated(reason: "use name")
  valuation: Float @budget(ms: 120)
}
type Bin implements Node { id: ID! sku: String! qty: Int! }
type Reservation { id: ID! bins: [[Bin]] }
union SearchResult = Warehouse | Bin
enum Mode { FAST "Slow but careful." SAFE OLD @deprecated }
input Filter { sku: String, min: Int = 0, modes: [Mode!] = [FAST] }
scalar DateTime @specifiedBy(url: "https://tools.ietf.org/html/rfc3339")
directive @cached(ttl: Int = 60) repeatable on FIELD | QUERY
`;

const dir = mkdtempSync(join(tmpdir(), 'cutoff-introspection-'));
try {
  writeFileSync(join(dir, 'schema.graphql'), sdl);
  writeFileSync(join(dir, 'fixture.json'), '{}');
  writeFileSync(join(dir, 'query.graphql'),
                getIntrospectionQuery({ descriptions: true, specifiedByUrl: true, directiveIsRepeatable: true,
                                        schemaDescription: true, inputValueDeprecation: true }));
  const out = execFileSync(cutoff, ['graphql', 'exec', '--schema', join(dir, 'schema.graphql'), '--fixture',
                                    join(dir, 'fixture.json'), '--query', '@' + join(dir, 'query.graphql')]);
  const result = JSON.parse(out.toString());
  if (result.errors) throw new Error('introspection failed: ' + JSON.stringify(result.errors));
  const fromCutoff = printSchema(buildClientSchema(result.data));
  // cutoff declares @budget in every schema (before the schema's own directives); graphql-js
  // needs it declared. Definitions are compared in any order.
  const budget = '"Caps the time this field may take: it runs under min(the operation\'s remaining budget, ms). ' +
                 'When the cap fires, only this field is cut."\ndirective @budget(ms: Int!) on FIELD_DEFINITION\n';
  // A field capped by @budget says so in its description (cutoff adds the sentence).
  const described = sdl.replace(/^(\s+)(\w+[^\n]*@budget\(ms: (\d+)\))/gm,
                                (_, indent, field, ms) => `${indent}"Time budget: this field is cut after ${ms} ms."\n${indent}${field}`);
  const expected = printSchema(buildSchema(described + '\n' + budget));
  const normalise = s => s.split(/\n\n(?=(?:"""|directive |type |interface |union |enum |input |scalar |schema ))/)
                          .map(b => b.trim()).sort().join('\n\n');
  if (normalise(fromCutoff) !== normalise(expected)) {
    console.error('--- cutoff (via buildClientSchema) ---\n' + fromCutoff + '\n--- graphql-js ---\n' + expected);
    process.exit(1);
  }
  console.log('introspection: buildClientSchema(cutoff) prints the same schema as graphql-js');
} finally {
  rmSync(dir, { recursive: true, force: true });
}
