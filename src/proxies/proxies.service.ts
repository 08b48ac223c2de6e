import { AuditService } from '../audit/audit.service';
import { auditEvent } from '../audit/audit-event';
import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { Events } from '../events/events';
import { ApplicationLookups } from '../applications/application-lookups.service';
import { Principal } from '../access/principal';
import { ApiError } from '../common/api-error';
import { Page, pageOf } from '../common/pagination';
import { generateProxyKey, hashSecret } from '../crypto/secrets';
import { TenantCipher } from '../crypto/tenant-cipher.service';
import { Database } from '../database/database.service';
import { ListProxiesQueryDto, ProxyBodyDto, ProxyDto } from './dto/proxy.dto';
import { ProxiesRepository } from './proxies.repository';
import { ProxyCache } from './proxy-cache';
import { checkProxyBody } from './proxy-rules';
import { ExpressionEngine } from '../expressions';
import { Proxy } from './proxy.entity';
import { LoadedProxy } from './loaded-proxy';
import { Clock } from '../common/clock';
import { mergePatch } from '../common/merge-patch';
import { APP_CONFIG, AppConfig } from '../config/app-config';

const KEY_SEAL = 'proxy-key';
const CONFIGURATION_SEAL = 'proxy-configuration';

@Injectable()
export class ProxiesService {
  constructor(
    private readonly proxies: ProxiesRepository,
    private readonly db: Database,
    private readonly applications: ApplicationLookups,
    private readonly cipher: TenantCipher,
    private readonly cache: ProxyCache,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly audit: AuditService,
    private readonly events: Events,
    private readonly engine: ExpressionEngine,
  ) {}

  async create(principal: Principal, dto: ProxyBodyDto): Promise<ProxyDto> {
    const checked = checkProxyBody(dto, { allowLoopback: this.config.proxyAllowLoopback }, (t) =>
      this.engine.parse(t),
    );
    const applicationId = await this.applications.requireBindable(principal, dto.application?.id ?? null);
    const { tenantId } = principal;
    const id = randomUUID();
    const key = generateProxyKey();
    const row = {
      tenantId,
      id,
      name: dto.name,
      keyHash: hashSecret(key),
      key: await this.cipher.sealJson(KEY_SEAL, tenantId, id, key),
      destinationUrl: checked.destinationUrl,
      requestTransformCode: checked.requestTransformCode,
      responseTransformCode: checked.responseTransformCode,
      requestTransforms: checked.requestTransforms,
      responseTransforms: checked.responseTransforms,
      applicationId,
      configuration: await this.seal(tenantId, id, checked.configuration),
      requireAuth: checked.requireAuth,
      disableDetokenization: checked.disableDetokenization,
      createdBy: principal.applicationId,
      modifiedBy: null,
      modifiedAt: null,
    };
    await this.db.transaction(async () => {
      await this.proxies.insert(row);
      await this.audit.record(auditEvent(principal, 'proxy', id, 'create', 'Proxy created'));
      await this.events.publish(principal.tenantId, 'proxy.created', { id });
    });
    return this.get(principal, id);
  }

  async list(principal: Principal, query: ListProxiesQueryDto): Promise<Page<ProxyDto>> {
    const [rows, total] = await this.proxies.page(principal.tenantId, query);
    return pageOf(await Promise.all(rows.map((row) => this.toDto(row))), total, query);
  }

  async get(principal: Principal, id: string): Promise<ProxyDto> {
    return this.toDto(await this.find(principal.tenantId, id));
  }

  async update(principal: Principal, id: string, dto: ProxyBodyDto): Promise<ProxyDto> {
    return this.replace(principal, await this.find(principal.tenantId, id), dto);
  }

  /** PATCH (RFC 7386) over the proxy as a replace body: configuration and transforms merge. */
  async patch(principal: Principal, id: string, patch: Record<string, unknown>): Promise<ProxyDto> {
    const proxy = await this.find(principal.tenantId, id);
    const transform = (code: string | null) => (code === null ? {} : { type: 'code', code });
    const configuration = await this.open(proxy);
    const current: Record<string, unknown> = {
      name: proxy.name,
      destination_url: proxy.destinationUrl,
      require_auth: proxy.requireAuth,
      disable_detokenization: proxy.disableDetokenization,
      ...(proxy.requestTransformCode !== null
        ? { request_transform: transform(proxy.requestTransformCode) }
        : {}),
      ...(proxy.responseTransformCode !== null
        ? { response_transform: transform(proxy.responseTransformCode) }
        : {}),
      ...(proxy.requestTransforms !== null ? { request_transforms: proxy.requestTransforms } : {}),
      ...(proxy.responseTransforms !== null ? { response_transforms: proxy.responseTransforms } : {}),
      ...(proxy.applicationId !== null ? { application: { id: proxy.applicationId } } : {}),
      ...(configuration !== null ? { configuration } : {}),
    };
    return this.replace(principal, proxy, mergePatch(current, patch) as ProxyBodyDto);
  }

