/** Validation failures keyed by request path, e.g. { 'data.number': ['must pass the Luhn check'] }. Messages NEVER contain the offending value. */
export type FieldErrors = Record<string, string[]>;

export function addError(errors: FieldErrors, path: string, message: string): void {
  const messages = Object.hasOwn(errors, path) ? errors[path] : undefined;
  if (messages) {
    messages.push(message);
  } else {
    // defineProperty so a path such as '__proto__' stays an ordinary key
    Object.defineProperty(errors, path, {
      value: [message],
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
}
