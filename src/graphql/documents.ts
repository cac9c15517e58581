import {
  Kind,
  OperationTypeNode,
  parse,
  validate,
  type DocumentNode,
  type GraphQLError,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type ValidationRule,
} from 'graphql';
import { LRUCache } from 'lru-cache';

/**
 * A document is parsed and validated once per query text: apps send the same few queries on every
 * poll. Parsed documents are kept by text (LRU, bounded in count and size; very long texts are not kept), and
 * the validation errors by document (the schema and rules never change in a process).
 */
const MAX_CACHED_QUERY_LENGTH = 16 * 1024;
// Bounded in count and in an estimate of the parsed size (a document's AST is several times its text).
const documents = new LRUCache<string, DocumentNode>({
  max: 1000,
  maxSize: 16 * 1024 * 1024,
  sizeCalculation: (_document, source) => 64 + source.length * 8,
});
const validations = new WeakMap<DocumentNode, readonly GraphQLError[]>();

export function parseOnce(source: string): DocumentNode {
  const hit = documents.get(source);
  if (hit) return hit;
  const document = parse(source);
  if (source.length <= MAX_CACHED_QUERY_LENGTH) documents.set(source, document);
  return document;
}

export function validateOnce(target: GraphQLSchema, document: DocumentNode, rules?: readonly ValidationRule[]): readonly GraphQLError[] {
  const hit = validations.get(document);
  if (hit) return hit;
  const errors = validate(target, document, rules);
  validations.set(document, errors);
  return errors;
}

/** The errors `validateOnce` kept for a document it validated before (its rules do not run again); else undefined. */
export function keptValidation(document: DocumentNode): readonly GraphQLError[] | undefined {
  return validations.get(document);
}

/**
 * Whether a POST body's operation is a query (`{query, operationName}`): the document's operation of
 * that name, or its only one. Anything else — a mutation, a text that does not parse, an ambiguous or
 * unknown operation name — is false: graphql-http reports those, on the primary.
 */
export function isQueryOperation(body: Record<string, unknown>): boolean {
  const source = body.query;
  if (typeof source !== 'string') return false;
  let document: DocumentNode;
  try {
    document = parseOnce(source);
  } catch {
    return false;
  }
  const name = typeof body.operationName === 'string' && body.operationName !== '' ? body.operationName : null;
  const operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  const chosen = name === null ? (operations.length === 1 ? operations[0] : undefined) : operations.find((o) => o.name?.value === name);
  return chosen?.operation === OperationTypeNode.QUERY;
}
