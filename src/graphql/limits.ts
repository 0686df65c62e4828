// Validation rules that bound the work one document can ask for (OWASP GraphQL cheat sheet):
// selection depth and the number of aliased fields.
import { GraphQLError, Kind, type ASTVisitor, type ValidationContext, type SelectionSetNode, type FragmentDefinitionNode } from 'graphql';

export const MAX_DEPTH = 12;
export const MAX_ALIASES = 30;

export function limitsRule(context: ValidationContext): ASTVisitor {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const def of context.getDocument().definitions) {
    if (def.kind === Kind.FRAGMENT_DEFINITION) fragments.set(def.name.value, def);
  }
  const depthOf = (set: SelectionSetNode | undefined, seen: Set<string>): number => {
    if (!set) return 0;
    let max = 0;
    for (const sel of set.selections) {
      let d = 0;
      if (sel.kind === Kind.FIELD) d = sel.selectionSet ? 1 + depthOf(sel.selectionSet, seen) : 1;
      else if (sel.kind === Kind.INLINE_FRAGMENT) d = depthOf(sel.selectionSet, seen);
      else if (!seen.has(sel.name.value)) {
        const frag = fragments.get(sel.name.value);
        d = frag ? depthOf(frag.selectionSet, new Set([...seen, sel.name.value])) : 0;
      }
      if (d > max) max = d;
      if (max > MAX_DEPTH) return max;
    }
    return max;
  };
  let aliases = 0;
  return {
    Field(node) {
      if (node.alias && ++aliases === MAX_ALIASES + 1) {
        context.reportError(new GraphQLError(`The document uses more than ${MAX_ALIASES} aliases`, { nodes: [node] }));
      }
    },
    OperationDefinition(node) {
      if (depthOf(node.selectionSet, new Set()) > MAX_DEPTH) {
        context.reportError(new GraphQLError(`The document is nested deeper than ${MAX_DEPTH} levels`, { nodes: [node] }));
      }
    },
  };
}
