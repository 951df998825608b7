#!/usr/bin/env node
// (Re)generates tests/graphql/diff/cases/ deterministically.
//
//   node tests/graphql/diff/gen_cases.mjs [--out DIR]      # default: tests/graphql/diff/cases
//
// Every case is a directory cases/<name>/ holding schema.graphql, fixture.json,
// query.graphql and optionally variables.json and options.json
// ({"operation": "Name", "deadline_ms": N}). The whole cases/ directory is
// deleted and rewritten, so hand-written cases belong in this file too.
//
// Rules that keep cases unambiguous between implementations (see README.md):
//  * at most ONE failing field (error, null in a non-null position, deadline)
//    inside any subtree that gets nulled by propagation, because engines may
//    legitimately differ in whether they still report errors of fields whose
//    results were discarded;
//  * deadline margins: values meant to finish are due >= 150 ms before the
//    deadline, values meant to be cut are due >= 1 s after it;
//  * no graphql-js-specific leniencies (e.g. [[Int]] from [1, 2], String output
//    from numbers, Int output from numeric strings).

import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, print } from 'graphql';

const here = dirname(fileURLToPath(import.meta.url));
// --out DIR writes the cases there instead (the test suite generates them into the build tree).
const outFlag = process.argv.indexOf('--out');
const casesDir = outFlag > 0 && process.argv[outFlag + 1] ? process.argv[outFlag + 1] : join(here, 'cases');

const cases = new Map();

function add(name, spec) {
  if (!/^[a-z0-9][a-z0-9-]*$/.test(name)) throw new Error(`bad case name ${name}`);
  if (cases.has(name)) throw new Error(`duplicate case ${name}`);
  for (const key of Object.keys(spec)) {
    if (!['schema', 'fixture', 'query', 'variables', 'operation', 'deadline_ms'].includes(key)) {
      throw new Error(`${name}: unknown key ${key}`);
    }
  }
  if (typeof spec.schema !== 'string' || typeof spec.query !== 'string' ||
      spec.fixture === null || typeof spec.fixture !== 'object') {
    throw new Error(`${name}: schema, fixture and query are required`);
  }
  cases.set(name, spec);
}

// Pretty-prints a programmatically built query (only used where the query has
// no string literals whose exact spelling matters).
const pretty = (query) => `${print(parse(query))}\n`;

// Marker helpers.
const err = (message, code) => (code === undefined ? { $error: message } : { $error: message, $code: code });
const delay = (ms, value) => ({ $delay_ms: ms, $value: value });
const hang = () => ({ $hang: true });
const arg = (name) => ({ $arg: name });

// Deadline constants (see margins above).
const CUT_DEADLINE = 150;   // deadline for cases where something is cut
const MIXED_DEADLINE = 250; // deadline for cases mixing fast and cut values
const FAST_DEADLINE = 300;  // deadline for cases where everything finishes
const SLOW = 2000;          // delay of values that must be cut

// ===========================================================================
// 1. Null propagation along a chain of objects.
//
// Field f_i sits at depth i (f1 is a root field). f_d fails (null / error /
// error with code / absent object). f_k is the nearest nullable ancestor
// (k = 0: none, so data becomes null). Fields above f_k alternate between
// nullable and non-null. Every level has value-holding siblings before and
// after the chain field.

function genNullChain() {
  const kinds = ['null', 'error', 'error-code', 'absent-object'];
  for (let d = 1; d <= 5; d++) {
    for (let k = 0; k < d; k++) {
      for (const kind of kinds) {
        const nonNull = (i) => (i === d || i > k ? true : i === k ? false : (i + d) % 2 === 0);
        const typeOf = (i) => {
          const base = i === d ? (kind === 'absent-object' ? 'Leaf' : 'String') : `T${i}`;
          return base + (nonNull(i) ? '!' : '');
        };
        let schema = `type Query {\n  s0: String\n  f1: ${typeOf(1)}\n  t0: Int\n}\n`;
        for (let i = 1; i < d; i++) {
          schema += `\ntype T${i} {\n  s${i}: String\n  f${i + 1}: ${typeOf(i + 1)}\n  t${i}: Int\n}\n`;
        }
        if (kind === 'absent-object') schema += '\ntype Leaf {\n  v: Int\n}\n';

        let leaf;
        if (kind === 'null') leaf = null;
        else if (kind === 'error') leaf = err(`f${d} failed`);
        else if (kind === 'error-code') leaf = err(`f${d} failed`, 'LEAF_FAILED');
        let obj = { [`s${d - 1}`]: `s${d - 1}` };
        if (kind !== 'absent-object') obj[`f${d}`] = leaf;
        obj[`t${d - 1}`] = d - 1;
        for (let i = d - 2; i >= 0; i--) {
          obj = { [`s${i}`]: `s${i}`, [`f${i + 1}`]: obj, [`t${i}`]: i };
        }

        let sel = kind === 'absent-object' ? `f${d} { v }` : `f${d}`;
        for (let i = d - 1; i >= 1; i--) sel = `f${i} { s${i} ${sel} t${i} }`;
        const query = pretty(`{ s0 ${sel} t0 }`);
        add(`nullprop-chain-d${d}-k${k}-${kind}`, { schema, fixture: obj, query });
      }
    }
  }
}

// ===========================================================================
// 2. Null propagation through lists.

function listSchema(listType, oType = 'O') {
  return `type Query {\n  ok: String\n  o: ${oType}\n  tail: Int\n}\n\n` +
    `type O {\n  before: Int\n  l: ${listType}\n  after: String\n}\n\n` +
    `type Item {\n  id: Int!\n  name: String\n}\n`;
}

function listFixture(l) {
  return { ok: 'ok', o: { before: 1, l, after: 'after' }, tail: 99 };
}

function genLists() {
  const flat = { 'l': '[Int]', 'lnn': '[Int!]', 'nnl': '[Int]!', 'nnlnn': '[Int!]!' };
  const flatValues = {
    'full': [1, 2, 3, 4, 5],
    'null-first': [null, 2, 3, 4, 5],
    'null-mid': [1, 2, null, 4, 5],
    'error-last': [1, 2, 3, 4, err('item 4 failed')],
    'error-first-code': [err('item 0 failed', 'ITEM'), 2, 3, 4, 5],
    'list-null': null,
  };
  const q = '{\n  ok\n  o {\n    before\n    l\n    after\n  }\n  tail\n}\n';
  for (const [tn, t] of Object.entries(flat)) {
    for (const [vn, v] of Object.entries(flatValues)) {
      add(`list-${tn}-${vn}`, { schema: listSchema(t), fixture: listFixture(v), query: q });
    }
  }
  add('list-lnn-empty', { schema: listSchema('[Int!]!'), fixture: listFixture([]), query: q });
  add('list-absent-member', { schema: listSchema('[Int]'), fixture: { ok: 'ok', o: { before: 1 } }, query: q });
  // Non-null parent object: propagation reaches data.
  add('list-nnlnn-null-mid-parent-nonnull', {
    schema: listSchema('[Int!]!', 'O!'), fixture: listFixture([1, null, 3]), query: q,
  });
  add('list-lnn-error-parent-nonnull', {
    schema: listSchema('[Int!]', 'O!'), fixture: listFixture([1, err('bad'), 3]), query: q,
  });
  add('list-nnl-null-parent-nonnull', {
    schema: listSchema('[Int]!', 'O!'), fixture: listFixture(null), query: q,
  });

  const nested = {
    'll': '[[Int]]', 'llnn': '[[Int!]]', 'lnnl': '[[Int]!]', 'lnnlnn': '[[Int!]!]', 'nnlnnlnn': '[[Int!]!]!',
  };
  const nestedValues = {
    'full': [[1, 2], [3], [], [4, 5, 6]],
    'inner-null': [[1, 2], [3, null], [4]],
    'inner-error': [[err('inner failed', 'INNER')], [3], [4]],
    'innerlist-null': [[1], null, [4]],
  };
  for (const [tn, t] of Object.entries(nested)) {
    for (const [vn, v] of Object.entries(nestedValues)) {
      add(`list-nested-${tn}-${vn}`, { schema: listSchema(t), fixture: listFixture(v), query: q });
    }
  }
  add('list-nested3-error-deep', {
    schema: listSchema('[[[Int!]]!]'),
    fixture: listFixture([[[1], [2, 3]], [[4], [5, err('deep', 'DEEP'), 6], [7]], [[8]]]),
    query: q,
  });
  add('list-nested3-full', {
    schema: listSchema('[[[Int!]]!]'),
    fixture: listFixture([[[1], [2, 3]], [], [[], [4]]]),
    query: q,
  });

  const objq = '{\n  ok\n  o {\n    before\n    l {\n      id\n      name\n    }\n    after\n  }\n  tail\n}\n';
  const items = () => [
    { id: 1, name: 'one' }, { id: 2, name: 'two' }, { id: 3, name: 'three' }, { id: 4, name: 'four' },
  ];
  const objTypes = { 'l': '[Item]', 'lnn': '[Item!]', 'nnl': '[Item]!', 'nnlnn': '[Item!]!' };
  const objValues = {
    'id-null': () => { const v = items(); v[1].id = null; return v; },
    'id-error': () => { const v = items(); v[2].id = err('no id', 'NO_ID'); return v; },
    'item-null': () => { const v = items(); v[0] = null; return v; },
    'item-error': () => { const v = items(); v[3] = err('item failed'); return v; },
  };
  for (const [tn, t] of Object.entries(objTypes)) {
    for (const [vn, v] of Object.entries(objValues)) {
      add(`list-obj-${tn}-${vn}`, { schema: listSchema(t), fixture: listFixture(v()), query: objq });
    }
  }
  add('list-obj-name-errors-nullable', {
    schema: listSchema('[Item!]!'),
    fixture: listFixture([
      { id: 1, name: err('n1') }, { id: 2, name: 'two' }, { id: 3, name: err('n3', 'N3') },
    ]),
    query: objq,
  });
}

