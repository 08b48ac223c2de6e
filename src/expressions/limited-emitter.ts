import { Context, Emitter, toValue } from 'liquidjs';
import { useMemory } from './expression-work';

/**
 * How a value reads inside text: as standard Liquid (nil empty, arrays joined), except that an object is
 * written as compact JSON instead of "[object Object]".
 */
export function outputText(value: unknown): string {
  const v: unknown = toValue(value);
  if (typeof v === 'string') {
    return v;
  }
  if (v === null || v === undefined) {
    return '';
  }
  if (Array.isArray(v)) {
    return v.map(outputText).join('');
  }
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') {
    return String(v);
  }
  return typeof v === 'object' ? (JSON.stringify(v) ?? '') : '';
}

/** Collects rendered text and charges it to the render's memory limit, so output size is bounded too. */
export class LimitedEmitter implements Emitter {
  buffer = '';

  constructor(private readonly ctx: Context) {}

  write(html: unknown): void {
    const text = outputText(html);
    useMemory(this.ctx, text.length);
    this.buffer += text;
  }
}
