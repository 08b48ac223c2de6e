import { RunShares, SHARE_WINDOW_MS } from './run-shares';

describe('RunShares', () => {
  let now = 0;
  const shares = () => new RunShares(1, () => now);

  beforeEach(() => (now = 1_000_000));

  it('lets a tenant alone take every slot, and anyone take every slot before any run', () => {
    const s = shares();
    expect(s.allowances(2)).toEqual({ known: {}, others: 2 });
    s.started('a');
    expect(s.allowances(1)).toEqual({ known: { a: 1 }, others: 1 });
    expect(s.total).toBe(1);
  });

  it('holds each tenant to its share while another tenant is active, until the window has passed', () => {
    const s = shares();
    s.started('a');
    s.started('b');
    s.finished('b');
    expect(s.allowances(2)).toEqual({ known: { a: 0, b: 1 }, others: 1 });
    now += SHARE_WINDOW_MS + 1;
    // b ran nothing since: forgotten; a still holds a run, so it stays known, alone.
    expect(s.allowances(2)).toEqual({ known: { a: 2 }, others: 1 });
    s.finished('a');
    expect(s.total).toBe(0);
  });
});