// ===========================================================================
// Shared "library" schema for fragments and abstract types.

const LIB_SCHEMA = `interface Node {
  id: ID!
}

interface Named {
  name: String
}

enum Role {
  ADMIN
  MEMBER
  GUEST
}

type User implements Node & Named {
  id: ID!
  name: String
  email: String
  role: Role
  friends: [User!]
  posts: [Post]
  best: Post
}

type Post implements Node {
  id: ID!
  title: String!
  author: User
  tags: [String!]!
  likes: Int
}

type Comment implements Node {
  id: ID!
  body: String
  post: Post
}

type Group implements Named {
  name: String
  members: [User]
}

union SearchResult = User | Post | Comment | Group

type Query {
  me: User
  node(id: ID!): Node
  nodes: [Node]
  named: [Named!]
  search(term: String): [SearchResult!]!
  first: SearchResult
  posts(first: Int = 10): [Post!]
  user(id: ID): User
}
`;

function libFixture() {
  const bob = { __typename: 'User', id: 'u2', name: 'Bob', email: 'bob@example.com', role: 'MEMBER' };
  const carol = { __typename: 'User', id: 'u3', name: 'Carol', email: null, role: 'GUEST' };
  const post1 = {
    __typename: 'Post', id: 'p1', title: 'Hello', author: bob, tags: ['intro', 'misc'], likes: 3,
  };
  const post2 = { __typename: 'Post', id: 'p2', title: 'Second', author: null, tags: [], likes: 0 };
  const alice = {
    __typename: 'User', id: 'u1', name: 'Alice', email: 'alice@example.com', role: 'ADMIN',
    friends: [bob, carol], posts: [post1, post2], best: post1,
  };
  const comment = { __typename: 'Comment', id: 'c1', body: 'Nice', post: post2 };
  const group = { __typename: 'Group', name: 'Admins', members: [alice, bob] };
  return {
    me: alice,
    node: post1,
    nodes: [alice, post1, comment, bob, post2],
    named: [alice, group, carol],
    search: [bob, post2, comment, group, alice],
    first: comment,
    posts: [post1, post2],
    user: carol,
  };
}

function lib(name, query, extra = {}) {
  add(name, { schema: LIB_SCHEMA, fixture: extra.fixture ?? libFixture(), query, ...withoutFixture(extra) });
}

function withoutFixture(extra) {
  const { fixture, ...rest } = extra;
  return rest;
}

// ===========================================================================
// 3. Fragments, aliases, merging, directives.

function genFragments() {
  lib('frag-named-on-object', `{
  me {
    ...UserBits
  }
}

fragment UserBits on User {
  id
  name
  role
}
`);
  lib('frag-inline-no-type-condition', `{
  me {
    ... {
      name
      email
    }
    id
  }
}
`);
  lib('frag-nested-named', `{
  me {
    ...A
  }
}

fragment A on User {
  name
  ...B
  friends {
    ...C
  }
}

fragment B on User {
  email
  best {
    ...D
  }
}

fragment C on User {
  id
  role
}

fragment D on Post {
  title
  tags
}
`);
  lib('frag-on-interface-list', `{
  nodes {
    id
    ...NodeBits
  }
}

fragment NodeBits on Node {
  __typename
}
`);
  lib('frag-union-inline-per-type', `{
  search(term: "x") {
    ... on User {
      name
    }
    ... on Post {
      title
      likes
    }
    ... on Comment {
      body
    }
    ... on Group {
      name
    }
  }
}
`);
  lib('frag-union-named-per-type-typename', `{
  search {
    __typename
    ...U
    ...P
    ...C
  }
}

fragment U on User {
  id
  email
}

fragment P on Post {
  id
  author {
    name
  }
}

fragment C on Comment {
  id
  post {
    title
  }
}
`);
  lib('frag-typename-everywhere', `{
  __typename
  me {
    __typename
    best {
      __typename
      author {
        __typename
      }
    }
  }
  first {
    __typename
  }
}
`);
  lib('frag-aliases', `{
  boss: me {
    fullName: name
    mail: email
    buddies: friends {
      who: name
    }
  }
  someone: user(id: "u3") {
    name
  }
  also: user(id: "zzz") {
    id
  }
}
`);
  lib('frag-duplicate-fields-merged', `{
  me {
    name
  }
  posts {
    id
  }
  me {
    email
    name
    friends {
      id
    }
  }
  me {
    friends {
      name
    }
  }
}
`);
  lib('frag-merge-order-with-fragments', `{
  me {
    ...F
    id
    name
    ... on User {
      role
      id
    }
  }
}

fragment F on User {
  email
  name
}
`);
  lib('frag-merge-same-alias', `{
  a: me {
    name
  }
  b: me {
    id
  }
  a: me {
    email
  }
}
`);
  lib('frag-skip-include-literals', `{
  me {
    id @skip(if: true)
    name @skip(if: false)
    email @include(if: false)
    role @include(if: true)
    friends @skip(if: true) {
      id
    }
  }
}
`);
  lib('frag-skip-include-variables', `query Q($yes: Boolean!, $no: Boolean!) {
  me {
    id @include(if: $yes)
    name @include(if: $no)
    email @skip(if: $yes)
    role @skip(if: $no)
  }
}
`, { variables: { yes: true, no: false } });
  lib('frag-skip-include-variable-default', `query Q($show: Boolean = true) {
  me {
    name @include(if: $show)
    email @skip(if: $show)
  }
}
`);
  lib('frag-directives-on-fragments', `query Q($on: Boolean!) {
  me {
    ...Names @include(if: $on)
    ... on User @skip(if: $on) {
      email
    }
    ... @include(if: $on) {
      role
    }
    id
  }
}

fragment Names on User {
  name
}
`, { variables: { on: true } });
  lib('frag-skip-and-include-combined', `{
  me {
    a: name @skip(if: false) @include(if: true)
    b: name @skip(if: true) @include(if: true)
    c: name @skip(if: false) @include(if: false)
    d: name @skip(if: true) @include(if: false)
  }
}
`);
  lib('frag-skip-one-of-merged', `{
  me {
    name @skip(if: true)
    name
    email @include(if: false)
  }
}
`);
  lib('frag-union-no-matching-fragment', `{
  first {
    ... on User {
      name
    }
  }
  search {
    ... on Group {
      name
    }
  }
}
`);
  lib('frag-interface-inside-union', `{
  search {
    ... on Node {
      id
    }
    ... on Named {
      name
    }
  }
}
`);
  lib('frag-object-spread-in-interface-field', `{
  node(id: "p1") {
    id
    ... on User {
      name
    }
    ... on Post {
      title
    }
  }
}
`);
  lib('frag-nested-inline-in-named', `{
  named {
    name
    ... on User {
      friends {
        ... on Named {
          name
        }
      }
    }
    ... on Group {
      members {
        ...Who
      }
    }
  }
}

fragment Who on User {
  id
  ... on Node {
    __typename
  }
}
`);
}

