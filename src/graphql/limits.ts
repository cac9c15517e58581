import { GraphQLError, type ValidationContext, type ValidationRule } from 'graphql';
import { hasUnstorableText } from '../http/hostile.ts';
import { costLimitRule } from '@escape.tech/graphql-armor-cost-limit';
import { maxAliasesRule } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthRule } from '@escape.tech/graphql-armor-max-depth';
import type { Config } from '../config.ts';

// Bounds on one operation's work, checked while the document is validated, so an alias bomb or a deeply
// nested query is refused before any resolver runs. GraphQL Armor's rules measure (depth, aliases, a cost
// from the selection's shape); a refusal is reported as a validation error with extensions.code
// VALIDATION_ERROR (not thrown, which graphql-js would not catch). Introspection (`__schema`) is exempt
// from the depth and cost counts; it uses no aliases.

export type GraphQLLimits = Config['graphql'];

/** The limit rules (and the storable-text rule) for one request; `refused` runs when one refuses the operation. */
export function limitRules(limits: GraphQLLimits, refused: () => void): ValidationRule[] {
  const callbacks = (limit: string) => ({
    propagateOnRejection: false,
    onReject: [
      (context: { reportError(error: GraphQLError): void } | null, error: GraphQLError) => {
        refused();
        const message = error.message.replace(/^Syntax Error: /, '');
        context?.reportError(
          new GraphQLError(message, {
            extensions: { code: 'VALIDATION_ERROR', issues: [{ path: 'query', code: 'too_big', message: `${limit}: ${message}` }] },
          }),
        );
      },
    ],
  });
  return [
    storableStrings(refused),
    maxDepthRule({ n: limits.maxDepth, ...callbacks('depth') }),
    maxAliasesRule({ n: limits.maxAliases, ...callbacks('aliases') }),
    costLimitRule({ maxCost: limits.maxCost, ...callbacks('cost') }),
  ] as unknown as ValidationRule[];
}

/** String literals in the document with NUL or unpaired surrogates (`"\u0000"`): no column holds them. */
const storableStrings = (refused: () => void) => (context: ValidationContext) => ({
  StringValue(node: { value: string }) {
    if (!hasUnstorableText(node.value)) return;
    refused();
    const message = 'A string argument holds NUL or an unpaired surrogate.';
    context.reportError(
      new GraphQLError(message, {
        nodes: [node as never],
        extensions: { code: 'VALIDATION_ERROR', issues: [{ path: 'query', code: 'invalid_format', message }] },
      }),
    );
  },
});
