import { Injectable } from '@nestjs/common';
import { createPrivateKey, generateKeyPairSync, KeyObject, randomUUID } from 'node:crypto';
import { Principal } from '../access/principal';
import { AuditService } from '../audit/audit.service';
import { auditEvent } from '../audit/audit-event';
import { ApiError } from '../common/api-error';
import { Clock } from '../common/clock';
import { nestedDeeperThan } from '../common/nesting';
import { MAX_DTO_DEPTH } from '../common/validation';
import { TenantCipher } from '../crypto/tenant-cipher.service';
import { Database } from '../database/database.service';
import { ClientJweError, openClientJwe } from './client-jwe';
import { ClientKey } from './client-key.entity';
import { ClientKeysRepository } from './client-keys.repository';
import { ClientKeyDto, CreateClientKeyDto, CreatedClientKeyDto } from './dto/client-key.dto';

/** What the private key is sealed as, bound to the key's row (see TenantCipher). */
export const CLIENT_KEY_SEAL = 'client-encryption-key';
export const MAX_CLIENT_KEYS_PER_TENANT = 100;
/** The longest a key may live, and how long it lives when the request names no expiry. */
export const MAX_CLIENT_KEY_LIFETIME_MS = 365 * 24 * 60 * 60 * 1000;

/** /keys, and the decryption of token data browsers encrypted to those keys (`encrypted` on token creates). */
@Injectable()
export class ClientKeysService {
  constructor(
    private readonly keys: ClientKeysRepository,
    private readonly db: Database,
    private readonly cipher: TenantCipher,
    private readonly clock: Clock,
    private readonly audit: AuditService,
  ) {}

  async create(principal: Principal, dto: CreateClientKeyDto): Promise<CreatedClientKeyDto> {
    const now = this.clock.now();
    const expiresAt = this.expiryOf(dto.expires_at, now);
    const { tenantId } = principal;
    const id = randomUUID();
    const pair = generateKeyPairSync('x25519');
    const publicKey = pair.publicKey.export({ format: 'jwk' }).x as string;
    const pkcs8 = pair.privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64');
    const row: Partial<ClientKey> = {
      tenantId,
      id,
      publicKey,
      privateKey: await this.cipher.sealJson(CLIENT_KEY_SEAL, tenantId, id, pkcs8),
      expiresAt,
      createdBy: principal.applicationId,
      createdAt: now,
      modifiedBy: null,
      modifiedAt: null,
    };
    await this.db.transaction(async () => {
      await this.keys.lockCreates(tenantId);
      if ((await this.keys.count(tenantId)) >= MAX_CLIENT_KEYS_PER_TENANT) {
        throw ApiError.unprocessable(
          `A tenant has at most ${MAX_CLIENT_KEYS_PER_TENANT} client encryption keys: delete unused ones.`,
        );
      }
      await this.keys.insert(row);
      await this.audit.record(
        auditEvent(principal, 'client_encryption_key', id, 'create', 'Client encryption key created'),
      );
    });
    return { ...toDto(row as ClientKey), public_key_pem: publicKeyPem(publicKey) };
  }

  async list(principal: Principal): Promise<ClientKeyDto[]> {
    return (await this.keys.all(principal.tenantId)).map(toDto);
  }

  async get(principal: Principal, id: string): Promise<ClientKeyDto> {
    const key = await this.keys.find(principal.tenantId, id);
    if (key === null) {
      throw ApiError.notFound('Client encryption key');
    }
    return toDto(key);
  }

  /** The private key is gone with the row: what was encrypted to it can no longer be sent. */
  async delete(principal: Principal, id: string): Promise<void> {
    await this.db.transaction(async () => {
      if (!(await this.keys.delete(principal.tenantId, id))) {
        throw ApiError.notFound('Client encryption key');
      }
      await this.audit.record(
        auditEvent(principal, 'client_encryption_key', id, 'delete', 'Client encryption key deleted'),
      );
    });
  }

  /**
   * A create-token body (POST /tokens, or a /tokenize definition at `prefix`) with `encrypted` opened into
   * `data`; a body without `encrypted` as it is. Refusals are field errors that never quote the content.
   */
  async openTokenBody(
    tenantId: string,
    body: Record<string, unknown>,
    prefix = '',
  ): Promise<Record<string, unknown>> {
    if (!('encrypted' in body)) {
      return body;
    }
    const { encrypted, ...rest } = body;
    // Null is how some SDKs send a member they were not given.
    if (encrypted === null) {
      return rest;
    }
    const path = prefix === '' ? 'encrypted' : `${prefix}.encrypted`;
    if (rest.data !== undefined) {
      throw ApiError.field(path, 'is sent instead of data, not with it');
    }
    let data: unknown;
    try {
      data = await openClientJwe(encrypted, (kid) => this.privateKey(tenantId, kid));
    } catch (err) {
      if (err instanceof ClientJweError) {
        throw ApiError.field(path, err.message);
      }
      throw err;
    }
    if (nestedDeeperThan(data, MAX_DTO_DEPTH)) {
      throw ApiError.field(path, `holds data nested deeper than ${MAX_DTO_DEPTH} levels`);
    }
    return { ...rest, data };
  }

  /** The private key of the tenant's key `id`, or why it cannot decrypt (the same answer for every absent key). */
  private async privateKey(tenantId: string, id: string): Promise<KeyObject | string> {
    const key = await this.keys.find(tenantId, id);
    if (key === null) {
      return 'names no client encryption key of this tenant';
    }
    if (key.expiresAt.getTime() <= this.clock.now().getTime()) {
      return 'names a client encryption key that has expired';
    }
    const pkcs8 = (await this.cipher.openJson(CLIENT_KEY_SEAL, tenantId, id, key.privateKey)) as string;
    return createPrivateKey({ key: Buffer.from(pkcs8, 'base64'), format: 'der', type: 'pkcs8' });
  }

  private expiryOf(raw: string | undefined, now: Date): Date {
    const latest = now.getTime() + MAX_CLIENT_KEY_LIFETIME_MS;
    if (raw === undefined) {
      return new Date(latest);
    }
    const at = new Date(raw);
    if (at.getTime() <= now.getTime()) {
      throw ApiError.field('expires_at', 'must be in the future');
    }
    if (at.getTime() > latest) {
      throw ApiError.field('expires_at', 'must be at most one year away');
    }
    return at;
  }
}

/** The SPKI-less PEM the hosted vault answers: its armour around the raw 32-byte X25519 key. */
export function publicKeyPem(publicKey: string): string {
  const body = Buffer.from(publicKey, 'base64url').toString('base64');
  return `-----BEGIN PUBLIC KEY-----\n${body}\n-----END PUBLIC KEY-----`;
}

function toDto(key: ClientKey): ClientKeyDto {
  return { key_id: key.id, expires_at: key.expiresAt.toISOString() };
}