// ===========================================================================
// 4. Abstract types.

function genAbstract() {
  lib('abstract-interface-list-fields-only', `{
  nodes {
    id
  }
}
`);
  lib('abstract-union-typename-only', `{
  search {
    __typename
  }
}
`);
  lib('abstract-interface-missing-typename', `{
  nodes {
    id
  }
}
`, {
    fixture: { nodes: [{ __typename: 'User', id: 'u1' }, { id: 'x' }, { __typename: 'Post', id: 'p1' }] },
  });
  lib('abstract-union-impossible-typename', `{
  first {
    __typename
  }
  me {
    name
  }
}
`, { fixture: { first: { __typename: 'Role' }, me: { name: 'Alice' } } });
  lib('abstract-interface-not-implementing-type', `{
  node(id: "g") {
    id
  }
  named {
    name
  }
}
`, { fixture: { node: { __typename: 'Group', name: 'G' }, named: [{ __typename: 'Group', name: 'G' }] } });
  lib('abstract-unknown-typename', `{
  first {
    __typename
  }
  nodes {
    __typename
  }
}
`, { fixture: { first: { __typename: 'Nope' }, nodes: [{ __typename: 'Post', id: 'p' }] } });
  lib('abstract-nonnull-list-missing-typename-bubbles', `{
  me {
    name
  }
  search {
    __typename
  }
}
`, { fixture: { me: { name: 'Alice' }, search: [{ __typename: 'User', id: '1' }, { id: '2' }] } });
  lib('abstract-errors-inside-fragments', `{
  search {
    ... on User {
      name
      email
    }
    ... on Post {
      title
      likes
    }
  }
}
`, {
    fixture: {
      search: [
        { __typename: 'User', name: 'A', email: err('hidden', 'FORBIDDEN') },
        { __typename: 'Post', title: 'T', likes: err('likes down') },
        { __typename: 'User', name: 'B', email: 'b@x' },
      ],
    },
  });
  lib('abstract-nonnull-field-in-fragment-bubbles', `{
  nodes {
    id
    ... on Post {
      title
    }
  }
}
`, {
    fixture: {
      nodes: [
        { __typename: 'Post', id: 'p1', title: 'ok' },
        { __typename: 'Post', id: 'p2', title: null },
        { __typename: 'Comment', id: 'c1' },
      ],
    },
  });
  lib('abstract-typename-in-fragments', `{
  search {
    ... on User {
      __typename
      kind: __typename
    }
    ... on Post {
      id
    }
  }
}
`);

  const shapes = `interface Shape {
  name: String!
  area: Float
}

interface Polygon implements Shape {
  name: String!
  area: Float
  sides: Int!
}

type Circle implements Shape {
  name: String!
  area: Float
  radius: Float
}

type Square implements Shape & Polygon {
  name: String!
  area: Float
  sides: Int!
  side: Float
}

type Triangle implements Shape & Polygon {
  name: String!
  area: Float
  sides: Int!
  kind: TriangleKind
}

enum TriangleKind {
  EQUILATERAL
  ISOSCELES
  SCALENE
}

union Thing = Circle | Square | Triangle | Box

type Box {
  contents: [Thing]
  label: String
}

type Query {
  shapes: [Shape!]!
  polygons: [Polygon]
  things: [Thing]
  favorite: Shape
}
`;
  const circle = { __typename: 'Circle', name: 'c', area: 3.5, radius: 1.25 };
  const square = { __typename: 'Square', name: 's', area: 4, sides: 4, side: 2 };
  const tri = { __typename: 'Triangle', name: 't', area: 0.5, sides: 3, kind: 'SCALENE' };
  const shapesFixture = {
    shapes: [circle, square, tri, square],
    polygons: [tri, square, null],
    things: [
      circle,
      { __typename: 'Box', label: 'outer', contents: [square, { __typename: 'Box', label: 'inner', contents: [tri] }] },
      null,
      tri,
    ],
    favorite: tri,
  };
  add('abstract-interface-implements-interface', {
    schema: shapes, fixture: shapesFixture, query: `{
  shapes {
    name
    ... on Polygon {
      sides
    }
    ... on Circle {
      radius
    }
  }
  polygons {
    __typename
    sides
    ... on Triangle {
      kind
    }
  }
}
`,
  });
  add('abstract-recursive-union-box', {
    schema: shapes, fixture: shapesFixture, query: `{
  things {
    ...T
    ... on Box {
      label
      contents {
        ...T
        ... on Box {
          label
          contents {
            ...T
          }
        }
      }
    }
  }
}

fragment T on Thing {
  __typename
  ... on Shape {
    name
    area
  }
}
`,
  });
  add('abstract-interface-root-per-type-fields', {
    schema: shapes, fixture: shapesFixture, query: `{
  favorite {
    name
    ... on Square {
      side
    }
    ... on Triangle {
      kind
      sides
    }
  }
}
`,
  });
  add('abstract-nonnull-interface-field-null-bubbles', {
    schema: shapes,
    fixture: { shapes: [circle, { __typename: 'Square', name: null, sides: 4 }], favorite: circle },
    query: `{
  favorite {
    name
  }
  shapes {
    name
  }
}
`,
  });
  add('abstract-polygons-sides-error', {
    schema: shapes,
    fixture: { polygons: [square, { __typename: 'Triangle', name: 't', sides: err('no sides', 'SIDES') }] },
    query: `{
  polygons {
    name
    sides
  }
}
`,
  });
}

// ===========================================================================
// 5. Sibling errors and multiple errors.

const MULTI_SCHEMA = `type Query {
  a: String
  b: String
  c: Int
  obj: Obj
  objs: [Obj]
  nn: String!
}

type Obj {
  x: String
  y: Int
  z: String!
  child: Obj
}
`;

function genSiblings() {
  add('siblings-root-error-middle', {
    schema: MULTI_SCHEMA,
    fixture: { a: 'A', b: err('b failed'), c: 3 },
    query: '{\n  a\n  b\n  c\n}\n',
  });
  add('siblings-many-errors-various-depths', {
    schema: MULTI_SCHEMA,
    fixture: {
      a: err('a failed', 'A_CODE'),
      b: 'B',
      c: err('c failed'),
      obj: { x: err('x failed', 'X'), y: 1, z: 'z', child: { x: 'cx', y: err('deep', 'DEEP'), z: 'cz' } },
    },
    query: '{\n  a\n  b\n  c\n  obj {\n    x\n    y\n    z\n    child {\n      x\n      y\n      z\n    }\n  }\n}\n',
  });
  add('siblings-errors-in-list-items', {
    schema: MULTI_SCHEMA,
    fixture: {
      objs: [
        { x: 'x0', y: 0, z: 'z0' },
        { x: err('x1', 'E1'), y: 1, z: 'z1' },
        { x: 'x2', y: err('y2', 'E2'), z: 'z2' },
        { x: 'x3', y: 3, z: err('z3', 'E3') },
        { x: 'x4', y: 4, z: 'z4' },
      ],
    },
    query: '{\n  objs {\n    x\n    y\n    z\n  }\n}\n',
  });
  add('siblings-bubble-one-branch-other-intact', {
    schema: MULTI_SCHEMA,
    fixture: {
      a: 'A',
      obj: { x: 'x', child: { x: 'cx', z: null } },
      objs: [{ x: 'o0', z: 'z' }, { x: 'o1', z: 'z', child: { z: err('gone', 'GONE') } }],
    },
    query: '{\n  a\n  obj {\n    x\n    child {\n      x\n      z\n    }\n  }\n  objs {\n    x\n    child {\n      z\n    }\n  }\n}\n',
  });
  add('siblings-aliased-errors', {
    schema: MULTI_SCHEMA,
    fixture: { a: err('a failed', 'A'), b: 'B' },
    query: '{\n  first: a\n  b\n  second: a\n  third: b\n}\n',
  });
  add('siblings-async-errors', {
    schema: MULTI_SCHEMA,
    fixture: {
      a: delay(5, err('late a', 'LATE')),
      b: delay(1, 'B'),
      c: err('sync c'),
      obj: delay(3, { x: delay(2, err('late x')), y: 7, z: 'z' }),
    },
    query: '{\n  a\n  b\n  c\n  obj {\n    x\n    y\n    z\n  }\n}\n',
  });
  add('siblings-error-codes-variety', {
    schema: MULTI_SCHEMA,
    fixture: {
      a: err('one', 'UNAUTHENTICATED'),
      b: err('two', 'FORBIDDEN'),
      c: err('three', 'BAD_USER_INPUT'),
      obj: { x: err('four', ''), y: err('five', 'lower_case') },
    },
    query: '{\n  a\n  b\n  c\n  obj {\n    x\n    y\n  }\n}\n',
  });
  add('siblings-root-nonnull-error-data-null', {
    schema: MULTI_SCHEMA,
    fixture: { a: 'A', nn: err('fatal', 'FATAL'), b: 'B' },
    query: '{\n  a\n  nn\n  b\n}\n',
  });
  add('siblings-nonnull-ok-nullable-errors', {
    schema: MULTI_SCHEMA,
    fixture: { a: err('a'), nn: 'fine', b: err('b', 'B') },
    query: '{\n  a\n  nn\n  b\n}\n',
  });
  add('siblings-error-object-field-children-skipped', {
    schema: MULTI_SCHEMA,
    fixture: { obj: err('no obj', 'NO_OBJ'), a: 'A' },
    query: '{\n  obj {\n    x\n    z\n  }\n  a\n}\n',
  });
  add('siblings-list-item-errors-same-list', {
    schema: `type Query {\n  words: [String]\n  nums: [Int]\n}\n`,
    fixture: {
      words: ['a', err('w1'), 'c', err('w3', 'W'), err('w4')],
      nums: [err('n0', 'N'), 1, 2],
    },
    query: '{\n  words\n  nums\n}\n',
  });
}

