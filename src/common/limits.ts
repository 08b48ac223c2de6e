/**
 * The deepest object/array nesting the vault walks in request values: DTO bodies, expression renders,
 * detokenization. Deeper input is refused (or left alone) rather than risking the stack.
 */
export const MAX_NESTING = 64;
