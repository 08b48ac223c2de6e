import { Controller, Delete, Get, Header, HttpCode, Post, Req, StreamableFile } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBody,
  ApiConsumes,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiPayloadTooLargeResponse,
  ApiProduces,
  ApiTags,
} from '@nestjs/swagger';
import type { Request } from 'express';
import { CurrentPrincipal, RequirePermission } from '../access/decorators';
import { Principal } from '../access/principal';
import { RequireContentType } from '../common/content-type.guard';
import { UNTRUSTED_CSP } from '../common/security-headers';
import { UuidParam } from '../common/uuid-param';
import { DocumentsService } from './documents.service';
import { DocumentDto, UploadDocumentDto } from './dto/document.dto';

@ApiTags('Documents')
@Controller('documents')
export class DocumentsController {
  constructor(private readonly documents: DocumentsService) {}

  @Post()
  @RequirePermission('documents:create')
  @RequireContentType('multipart/form-data')
  @ApiOperation({
    summary: 'Upload a document',
    description:
      'A multipart form: the file in the part `document` (its Content-Type is kept) and, optionally, JSON ' +
      'metadata in the part `request`. Stored encrypted as it streams in; larger than DOCUMENT_MAX_BYTES ' +
      '(25 MB by default) is a 413 as soon as the limit is passed.',
  })
  @ApiConsumes('multipart/form-data')
  @ApiBody({ type: UploadDocumentDto })
  @ApiCreatedResponse({ type: DocumentDto })
  @ApiBadRequestResponse({ description: 'No document part, a bad request part, or a malformed body.' })
  @ApiPayloadTooLargeResponse({ description: 'The document is larger than DOCUMENT_MAX_BYTES.' })
  upload(@CurrentPrincipal() p: Principal, @Req() req: Request): Promise<DocumentDto> {
    return this.documents.upload(p, req);
  }

  @Get(':id')
  @RequirePermission('documents:read')
  @ApiOperation({ summary: 'Get a document (its description, not its data)' })
  @ApiOkResponse({ type: DocumentDto })
  @ApiNotFoundResponse({ description: 'No such document in the tenant.' })
  get(@CurrentPrincipal() p: Principal, @UuidParam() id: string): Promise<DocumentDto> {
    return this.documents.get(p, id);
  }

  @Get(':id/data')
  @RequirePermission('documents:read')
  @ApiOperation({
    summary: "Download a document's data",
    description:
      'The file as uploaded, with its Content-Type, streamed as it is decrypted. Needs documents:read with ' +
      'the transform reveal (what an application without access rules has).',
  })
  // Bytes and a type the uploader chose: as inert on this origin as any answer a tenant chose.
  @Header('Content-Security-Policy', UNTRUSTED_CSP)
  @ApiProduces('application/octet-stream')
  @ApiOkResponse({ schema: { type: 'string', format: 'binary' } })
  @ApiNotFoundResponse({ description: 'No such document in the tenant.' })
  async download(@CurrentPrincipal() p: Principal, @UuidParam() id: string): Promise<StreamableFile> {
    const data = await this.documents.download(p, id);
    return new StreamableFile(data.stream, {
      type: data.contentType,
      length: data.size,
      disposition: `attachment; filename="${id}"`,
    });
  }

  @Delete(':id')
  @HttpCode(204)
  @RequirePermission('documents:delete')
  @ApiOperation({ summary: 'Delete a document and its data' })
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiNotFoundResponse({ description: 'No such document in the tenant.' })
  delete(@CurrentPrincipal() p: Principal, @UuidParam() id: string): Promise<void> {
    return this.documents.delete(p, id);
  }
}
