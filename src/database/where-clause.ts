/**
 * A WHERE clause built condition by condition, every value a parameter: `param` adds a value and answers its
 * placeholder ($1, $2, ...), `and` adds a condition that uses placeholders already added. The text then
 * depends only on which conditions were added, never on the values.
 */
export class WhereClause {
  readonly values: unknown[] = [];
  private readonly conditions: string[] = [];

  param(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }

  and(condition: string): this {
    this.conditions.push(condition);
    return this;
  }

  /** `column op $n` when the value is given; nothing when it is undefined (an optional filter). */
  andIf(column: string, op: string, value: unknown): this {
    return value === undefined ? this : this.and(`${column} ${op} ${this.param(value)}`);
  }

  get text(): string {
    return this.conditions.join(' AND ');
  }
}