// ===========================================================================
// 6. Variables and input coercion.

const ECHO_SCHEMA = `enum Color {
  RED
  GREEN
  BLUE
}

scalar JSON

input Point {
  x: Int!
  y: Int = 0
  label: String
}

input Filter {
  colors: [Color!]
  min: Float
  tags: [String]
  nested: Point
  flag: Boolean = false
}

type PointOut {
  x: Int
  y: Int
  label: String
}

type FilterOut {
  colors: [Color!]
  min: Float
  tags: [String]
  nested: PointOut
  flag: Boolean
}

type Query {
  int(v: Int): Int
  intNN(v: Int!): Int
  float(v: Float): Float
  string(v: String): String
  bool(v: Boolean): Boolean
  id(v: ID): ID
  color(v: Color): Color
  colors(v: [Color]): [Color]
  list(v: [Int]): [Int]
  nested(v: [[Int]]): [[Int]]
  strings(v: [String!]!): [String!]!
  withDefault(v: Int = 42): Int
  point(v: Point): PointOut
  pointDefault(v: Point = {x: 9}): PointOut
  points(v: [Point!]): [PointOut]
  filter(v: Filter): FilterOut
  json(v: JSON): JSON
  two(a: Int, b: String = "bee"): String
}

type Mutation {
  int(v: Int): Int
  string(v: String): String
}
`;

const ECHO_FIELDS = [
  'int', 'intNN', 'float', 'string', 'bool', 'id', 'color', 'colors', 'list', 'nested', 'strings',
  'withDefault', 'point', 'pointDefault', 'points', 'filter', 'json',
];

function echoFixture() {
  const f = {};
  for (const name of ECHO_FIELDS) f[name] = arg('v');
  f.two = arg('b');
  return f;
}

const P = '{\n    x\n    y\n    label\n  }';
const F = '{\n    colors\n    min\n    tags\n    nested {\n      x\n      y\n      label\n    }\n    flag\n  }';

function echo(name, query, variables) {
  const spec = { schema: ECHO_SCHEMA, fixture: echoFixture(), query };
  if (variables !== undefined) spec.variables = variables;
  // Request-error and validation cases share the echo schema but keep their
  // own category prefix.
  add(/^(validation|reqerr)-/.test(name) ? name : `vars-${name}`, spec);
}

