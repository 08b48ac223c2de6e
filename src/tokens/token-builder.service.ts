import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { ApiError } from '../common/api-error';
import { ExpressionEngine, expressionFieldError } from '../expressions';
import { idSharesDigitRun, MAX_SHARED_DIGITS } from './rules/id-digit-runs';
import { idContainsData, validateTokenId } from './rules/token-id';
import { defaultsFor } from './rules/token-types';
import { blindIndexWith, fingerprintWith, sealWith, TokenCipher, WriteKeys } from './token-cipher.service';
import { readCreateRequest, TokenFields } from './token-fields';
import { Token } from './token.entity';

/** Who a token row belongs to and who wrote it: what build() takes besides the fields. */
export interface TokenIdentity {
  tenantId: string;
  id: string;
  createdBy: string | null;
  createdAt: Date;
  modifiedBy: string | null;
  modifiedAt: Date | null;
}

/** A token ready to store: its row and the blind indexes of its search indexes. */
export interface BuiltToken {
  row: Token;
  indexHashes: string[];
}

/** Turns validated fields into a stored row (id, ciphertext, fingerprint, blind indexes) and back. */
@Injectable()
export class TokenBuilder {
  constructor(
    private readonly cipher: TokenCipher,
    private readonly engine: ExpressionEngine,
  ) {}

  tokenId(requested: string | undefined, fields: TokenFields, prefix: string): string {
    const path = prefix === '' ? 'id' : `${prefix}.id`;
    if (requested === undefined) {
      return randomUUID();
    }
    let id = requested;
    const alias = this.engine.isExpression(requested);
    if (alias) {
      try {
        const rendered = this.engine.render(requested, { data: fields.data });
        id = typeof rendered === 'string' ? rendered : JSON.stringify(rendered);
      } catch (err) {
        throw expressionFieldError(path, err, 'is not a valid expression');
      }
    }
    const problem = validateTokenId(id);
    if (problem !== null) {
      throw ApiError.field(path, problem);
    }
    if (idContainsData(id, fields.data)) {
      throw ApiError.field(path, 'must not contain a value of the token data');
    }
    if (alias && idSharesDigitRun(id, fields.data)) {
      throw ApiError.field(
        path,
        `must not contain more than ${MAX_SHARED_DIGITS} consecutive digits of the token data`,
      );
    }
    return id;
  }

  /**
   * The finished row for `fields` (ciphertext, keyed fingerprint, case-folded metadata) and the blind
   * indexes of its search indexes. Renders the fingerprint and search index expressions; `prefix` is the
   * request path of the definition, for error paths inside /tokenize bodies. `keys` is asked for the tenant's
   * keys once the expressions have rendered (a /tokenize asks once for all its tokens).
   */
  async build(
    identity: TokenIdentity,
    fields: TokenFields,
    prefix: string,
    keys: () => Promise<WriteKeys> = () => this.cipher.writeKeys(identity.tenantId),
  ): Promise<BuiltToken> {
    const at = (path: string): string => (prefix === '' ? path : `${prefix}.${path}`);
    const fingerprintSource =
      stringifiedLeaf(fields.fingerprintExpression, fields.data) ??
      this.evaluate(
        () =>
          this.engine.renderString(fields.fingerprintExpression, {
            data: fields.data,
            metadata: fields.metadata ?? {},
          }),
        at('fingerprint_expression'),
      );
    const indexValues = (fields.searchIndexes ?? []).map((expression, i) => {
      const value = this.evaluate(
        () => this.engine.render(expression, { data: fields.data }),
        at(`search_indexes[${i}]`),
      );
      if (value === null || value === undefined || value === '') {
        throw ApiError.field(at(`search_indexes[${i}]`), 'rendered an empty value');
      }
      return typeof value === 'string' ? value : JSON.stringify(value);
    });
    const { tenantId, id } = identity;
    const { data: dataKey, hmac } = await keys();
    const sealed = sealWith(dataKey, tenantId, id, fields.data);
    const row = Object.assign(new Token(), identity, {
      type: fields.type,
      data: sealed.blob,
      dataKeyVersion: sealed.version,
      mask: fields.mask,
      fingerprint: fingerprintWith(hmac, fields.type, fingerprintSource),
      fingerprintExpression: fields.fingerprintExpression,
      containers: fields.containers,
      metadata: fields.metadata,
      metadataCi:
        fields.metadata === null
          ? null
          : Object.fromEntries(Object.entries(fields.metadata).map(([k, v]) => [k, v.toLowerCase()])),
      searchIndexes: fields.searchIndexes,
      deduplicateToken: fields.deduplicateToken,
      expiresAt: fields.expiresAt,
      deletedAt: null,
    });
    const hashes = indexValues.map((v) => blindIndexWith(hmac, v));
    return { row, indexHashes: [...new Set(hashes)] };
  }

  /**
   * A token intent's type and data, checked as POST /tokens checks a token's, and the fingerprint the token
   * made of it gets by default (so the two match).
   */
  async intentOf(
    tenantId: string,
    body: { type: unknown; data: unknown },
    now: Date,
  ): Promise<{ type: string; data: unknown; fingerprint: string }> {
    const { fields } = readCreateRequest({ type: body.type, data: body.data }, this.engine, now);
    const source =
      stringifiedLeaf(fields.fingerprintExpression, fields.data) ??
      this.evaluate(
        () => this.engine.renderString(fields.fingerprintExpression, { data: fields.data, metadata: {} }),
        'data',
      );
    const fingerprint = await this.cipher.fingerprint(tenantId, fields.type, source);
    return { type: fields.type, data: fields.data, fingerprint };
  }

  private evaluate<T>(render: () => T, path: string): T {
    try {
      return render();
    } catch (err) {
      throw expressionFieldError(path, err);
    }
  }

  async fieldsOf(row: Token): Promise<TokenFields> {
    return {
      type: row.type as TokenFields['type'],
      data: await this.cipher.open(row.tenantId, row.id, row.data as Buffer),
      mask: row.mask,
      containers: row.containers,
      metadata: row.metadata,
      searchIndexes: row.searchIndexes,
      fingerprintExpression: row.fingerprintExpression ?? '',
      deduplicateToken: row.deduplicateToken,
      expiresAt: row.expiresAt,
    };
  }
}

/** The default fingerprint expression of a `token` token: what every /tokenize leaf is fingerprinted with. */
const STRINGIFY_DATA = defaultsFor('token').fingerprintExpression;

/**
 * What the engine renders `{{ data | stringify }}` to when data is a string, number or boolean: its JSON
 * text (the filter is JSON.stringify, and a string output is written as it is), without a Liquid context
 * per leaf. Undefined for any other expression or data, which the engine renders.
 */
export function stringifiedLeaf(expression: string, data: unknown): string | undefined {
  if (expression !== STRINGIFY_DATA) {
    return undefined;
  }
  return typeof data === 'string' || typeof data === 'number' || typeof data === 'boolean'
    ? JSON.stringify(data)
    : undefined;
}
