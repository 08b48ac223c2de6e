import { Injectable, Logger } from '@nestjs/common';
import { Transform } from '../access/access-rules';
import { atMostMask, transformFor } from '../access/access';
import { Permission } from '../access/permissions';
import { Principal } from '../access/principal';
import { ExpressionEngine } from '../expressions';
import { TokenDto } from './dto/token.dto';
import { maskShortcut, NO_SHORTCUT } from './mask-shortcuts';
import { TokenCipher } from './token-cipher.service';
import { InsertOutcome } from './token-inserter.service';
import { presentToken } from './token-presenter';
import { Token } from './token.entity';
import { TokenData } from './tokens.repository';

/** Tokens as a caller sees them: decrypted only when the transform shows data, the mask evaluated. */
@Injectable()
export class TokenPresentation {
  private readonly logger = new Logger('Tokens');

  constructor(
    private readonly cipher: TokenCipher,
    private readonly engine: ExpressionEngine,
  ) {}

  /** The response for one insert: the new token as the caller may see it, or the duplicate it found. */
  async presentOutcome(principal: Principal, outcome: InsertOutcome): Promise<TokenDto> {
    if ('duplicateOf' in outcome) {
      return this.presentDuplicate(principal, outcome.duplicateOf);
    }
    const { row, fields, transform } = outcome.inserted;
    return this.present(row, fields.data, transform);
  }

  /** A duplicate is always one the caller may read (DuplicateScope): shown at most masked. */
  async presentDuplicate(principal: Principal, existing: Token): Promise<TokenDto> {
    const read = transformFor(principal, 'token:read', existing.containers) ?? 'redact';
    return {
      ...(await this.present(existing, undefined, atMostMask(read))),
      _extras: { deduplicated: true },
    };
  }

  /** Tokens of a list, each as the caller's transform for `permission` shows it. */
  async presentRows(principal: Principal, permission: Permission, rows: Token[]): Promise<TokenDto[]> {
    const transforms = rows.map((row) => transformFor(principal, permission, row.containers) ?? 'redact');
    const sealed = rows.flatMap((row, i) =>
      transforms[i] === 'redact' || row.data === null ? [] : [row.data],
    );
    const open = await this.cipher.opener(principal.tenantId, sealed);
    return rows.map((row, i) => {
      const transform = transforms[i];
      if (transform === 'redact' || row.data === null) {
        return presentToken(row, { transform });
      }
      try {
        return this.presentData(row, open(row.id, row.data), transform);
      } catch (err) {
        // One unreadable ciphertext must not hide the rest of the page: show that token without data.
        this.logger.error(
          { tokenId: row.id, err: { type: err instanceof Error ? err.name : 'unknown' } },
          'token could not be decrypted',
        );
        return presentToken(row, { transform: 'redact' });
      }
    });
  }

  /**
   * Decrypts only when the transform shows something derived from the data. `mask: false` (a detokenization
   * that uses only the revealed data) skips evaluating the mask; the token then has no `mask` field.
   */
  async present(
    row: Token,
    knownData: unknown,
    transform: Transform,
    options: { mask: boolean } = { mask: true },
  ): Promise<TokenDto> {
    if (transform === 'redact' || row.data === null) {
      return presentToken(row, { transform });
    }
    const data = knownData !== undefined ? knownData : await this.cipher.open(row.tenantId, row.id, row.data);
    return this.presentData(row, data, transform, options.mask);
  }

  /** The `data` of present(row, undefined, transform, { mask: transform === 'mask' }), without the token around it. */
  async presentedData(row: TokenData, transform: Transform): Promise<unknown> {
    if (transform === 'redact' || row.data === null) {
      return undefined;
    }
    const data = await this.cipher.open(row.tenantId, row.id, row.data);
    return transform === 'reveal' ? data : this.evaluateMask(row.mask, data);
  }

  private presentData(row: Token, data: unknown, transform: Transform, mask = true): TokenDto {
    return presentToken(row, { transform, data, mask: mask ? this.evaluateMask(row.mask, data) : undefined });
  }

  private evaluateMask(mask: unknown, data: unknown): unknown {
    if (mask === null || mask === undefined) {
      return undefined;
    }
    const shortcut = maskShortcut(mask, data);
    if (shortcut !== NO_SHORTCUT) {
      return shortcut;
    }
    try {
      return this.engine.renderDeep(mask, { data });
    } catch {
      // A mask that no longer fits the data (e.g. a json path that stopped matching) shows nothing.
      return null;
    }
  }
}