function genVariables() {
  echo('int-literals', `{
  a: int(v: 0)
  b: int(v: -17)
  c: int(v: 2147483647)
  d: int(v: -2147483648)
  e: int
  f: int(v: null)
}
`);
  echo('int-variable', 'query ($v: Int) {\n  int(v: $v)\n}\n', { v: 123 });
  echo('int-nonnull-variable', 'query ($v: Int!) {\n  intNN(v: $v)\n  int(v: $v)\n}\n', { v: -5 });
  echo('float-literals', `{
  a: float(v: 3)
  b: float(v: 2.5)
  c: float(v: -0.125)
  d: float(v: 1e3)
  e: float(v: 6.02e23)
  f: float(v: 1.5e-7)
}
`);
  echo('float-variables', 'query ($a: Float, $b: Float, $c: Float) {\n  a: float(v: $a)\n  b: float(v: $b)\n  c: float(v: $c)\n}\n',
    { a: 7, b: 0.1, c: -123.456 });
  echo('string-literals', `{
  a: string(v: "plain")
  b: string(v: "esc \\" \\\\ \\n \\t \\u00e9 \\u20AC")
  c: string(v: "")
  d: string(v: """block
  string""")
}
`);
  echo('string-variable-unicode', 'query ($s: String) {\n  string(v: $s)\n}\n', { s: 'héllo 世界 \u{1F600} "q" \\ \n' });
  echo('bool-literals-and-variable', 'query ($b: Boolean) {\n  t: bool(v: true)\n  f: bool(v: false)\n  v: bool(v: $b)\n}\n', { b: false });
  echo('id-coercion', 'query ($n: ID, $s: ID) {\n  a: id(v: 12)\n  b: id(v: "abc")\n  c: id(v: $n)\n  d: id(v: $s)\n}\n', { n: 77, s: 'x-1' });
  echo('enum-literal-and-variable', 'query ($c: Color) {\n  a: color(v: RED)\n  b: color(v: $c)\n  c: color\n}\n', { c: 'BLUE' });
  echo('enum-list-single-value', 'query ($c: [Color]) {\n  a: colors(v: GREEN)\n  b: colors(v: [RED, null, BLUE])\n  c: colors(v: $c)\n}\n', { c: 'RED' });
  echo('list-from-single-literal', '{\n  a: list(v: 5)\n  b: list(v: [1, 2, 3])\n  c: list(v: [])\n  d: list(v: null)\n  e: list(v: [null, 4])\n}\n');
  echo('list-from-single-variable', 'query ($a: [Int], $b: [Int]) {\n  a: list(v: $a)\n  b: list(v: $b)\n}\n', { a: 5, b: [6, null, 7] });
  echo('nested-list-single-literal', '{\n  a: nested(v: 1)\n  b: nested(v: [[1, 2], [3]])\n  c: nested(v: [[1], null, []])\n}\n');
  echo('nested-list-variable', 'query ($v: [[Int]]) {\n  nested(v: $v)\n}\n', { v: [[1], [2, 3], null] });
  echo('strings-nonnull-list-single', 'query ($s: [String!]!) {\n  a: strings(v: "solo")\n  b: strings(v: $s)\n}\n', { s: 'var-solo' });
  echo('arg-default-used', '{\n  a: withDefault\n  b: withDefault(v: 1)\n  c: withDefault(v: null)\n}\n');
  echo('variable-default-used', 'query ($v: Int = 7) {\n  int(v: $v)\n}\n');
  echo('variable-default-overridden-null', 'query ($v: Int = 7) {\n  int(v: $v)\n}\n', { v: null });
  echo('variable-default-overridden-value', 'query ($v: Int = 7) {\n  int(v: $v)\n}\n', { v: 8 });
  echo('variable-absent-arg-default-applies', 'query ($v: Int) {\n  withDefault(v: $v)\n}\n');
  echo('variable-null-arg-default-not-applied', 'query ($v: Int) {\n  withDefault(v: $v)\n}\n', { v: null });
  echo('nullable-variable-absent', 'query ($v: Int, $s: String) {\n  int(v: $v)\n  string(v: $s)\n}\n', {});
  echo('input-object-literal-defaults', `{
  a: point(v: {x: 1}) ${P}
  b: point(v: {x: 2, y: 3, label: "p"}) ${P}
  c: point(v: {label: null, x: -1}) ${P}
}
`);
  echo('input-object-variable-defaults', `query ($p: Point) {
  point(v: $p) ${P}
}
`, { p: { x: 2 } });
  echo('input-object-arg-default', `{
  a: pointDefault ${P}
  b: pointDefault(v: {x: 1, y: 1}) ${P}
}
`);
  echo('input-object-variable-default-value', `query ($p: Point = {x: 4, label: "dflt"}) {
  point(v: $p) ${P}
}
`);
  echo('input-object-field-from-variables', `query ($x: Int!, $l: String) {
  point(v: {x: $x, label: $l}) ${P}
}
`, { x: 10, l: 'from-var' });
  echo('input-object-field-variable-absent-uses-default', `query ($y: Int) {
  point(v: {x: 1, y: $y}) ${P}
}
`);
  echo('input-object-nested-filter-literal', `{
  filter(v: {colors: RED, min: 1, tags: "solo", nested: {x: 5}}) ${F}
}
`);
  echo('input-object-nested-filter-variable', `query ($f: Filter) {
  filter(v: $f) ${F}
}
`, { f: { colors: ['GREEN', 'BLUE'], min: 2.5, tags: ['a', null], nested: { x: 1, y: 2 }, flag: true } });
  echo('input-object-filter-empty', `{
  filter(v: {}) ${F}
}
`);
  echo('input-list-of-objects', `{
  a: points(v: [{x: 1}, {x: 2, y: 5}]) ${P}
  b: points(v: {x: 3}) ${P}
}
`);
  echo('input-list-of-objects-variable', `query ($ps: [Point!]) {
  points(v: $ps) ${P}
}
`, { ps: [{ x: 1, label: 'a' }, { x: 2, y: null }] });
  echo('custom-scalar-literal', `{
  a: json(v: {a: [1, "x", true, null], b: {c: 2.5}})
  b: json(v: "str")
  c: json(v: 42)
  d: json(v: [1, [2]])
}
`);
  echo('custom-scalar-variable', 'query ($j: JSON) {\n  json(v: $j)\n}\n', { j: { deep: { list: [1, { x: null }], s: 'v' } } });
  echo('multiple-args-one-default', '{\n  a: two(a: 1)\n  b: two(b: "given")\n  c: two(b: null)\n}\n');
  echo('operation-name-selects-second', `query First {
  int(v: 1)
}

query Second {
  int(v: 2)
}
`);
  cases.get('vars-operation-name-selects-second').operation = 'Second';
  echo('operation-name-selects-mutation', `query Read {
  int(v: 1)
}

mutation Write($s: String) {
  string(v: $s)
  int(v: 3)
}
`, { s: 'written' });
  cases.get('vars-operation-name-selects-mutation').operation = 'Write';

  // Request errors: no data at all.
  echo('reqerr-missing-required-variable', 'query ($v: Int!) {\n  int(v: $v)\n}\n');
  echo('reqerr-null-for-nonnull-variable', 'query ($v: Int!) {\n  int(v: $v)\n}\n', { v: null });
  echo('reqerr-wrong-variable-type-string-for-int', 'query ($v: Int) {\n  int(v: $v)\n}\n', { v: 'abc' });
  echo('reqerr-int-variable-overflow', 'query ($v: Int) {\n  int(v: $v)\n}\n', { v: 2147483648 });
  echo('reqerr-int-variable-fraction', 'query ($v: Int) {\n  int(v: $v)\n}\n', { v: 1.5 });
  echo('reqerr-float-variable-string', 'query ($v: Float) {\n  float(v: $v)\n}\n', { v: '1.5' });
  echo('reqerr-bool-variable-string', 'query ($v: Boolean) {\n  bool(v: $v)\n}\n', { v: 'true' });
  echo('reqerr-enum-variable-unknown', 'query ($v: Color) {\n  color(v: $v)\n}\n', { v: 'PURPLE' });
  echo('reqerr-input-object-missing-required-field', `query ($p: Point) {
  point(v: $p) ${P}
}
`, { p: { y: 1 } });
  echo('reqerr-input-object-unknown-field', `query ($p: Point) {
  point(v: $p) ${P}
}
`, { p: { x: 1, zz: 2 } });
  echo('reqerr-list-item-null-nonnull', 'query ($s: [String!]!) {\n  strings(v: $s)\n}\n', { s: ['a', null] });
  echo('reqerr-multiple-operations-no-name', 'query A {\n  int(v: 1)\n}\n\nquery B {\n  int(v: 2)\n}\n');
  echo('reqerr-unknown-operation-name', 'query A {\n  int(v: 1)\n}\n');
  cases.get('reqerr-unknown-operation-name').operation = 'Missing';
}

// ===========================================================================
// 7. Mutations (serial root fields).

const MUT_SCHEMA = `type User {
  id: ID!
  name: String
}

type Query {
  version: String
}

type Mutation {
  createUser(name: String!): User
  setCount(n: Int!): Int
  fail: String
  failNN: String!
  ok: Boolean!
  slow: String
  slowUser: User
  after: String
  afterNN: String!
}
`;

function mutFixture(extra = {}) {
  return {
    version: '1.0',
    createUser: { id: 'new-1', name: 'created' },
    setCount: arg('n'),
    fail: err('mutation failed', 'MUT_FAIL'),
    failNN: err('fatal mutation'),
    ok: true,
    after: 'after',
    afterNN: 'afterNN',
    ...extra,
  };
}

function genMutations() {
  add('mutation-multiple-root-fields', {
    schema: MUT_SCHEMA, fixture: mutFixture(),
    query: 'mutation {\n  createUser(name: "Ann") {\n    id\n    name\n  }\n  setCount(n: 3)\n  ok\n}\n',
  });
  add('mutation-one-field-errors', {
    schema: MUT_SCHEMA, fixture: mutFixture(),
    query: 'mutation {\n  a: setCount(n: 1)\n  fail\n  b: setCount(n: 2)\n  ok\n}\n',
  });
  add('mutation-nonnull-field-errors-data-null', {
    schema: MUT_SCHEMA, fixture: mutFixture(),
    query: 'mutation {\n  a: setCount(n: 1)\n  failNN\n  b: setCount(n: 2)\n}\n',
  });
  add('mutation-serial-delays', {
    schema: MUT_SCHEMA,
    fixture: mutFixture({ setCount: delay(10, arg('n')), createUser: delay(5, { id: delay(5, 'd1'), name: 'dee' }) }),
    query: 'mutation {\n  a: setCount(n: 1)\n  createUser(name: "Dee") {\n    id\n    name\n  }\n  b: setCount(n: 2)\n}\n',
    deadline_ms: FAST_DEADLINE,
  });
  add('mutation-variables-and-fragments', {
    schema: MUT_SCHEMA, fixture: mutFixture(),
    variables: { n: 41, name: 'Var' },
    query: `mutation M($n: Int!, $name: String!) {
  __typename
  setCount(n: $n)
  createUser(name: $name) {
    ...U
  }
}

fragment U on User {
  __typename
  id
  name
}
`,
  });
  add('mutation-deadline-later-fields-start-after-deadline', {
    schema: MUT_SCHEMA, fixture: mutFixture({ slow: delay(SLOW, 'slow') }),
    query: 'mutation {\n  a: setCount(n: 1)\n  slow\n  after\n  b: setCount(n: 2)\n}\n',
    deadline_ms: CUT_DEADLINE,
  });
  add('mutation-deadline-later-object-field', {
    schema: MUT_SCHEMA, fixture: mutFixture({ slow: hang() }),
    query: 'mutation {\n  slow\n  createUser(name: "x") {\n    id\n  }\n}\n',
    deadline_ms: CUT_DEADLINE,
  });
  add('mutation-deadline-cut-object-field', {
    schema: MUT_SCHEMA, fixture: mutFixture({ slowUser: delay(SLOW, { id: '1' }) }),
    query: 'mutation {\n  ok\n  slowUser {\n    id\n  }\n}\n',
    deadline_ms: CUT_DEADLINE,
  });
  add('mutation-deadline-nonnull-started-after-deadline', {
    schema: `type Query {\n  v: String\n}\n\ntype Mutation {\n  first: String\n  second: String!\n}\n`,
    fixture: { first: delay(SLOW, 'x'), second: 'y' },
    query: 'mutation {\n  first\n  second\n}\n',
    deadline_ms: CUT_DEADLINE,
  });
  add('mutation-selected-by-name', {
    schema: MUT_SCHEMA, fixture: mutFixture(),
    query: 'query Q {\n  version\n}\n\nmutation M {\n  setCount(n: 5)\n}\n',
    operation: 'M',
  });
}

