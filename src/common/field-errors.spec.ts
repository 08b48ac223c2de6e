import { addError, FieldErrors } from './field-errors';

describe('addError', () => {
  it('creates the list for a new path and appends to an existing one', () => {
    const errors: FieldErrors = {};
    addError(errors, 'data.number', 'is required');
    addError(errors, 'data.number', 'must be a string');
    addError(errors, 'data.cvc', 'must be a string of 3 or 4 digits');
    expect(errors).toEqual({
      'data.number': ['is required', 'must be a string'],
      'data.cvc': ['must be a string of 3 or 4 digits'],
    });
  });

  it('treats inherited names such as __proto__ and toString as ordinary paths', () => {
    const errors: FieldErrors = {};
    addError(errors, 'toString', 'is not a card field');
    addError(errors, '__proto__', 'is not a card field');
    expect(Object.getPrototypeOf(errors)).toBe(Object.prototype);
    expect(Object.keys(errors)).toEqual(['toString', '__proto__']);
    expect(errors['toString']).toEqual(['is not a card field']);
  });
});
