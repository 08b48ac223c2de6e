/** The Luhn check digit that completes `payload` (digits only). */
export function luhnCheckDigit(payload: string): string {
  let sum = 0;
  for (let i = 0; i < payload.length; i++) {
    // Counting from the right of the payload, every first, third, ... digit is doubled.
    let digit = Number(payload[payload.length - 1 - i]);
    if (i % 2 === 0) {
      digit *= 2;
      if (digit > 9) {
        digit -= 9;
      }
    }
    sum += digit;
  }
  return String((10 - (sum % 10)) % 10);
}

/** True for a digit string whose last digit is its Luhn check digit. */
export function passesLuhn(number: string): boolean {
  return /^\d{2,}$/.test(number) && luhnCheckDigit(number.slice(0, -1)) === number.slice(-1);
}
