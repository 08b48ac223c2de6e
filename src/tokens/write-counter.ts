import { Injectable } from '@nestjs/common';

/** Rows written to the token tables since the last maintenance run: large loads trigger one early. */
@Injectable()
export class WriteCounter {
  private count = 0;

  add(rows: number): void {
    this.count += rows;
  }

  /** Returns the count and starts again from zero. */
  take(): number {
    const count = this.count;
    this.count = 0;
    return count;
  }

  peek(): number {
    return this.count;
  }
}