  private async replace(principal: Principal, proxy: Proxy, dto: ProxyBodyDto): Promise<ProxyDto> {
    const checked = checkProxyBody(dto, { allowLoopback: this.config.proxyAllowLoopback }, (t) =>
      this.engine.parse(t),
    );
    const { tenantId, id } = proxy;
    const applicationId = await this.applications.requireBindable(principal, dto.application?.id ?? null);
    const configuration = await this.seal(tenantId, id, checked.configuration);
    await this.db.transaction(async () => {
      await this.proxies.update(tenantId, id, {
        name: dto.name,
        destinationUrl: checked.destinationUrl,
        requestTransformCode: checked.requestTransformCode,
        responseTransformCode: checked.responseTransformCode,
        requestTransforms: checked.requestTransforms,
        responseTransforms: checked.responseTransforms,
        applicationId,
        configuration,
        requireAuth: checked.requireAuth,
        disableDetokenization: checked.disableDetokenization,
        modifiedBy: principal.applicationId,
        modifiedAt: this.clock.now(),
      });
      await this.cache.changed(id);
      await this.audit.record(auditEvent(principal, 'proxy', id, 'update', 'Proxy updated'));
      await this.events.publish(principal.tenantId, 'proxy.updated', { id });
    });
    return this.get(principal, id);
  }

  async delete(principal: Principal, id: string): Promise<void> {
    await this.db.transaction(async () => {
      if (!(await this.proxies.delete(principal.tenantId, id))) {
        throw ApiError.notFound('Proxy');
      }
      await this.cache.changed(id);
      await this.audit.record(auditEvent(principal, 'proxy', id, 'delete', 'Proxy deleted'));
      await this.events.publish(principal.tenantId, 'proxy.deleted', { id });
    });
  }

  /** The proxy a /proxy request names by its key, in any tenant (the caller checks tenancy); null if none. */
  async findByKey(key: string): Promise<LoadedProxy | null> {
    const keyHash = hashSecret(key);
    const cached = this.cache.get(keyHash);
    if (cached !== undefined) {
      return cached;
    }
    const proxy = await this.proxies.findByKeyHash(keyHash);
    if (proxy === null) {
      return null;
    }
    const loaded = { proxy, configuration: (await this.open(proxy)) ?? {} };
    this.cache.set(keyHash, loaded);
    return loaded;
  }

  private async find(tenantId: string, id: string): Promise<Proxy> {
    const proxy = await this.proxies.find(tenantId, id);
    if (proxy === null) {
      throw ApiError.notFound('Proxy');
    }
    return proxy;
  }

  private async seal(
    tenantId: string,
    id: string,
    configuration: Record<string, string> | null,
  ): Promise<Buffer | null> {
    return configuration === null
      ? null
      : this.cipher.sealJson(CONFIGURATION_SEAL, tenantId, id, configuration);
  }

  private async open(proxy: Proxy): Promise<Record<string, string> | null> {
    if (proxy.configuration === null) {
      return null;
    }
    return (await this.cipher.openJson(
      CONFIGURATION_SEAL,
      proxy.tenantId,
      proxy.id,
      proxy.configuration,
    )) as Record<string, string>;
  }

  private async toDto(proxy: Proxy): Promise<ProxyDto> {
    return {
      id: proxy.id,
      tenant_id: proxy.tenantId,
      key: (await this.cipher.openJson(KEY_SEAL, proxy.tenantId, proxy.id, proxy.key)) as string,
      name: proxy.name,
      destination_url: proxy.destinationUrl,
      request_transform:
        proxy.requestTransformCode === null ? null : { type: 'code', code: proxy.requestTransformCode },
      response_transform:
        proxy.responseTransformCode === null ? null : { type: 'code', code: proxy.responseTransformCode },
      request_transforms: proxy.requestTransforms,
      response_transforms: proxy.responseTransforms,
      application_id: proxy.applicationId,
      configuration: await this.open(proxy),
      require_auth: proxy.requireAuth,
      disable_detokenization: proxy.disableDetokenization,
      created_by: proxy.createdBy,
      created_at: proxy.createdAt.toISOString(),
      modified_by: proxy.modifiedBy,
      modified_at: proxy.modifiedAt?.toISOString() ?? null,
    };
  }
}
