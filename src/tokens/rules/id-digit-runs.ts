/** Consecutive digits an alias id may share with a data value (DESIGN §7, README security notes). */
export const MAX_SHARED_DIGITS = 5;

/** A data value with this many digits in one run is read as a card number (PAN). */
const PAN_LENGTH = { min: 13, max: 19 };
/** Leading and trailing digits of a card number that any display may show (PCI DSS: BIN and last four). */
const PAN_SHOWN = { first: 6, last: 4 };
/** Middle digits of a card number a shared run must hold, wherever it occurs in the number, to count. */
const PAN_MIDDLE_DIGITS = 3;

const SEPARATORS = /[^\p{L}\p{N}]/gu;

/**
 * The digit runs of a text once separators (anything but letters and digits) are dropped: `4-2-4-2` and
 * `4242 4242` are one run each; letters still split runs, so `424242XXXXXX4242` holds two.
 */
export function digitRuns(text: string): string[] {
  return text.replace(SEPARATORS, '').match(/\d+/g) ?? [];
}

/**
 * True when an id rendered from an alias expression holds a run of more than MAX_SHARED_DIGITS
 * consecutive digits of a data value (spec §2.1: an id holds no sensitive data). For a card number the
 * BIN and last four are not secret, so such a run counts only when it holds at least PAN_MIDDLE_DIGITS
 * of the middle digits wherever it occurs in the number: `alias_card` (which keeps the BIN) and
 * `alias_preserve_format: 6, 4` pass unless their random digits happen to extend a kept part that far.
 */
export function idSharesDigitRun(id: string, data: unknown): boolean {
  const idRuns = digitRuns(id).filter((run) => run.length > MAX_SHARED_DIGITS);
  if (idRuns.length === 0) {
    return false;
  }
  const windows = new Set<string>();
  for (const run of idRuns) {
    for (let i = 0; i + MAX_SHARED_DIGITS < run.length; i++) {
      windows.add(run.slice(i, i + MAX_SHARED_DIGITS + 1));
    }
  }
  const pending: unknown[] = [data];
  while (pending.length > 0) {
    const value = pending.pop();
    if (typeof value === 'string' || typeof value === 'number') {
      if (digitRuns(String(value)).some((run) => runShared(run, idRuns, windows))) {
        return true;
      }
    } else if (typeof value === 'object' && value !== null) {
      pending.push(...(Object.values(value) as unknown[]));
    }
  }
  return false;
}

function runShared(run: string, idRuns: string[], windows: Set<string>): boolean {
  let hit = false;
  for (let i = 0; i + MAX_SHARED_DIGITS < run.length && !hit; i++) {
    hit = windows.has(run.slice(i, i + MAX_SHARED_DIGITS + 1));
  }
  if (!hit || run.length < PAN_LENGTH.min || run.length > PAN_LENGTH.max) {
    return hit;
  }
  // A card number: every shared part long enough to count, placed where it shows the fewest middle digits.
  for (let start = 0; start < run.length; start++) {
    for (let end = start + MAX_SHARED_DIGITS + 1; end <= run.length; end++) {
      const part = run.slice(start, end);
      if (idRuns.some((r) => r.includes(part)) && fewestMiddleDigits(run, part) >= PAN_MIDDLE_DIGITS) {
        return true;
      }
    }
  }
  return false;
}

/** The fewest middle digits of the card number `pan` that an occurrence of `part` in it covers. */
function fewestMiddleDigits(pan: string, part: string): number {
  const middleStart = PAN_SHOWN.first;
  const middleEnd = pan.length - PAN_SHOWN.last;
  let fewest = Infinity;
  for (let at = pan.indexOf(part); at >= 0; at = pan.indexOf(part, at + 1)) {
    const covered = Math.max(0, Math.min(at + part.length, middleEnd) - Math.max(at, middleStart));
    fewest = Math.min(fewest, covered);
  }
  return fewest;
}
