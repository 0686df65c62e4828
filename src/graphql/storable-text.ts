// A validation rule: string values written in the document must be text PostgreSQL can store.
// Checked on the values the parser decoded (`"\u0000"` and `"\u{0}"` are NUL; the six characters
// `\u0000` in a comment, or `"\\u0000"`, are not), so that a NUL is refused here with a clear
// message instead of failing a query as an internal error. Variables are checked at the edge
// (http/graphql-params.ts).
import { GraphQLError, type ASTVisitor, type ValidationContext } from 'graphql';

export const NUL_MESSAGE = 'text must not contain NUL characters';

export function storableTextRule(context: ValidationContext): ASTVisitor {
  return {
    StringValue(node) {
      if (node.value.includes('\u0000')) context.reportError(new GraphQLError(NUL_MESSAGE, { nodes: [node] }));
    },
  };
}