// ===========================================================================
// 8. Validation failures (no data; only "errors non-empty" is compared).

function genValidation() {
  const v = (name, query, extra = {}) => lib(`validation-${name}`, query, extra);
  v('unknown-field', '{\n  me {\n    nope\n  }\n}\n');
  v('unknown-root-field', '{\n  nothing\n}\n');
  v('unknown-argument', '{\n  user(idd: "1") {\n    name\n  }\n}\n');
  v('wrong-argument-type', '{\n  posts(first: "ten") {\n    id\n  }\n}\n');
  v('missing-required-argument', '{\n  node {\n    id\n  }\n}\n');
  v('fragment-cycle', '{\n  me {\n    ...A\n  }\n}\n\nfragment A on User {\n  name\n  ...B\n}\n\nfragment B on User {\n  id\n  ...A\n}\n');
  v('fragment-self-cycle', '{\n  me {\n    ...A\n  }\n}\n\nfragment A on User {\n  friends {\n    ...A\n  }\n}\n');
  v('unknown-fragment', '{\n  me {\n    ...Missing\n  }\n}\n');
  v('unused-fragment', '{\n  me {\n    id\n  }\n}\n\nfragment Unused on User {\n  name\n}\n');
  v('unused-variable', 'query ($x: Int) {\n  me {\n    id\n  }\n}\n');
  v('undefined-variable', 'query {\n  posts(first: $n) {\n    id\n  }\n}\n');
  v('variable-type-mismatch', 'query ($n: String) {\n  posts(first: $n) {\n    id\n  }\n}\n', { variables: { n: 'x' } });
  v('variable-non-input-type', 'query ($u: User) {\n  me {\n    id\n  }\n}\n');
  v('selection-on-leaf', '{\n  me {\n    name {\n      length\n    }\n  }\n}\n');
  v('missing-selection-on-object', '{\n  me\n}\n');
  v('field-conflict-alias', '{\n  me {\n    a: name\n    a: email\n  }\n}\n');
  v('field-conflict-arguments', '{\n  user(id: "1") {\n    id\n  }\n  user(id: "2") {\n    id\n  }\n}\n');
  v('duplicate-operation-names', 'query Q {\n  me {\n    id\n  }\n}\n\nquery Q {\n  me {\n    name\n  }\n}\n');
  v('anonymous-not-alone', '{\n  me {\n    id\n  }\n}\n\nquery Named {\n  me {\n    name\n  }\n}\n');
  v('impossible-fragment-spread', '{\n  me {\n    ... on Post {\n      title\n    }\n  }\n}\n');
  v('fragment-on-scalar', '{\n  me {\n    ...S\n  }\n}\n\nfragment S on String {\n  length\n}\n');
  v('fragment-unknown-type', '{\n  me {\n    ... on Ghost {\n      id\n    }\n  }\n}\n');
  v('unknown-directive', '{\n  me {\n    id @shout\n  }\n}\n');
  v('skip-missing-if', '{\n  me {\n    id @skip\n  }\n}\n');
  v('duplicate-argument', '{\n  user(id: "1", id: "2") {\n    id\n  }\n}\n');
  v('float-literal-for-int', `{\n  me {\n    id\n  }\n  nodes {\n    id\n  }\n  posts(first: 1.5) {\n    id\n  }\n}\n`);
  v('syntax-error', '{\n  me {\n    id\n');
  v('syntax-error-bad-token', '{\n  me(id: ) {\n    id\n  }\n}\n');
  v('union-direct-field', '{\n  first {\n    id\n  }\n}\n');
  v('interface-field-not-on-interface', '{\n  nodes {\n    title\n  }\n}\n');
  add('validation-subscription-multiple-root-fields', {
    schema: 'type Query {\n  a: Int\n}\n\ntype Subscription {\n  x: Int\n  y: Int\n}\n',
    fixture: { a: 1, x: 2, y: 3 },
    query: 'subscription {\n  x\n  y\n}\n',
  });
  echo('validation-input-object-missing-required-literal', `{
  point(v: {y: 1}) ${P}
}
`);
  echo('validation-enum-string-literal', '{\n  color(v: "RED")\n}\n');
  echo('validation-string-literal-for-int', '{\n  int(v: "1")\n}\n');
  echo('validation-int-literal-overflow', '{\n  int(v: 2147483648)\n}\n');
}

// ===========================================================================
// 9. Deadlines.

const DL_SCHEMA = `type Query {
  fast: String
  fast2: Int
  slow: String
  slowNN: String!
  hang: String
  hangNN: String!
  obj: Obj
  objNN: Obj!
  objs: [Obj]
  objsNN: [Obj!]
  ints: [Int]
  intsNN: [Int!]
  grid: [[Int!]]
  echo(v: String): String
  plain: String
}

type Obj {
  id: Int
  name: String
  nameNN: String!
  child: Obj
  childNN: Obj!
  tags: [String]
}
`;

function dl(name, fixture, query, deadline, extra = {}) {
  add(`deadline-${name}`, { schema: extra.schema ?? DL_SCHEMA, fixture, query, deadline_ms: deadline, ...withoutSchema(extra) });
}

function withoutSchema(extra) {
  const { schema, ...rest } = extra;
  return rest;
}

