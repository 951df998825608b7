// The warehouse benchmark's schema, operation and data for the graphql-js side of the
// comparisons (the C++ side is bench/warehouse.hpp): 1,000 bins, 8,003 fields per operation.
export const WAREHOUSE_SDL = `
  type Query { warehouse(id: ID!): Warehouse }
  type Warehouse { id: ID! name: String! bins(first: Int!): [Bin!]! }
  type Bin { id: ID! sku: String! qty: Int! location: String stock: Stock }
  type Stock { onHand: Int! reserved: Int! valuation: Float }
`;
export const WAREHOUSE_QUERY =
  '{ warehouse(id: "w1") { id name bins(first: 1000) { id sku qty location stock { onHand reserved valuation } } } }';
export const WAREHOUSE_FIELDS = 8003;

const bins = [];
for (let i = 0; i < 1000; ++i)
  bins.push({ id: 'b' + i, sku: 'SKU-' + i, qty: i, location: 'A' + (i % 40),
              stock: { onHand: i, reserved: i >> 1, valuation: i * 1.5 } });
export const warehouse = { id: 'w1', name: 'Main warehouse', bins };
