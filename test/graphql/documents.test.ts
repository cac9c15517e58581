import { expect } from 'chai';
import { isQueryOperation } from '../../src/graphql/documents.ts';

// Which POST bodies are reads (docs/operations.md, "What reads where"): with read replicas, a query
// over POST reads where GET reads; everything else runs on the primary.
describe('GraphQL: is a POST body a query', () => {
  it('a document with one query, named or not, is a query', () => {
    expect(isQueryOperation({ query: '{ station { name } }' })).to.equal(true);
    expect(isQueryOperation({ query: 'query Now { station { name } }' })).to.equal(true);
    expect(isQueryOperation({ query: 'query Now { station { name } }', operationName: 'Now' })).to.equal(true);
  });

  it('the operation named by operationName decides among several', () => {
    const query =
      'query Read { station { name } } mutation Write { previewEditorial(input: { stationId: "s", recordId: "r" }) { revision } }';
    expect(isQueryOperation({ query, operationName: 'Read' })).to.equal(true);
    expect(isQueryOperation({ query, operationName: 'Write' })).to.equal(false);
  });

  it('a mutation, an ambiguous or unknown operation, a text that does not parse, no text: not a query', () => {
    expect(isQueryOperation({ query: 'mutation { previewEditorial(input: { stationId: "s", recordId: "r" }) { revision } }' })).to.equal(
      false,
    );
    expect(isQueryOperation({ query: 'query A { station { name } } query B { station { name } }' })).to.equal(false);
    expect(isQueryOperation({ query: 'query A { station { name } }', operationName: 'B' })).to.equal(false);
    expect(isQueryOperation({ query: '{ station { name ' })).to.equal(false);
    expect(isQueryOperation({ query: 42 })).to.equal(false);
    expect(isQueryOperation({})).to.equal(false);
  });
});