function genDeadlines() {
  dl('all-fast-finish', {
    fast: delay(0, 'f0'), fast2: delay(20, 2), plain: 'p',
    obj: delay(10, { id: delay(5, 1), name: 'n', nameNN: delay(5, 'nn') }),
  }, '{\n  fast\n  fast2\n  plain\n  obj {\n    id\n    name\n    nameNN\n  }\n}\n', FAST_DEADLINE);
  dl('no-delays-with-deadline', {
    fast: 'f', plain: 'p', obj: { id: 1, child: { id: 2 } },
  }, '{\n  fast\n  plain\n  obj {\n    id\n    child {\n      id\n    }\n  }\n}\n', FAST_DEADLINE);
  dl('slow-nullable-root', { fast: delay(5, 'f'), slow: delay(SLOW, 's'), plain: 'p' },
    '{\n  fast\n  slow\n  plain\n}\n', MIXED_DEADLINE);
  dl('slow-nullable-root-only', { slow: delay(SLOW, 's') }, '{\n  slow\n}\n', CUT_DEADLINE);
  dl('slow-nonnull-root-data-null', { slowNN: delay(SLOW, 's') },
    '{\n  slowNN\n}\n', CUT_DEADLINE);
  dl('slow-nonnull-in-nullable-obj', {
    fast: 'f', obj: { id: 1, nameNN: delay(SLOW, 'x'), name: 'n' },
  }, '{\n  fast\n  obj {\n    id\n    name\n    nameNN\n  }\n}\n', CUT_DEADLINE);
  for (let depth = 1; depth <= 4; depth++) {
    // obj.child.child... (depth levels) with fast delays on the way, slow leaf.
    let v = { id: depth, name: delay(SLOW, 'never') };
    for (let i = depth - 1; i >= 1; i--) v = { id: i, name: `n${i}`, child: delay(5, v) };
    let sel = 'id\n name';
    for (let i = 1; i < depth; i++) sel = `id\n name\n child {\n ${sel}\n }`;
    dl(`slow-leaf-depth-${depth}`, { fast: 'f', obj: delay(5, v) },
      pretty(`{ fast obj { ${sel} } }`), MIXED_DEADLINE);
  }
  for (let depth = 2; depth <= 4; depth++) {
    // childNN chain of non-null objects ending in a non-null slow leaf: the
    // whole chain up to the nullable root field `obj` becomes null.
    let v = { id: depth, nameNN: delay(SLOW, 'never') };
    for (let i = depth - 1; i >= 1; i--) v = { id: i, childNN: v };
    let sel = 'id\n nameNN';
    for (let i = 1; i < depth; i++) sel = `id\n childNN {\n ${sel}\n }`;
    dl(`slow-nonnull-chain-depth-${depth}`, { fast: delay(5, 'f'), obj: v, plain: 'p' },
      pretty(`{ fast obj { ${sel} } plain }`), MIXED_DEADLINE);
  }
  dl('slow-nonnull-chain-to-data-null', {
    objNN: { id: 1, childNN: { id: 2, nameNN: hang() } },
  }, '{\n  objNN {\n    id\n    childNN {\n      nameNN\n    }\n  }\n}\n', CUT_DEADLINE);
  dl('hang-nullable-root', { hang: hang(), fast: 'f' }, '{\n  hang\n  fast\n}\n', CUT_DEADLINE);
  dl('hang-nonnull-root-data-null', { hangNN: hang() }, '{\n  hangNN\n}\n', CUT_DEADLINE);
  dl('hang-nonnull-nested', { obj: { id: 1, childNN: { id: 2, nameNN: hang() } }, fast: 'f' },
    '{\n  obj {\n    id\n    childNN {\n      id\n      nameNN\n    }\n  }\n  fast\n}\n', CUT_DEADLINE);
  dl('hang-object-children-never-run', { obj: hang(), fast: 'f' },
    '{\n  obj {\n    id\n    name\n  }\n  fast\n}\n', CUT_DEADLINE);
  dl('list-items-all-fast', { ints: [delay(0, 1), delay(10, 2), 3, delay(5, 4)] },
    '{\n  ints\n}\n', FAST_DEADLINE);
  dl('list-item-slow-nullable', { ints: [1, delay(5, 2), delay(SLOW, 3), 4] },
    '{\n  ints\n}\n', MIXED_DEADLINE);
  dl('list-item-hang-nullable', { ints: [1, hang(), 3], fast: 'f' },
    '{\n  ints\n  fast\n}\n', CUT_DEADLINE);
  dl('list-items-several-slow-nullable', { ints: [delay(SLOW, 0), 1, hang(), delay(SLOW, 3)] },
    '{\n  ints\n}\n', CUT_DEADLINE);
  dl('list-item-slow-nonnull-list-null', { intsNN: [1, delay(SLOW, 2), 3], ints: [1, 2] },
    '{\n  intsNN\n  ints\n}\n', CUT_DEADLINE);
  dl('grid-inner-slow-nonnull', { grid: [[1, 2], [3, delay(SLOW, 4)], [delay(5, 5)]] },
    '{\n  grid\n}\n', MIXED_DEADLINE);
  dl('objs-one-field-slow', {
    objs: [{ id: 1, name: 'a' }, { id: 2, name: delay(SLOW, 'b') }, { id: 3, name: delay(5, 'c') }],
  }, '{\n  objs {\n    id\n    name\n  }\n}\n', MIXED_DEADLINE);
  dl('objs-nonnull-field-slow-item-null', {
    objs: [{ id: 1, nameNN: 'a' }, { id: 2, nameNN: delay(SLOW, 'b') }, { id: 3, nameNN: 'c' }],
  }, '{\n  objs {\n    id\n    nameNN\n  }\n}\n', CUT_DEADLINE);
  dl('objsnn-nonnull-field-slow-list-null', {
    objsNN: [{ id: 1, nameNN: 'a' }, { id: 2, nameNN: delay(SLOW, 'b') }], fast: 'f',
  }, '{\n  objsNN {\n    id\n    nameNN\n  }\n  fast\n}\n', CUT_DEADLINE);
  dl('objs-items-delayed-fast', {
    objs: [delay(5, { id: 1, name: delay(5, 'a') }), delay(0, { id: 2 }), { id: 3, tags: [delay(3, 'x'), 'y'] }],
  }, '{\n  objs {\n    id\n    name\n    tags\n  }\n}\n', FAST_DEADLINE);
  dl('objs-items-delayed-slow', {
    objs: [delay(SLOW, { id: 1 }), { id: 2 }, delay(5, { id: 3, tags: ['t', delay(SLOW, 'u')] })],
  }, '{\n  objs {\n    id\n    tags\n  }\n}\n', MIXED_DEADLINE);
  dl('delayed-error-before-deadline', {
    fast: delay(5, err('late failure', 'LATE')), slow: delay(SLOW, 's'), plain: 'p',
  }, '{\n  fast\n  slow\n  plain\n}\n', MIXED_DEADLINE);
  dl('delayed-marker-chain', {
    fast2: delay(5, delay(5, delay(5, 3))), fast: delay(2, arg('nothing')), echo: delay(3, arg('v')),
  }, '{\n  fast2\n  fast\n  echo(v: "echoed")\n}\n', FAST_DEADLINE);
  dl('delayed-chain-then-slow', { fast2: delay(5, delay(5, delay(SLOW, 3))), fast: 'f' },
    '{\n  fast2\n  fast\n}\n', MIXED_DEADLINE);
  dl('delayed-object-slow-child', {
    obj: delay(10, { id: 1, name: delay(SLOW, 'late'), child: { id: 2, name: 'kid' } }),
  }, '{\n  obj {\n    id\n    name\n    child {\n      id\n      name\n    }\n  }\n}\n', MIXED_DEADLINE);
  dl('delayed-list-of-delays', { ints: delay(5, [delay(5, 1), delay(SLOW, 2), 3]) },
    '{\n  ints\n}\n', MIXED_DEADLINE);
  dl('many-siblings-half-slow', {
    obj: {
      id: delay(1, 1), name: delay(SLOW, 'x'), tags: [delay(2, 'a'), delay(SLOW, 'b'), 'c'],
      child: delay(SLOW, { id: 9 }), nameNN: 'nn',
    },
    fast: delay(3, 'f'), slow: hang(), fast2: 2,
  }, '{\n  obj {\n    id\n    name\n    tags\n    child {\n      id\n    }\n    nameNN\n  }\n  fast\n  slow\n  fast2\n}\n', MIXED_DEADLINE);
  dl('aliased-slow-twice', { slow: delay(SLOW, 's'), fast: 'f' },
    '{\n  a: slow\n  fast\n  b: slow\n}\n', CUT_DEADLINE);
  dl('slow-in-fragment', { obj: { id: 1, name: delay(SLOW, 'x') }, fast: 'f' },
    '{\n  fast\n  obj {\n    ...O\n  }\n}\n\nfragment O on Obj {\n  id\n  name\n}\n', CUT_DEADLINE);
  dl('slow-with-sync-error-sibling', { fast: err('sync', 'SYNC'), slow: delay(SLOW, 's'), plain: 'p' },
    '{\n  fast\n  slow\n  plain\n}\n', CUT_DEADLINE);
  dl('slow-abstract-type', {
    nodes: [
      { __typename: 'User', id: 'u', name: delay(SLOW, 'late') },
      delay(5, { __typename: 'Post', id: 'p', title: 'T' }),
      delay(SLOW, { __typename: 'Comment', id: 'c' }),
    ],
    first: delay(SLOW, { __typename: 'User', name: 'x' }),
    me: delay(5, { name: 'Alice' }),
  }, `{
  nodes {
    __typename
    id
    ... on User {
      name
    }
    ... on Post {
      title
    }
  }
  first {
    __typename
  }
  me {
    name
  }
}
`, MIXED_DEADLINE, { schema: LIB_SCHEMA });
  dl('list-item-delayed-error', { ints: [1, delay(5, err('late item', 'LATE')), delay(10, 3)], fast: 'f' },
    '{\n  ints\n  fast\n}\n', FAST_DEADLINE);
  dl('objsnn-item-hang-list-null', {
    obj: { id: 1, childNN: { id: 2, tags: ['a'] } },
    objsNN: [{ id: 1 }, hang()],
    fast: delay(5, 'f'),
  }, '{\n  obj {\n    id\n  }\n  objsNN {\n    id\n  }\n  fast\n}\n', MIXED_DEADLINE);
  dl('zero-deadline-nullable-roots', { fast: 'f', plain: 'p', obj: { id: 1 } },
    '{\n  fast\n  plain\n  obj {\n    id\n  }\n}\n', 0);
  dl('zero-deadline-nonnull-root', { objNN: { id: 1 } },
    '{\n  objNN {\n    id\n  }\n}\n', 0);
  dl('variables-with-deadline', { echo: delay(5, arg('v')), slow: delay(SLOW, 's') },
    'query ($v: String) {\n  echo(v: $v)\n  slow\n}\n', MIXED_DEADLINE, { variables: { v: 'hi' } });
}

// ===========================================================================
// 10. Output: lists of objects, nesting, enums, scalars.

const OUT_SCHEMA = `enum Status {
  ACTIVE
  INACTIVE
  BANNED
}

scalar JSON

scalar DateTime

type Row {
  id: Int!
  label: String
  score: Float
  status: Status
  flags: [Boolean]
  meta: JSON
}

type Level {
  name: String
  next: Level
  rows: [Row]
}

type Query {
  rows: [Row!]!
  level: Level
  statuses: [Status]
  statusGrid: [[Status]]
  status: Status
  json: JSON
  jsons: [JSON]
  when: DateTime
  int: Int
  ints: [Int]
  float: Float
  floats: [Float]
  id: ID
  ids: [ID]
  string: String
  bool: Boolean
  empty: [Row]
  nothing: [Row]
}
`;

function out(name, fixture, query) {
  add(`output-${name}`, { schema: OUT_SCHEMA, fixture, query });
}

function genOutput() {
  const statuses = ['ACTIVE', 'INACTIVE', 'BANNED'];
  const rows = [];
  for (let i = 0; i < 20; i++) {
    rows.push({
      id: i,
      label: `row-${i}`,
      score: i * 1.5 - 3,
      status: statuses[i % 3],
      flags: [i % 2 === 0, null, i % 3 === 0],
      meta: i % 4 === 0 ? { i, even: true } : null,
    });
  }
  out('list-of-20-objects', { rows },
    '{\n  rows {\n    id\n    label\n    score\n    status\n    flags\n    meta\n  }\n}\n');
  out('list-of-objects-selection-subset', { rows },
    '{\n  rows {\n    status\n    id\n  }\n}\n');
  let level = { name: 'L5', rows: [rows[5]] };
  for (let i = 4; i >= 1; i--) level = { name: `L${i}`, next: level, rows: i % 2 ? [rows[i]] : [] };
  out('nested-levels', { level },
    '{\n  level {\n    name\n    next {\n      name\n      next {\n        name\n        rows {\n          id\n        }\n        next {\n          name\n          next {\n            name\n            rows {\n              label\n            }\n            next {\n              name\n            }\n          }\n        }\n      }\n    }\n  }\n}\n');
  out('enums', { status: 'BANNED', statuses: ['ACTIVE', null, 'INACTIVE'], statusGrid: [['ACTIVE'], [], null, ['BANNED', 'BANNED']] },
    '{\n  status\n  statuses\n  statusGrid\n}\n');
  out('enum-invalid-value-error', { status: 'PURPLE', statuses: ['ACTIVE', 'active', 'BANNED'], string: 's' },
    '{\n  status\n  statuses\n  string\n}\n');
  out('custom-scalar-passthrough', {
    json: { nested: { a: [1, 2, { b: null }], s: 'x', t: true, f: 1.25 } },
    jsons: [1, 'two', [3], { four: 4 }, null, false],
    when: '2024-01-02T03:04:05Z',
  }, '{\n  json\n  jsons\n  when\n}\n');
  out('int-float-values', {
    int: 2147483647, ints: [0, -1, -2147483648, 42], float: 3, floats: [0.5, -2, 1e-7, 12345.678, 1e21],
  }, '{\n  int\n  ints\n  float\n  floats\n}\n');
  out('int-out-of-range-error', { int: 2147483648, ints: [1, -2147483649, 3], string: 'ok' },
    '{\n  int\n  ints\n  string\n}\n');
  out('int-non-integer-error', { int: 1.5, float: 1.5 }, '{\n  int\n  float\n}\n');
  out('id-from-string-and-int', { id: 'abc', ids: ['1', 2, 'x y'] }, '{\n  id\n  ids\n}\n');
  out('strings-and-bools', { string: 'multi\nline "quoted" \\ é 😀', bool: false }, '{\n  string\n  bool\n}\n');
  out('empty-and-null-lists', { empty: [], nothing: null, ints: [null, null] },
    '{\n  empty {\n    id\n  }\n  nothing {\n    id\n  }\n  ints\n}\n');
  out('missing-members-are-null', { rows: [{ id: 1 }, { id: 2, label: 'two' }] },
    '{\n  rows {\n    id\n    label\n    score\n    status\n    flags\n    meta\n  }\n  level {\n    name\n  }\n  int\n}\n');
  out('extra-members-ignored', { int: 1, extra: { a: 1 }, level: { name: 'L', bogus: [1, 2], next: null } },
    '{\n  int\n  level {\n    name\n    next {\n      name\n    }\n  }\n}\n');
  const big = [];
  for (let i = 0; i < 45; i++) big.push(i * i - 100);
  out('list-of-45-ints', { ints: big }, '{\n  ints\n}\n');
  out('list-of-objects-with-nested-lists', {
    level: {
      name: 'root',
      rows: rows.slice(0, 12).map((r, i) => ({ ...r, flags: i % 5 === 0 ? null : [true, false] })),
    },
  }, '{\n  level {\n    name\n    rows {\n      id\n      flags\n      status\n    }\n  }\n}\n');
  out('typename-and-aliases-on-list', { rows: rows.slice(0, 3) },
    '{\n  rows {\n    t: __typename\n    i: id\n    id\n    __typename\n  }\n}\n');
  out('float-integral-values', { float: 100, floats: [1, 2.5, -3] }, '{\n  float\n  floats\n}\n');
}

// ===========================================================================
// 11. Subscriptions (executed once, like a query, over the same fixture).

function genSubscriptions() {
  const schema = 'type Query {\n  a: Int\n}\n\ntype Subscription {\n  tick: Tick\n  count: Int\n}\n\ntype Tick {\n  n: Int\n  at: String\n}\n';
  add('subscription-single-field-object', {
    schema, fixture: { a: 1, tick: { n: 1, at: 'now' }, count: 3 },
    query: 'subscription {\n  tick {\n    n\n    at\n  }\n}\n',
  });
  add('subscription-single-field-error', {
    schema, fixture: { count: err('no count', 'NO_COUNT') },
    query: 'subscription S {\n  count\n}\n',
  });
}

// ===========================================================================

genNullChain();
genLists();
genFragments();
genAbstract();
genSiblings();
genVariables();
genMutations();
genValidation();
genDeadlines();
genOutput();
genSubscriptions();

rmSync(casesDir, { recursive: true, force: true });
for (const [name, spec] of cases) {
  const dir = join(casesDir, name);
  mkdirSync(dir, { recursive: true });
  const schema = spec.schema.endsWith('\n') ? spec.schema : spec.schema + '\n';
  const query = spec.query.endsWith('\n') ? spec.query : spec.query + '\n';
  writeFileSync(join(dir, 'schema.graphql'), schema);
  writeFileSync(join(dir, 'fixture.json'), JSON.stringify(spec.fixture, null, 2) + '\n');
  writeFileSync(join(dir, 'query.graphql'), query);
  if (spec.variables !== undefined) {
    writeFileSync(join(dir, 'variables.json'), JSON.stringify(spec.variables) + '\n');
  }
  const options = {};
  if (spec.operation !== undefined) options.operation = spec.operation;
  if (spec.deadline_ms !== undefined) options.deadline_ms = spec.deadline_ms;
  if (Object.keys(options).length > 0) {
    writeFileSync(join(dir, 'options.json'), JSON.stringify(options) + '\n');
  }
}

const counts = {};
for (const name of cases.keys()) {
  const category = name.split('-')[0];
  counts[category] = (counts[category] ?? 0) + 1;
}
process.stdout.write(`wrote ${cases.size} cases to ${casesDir}\n`);
for (const [category, n] of Object.entries(counts)) process.stdout.write(`  ${category}: ${n}\n`);
