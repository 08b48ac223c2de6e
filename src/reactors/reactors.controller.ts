import { Body, Controller, Delete, Get, HttpCode, Patch, Post, Put, Query } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBody,
  ApiConsumes,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentPrincipal, RequirePermission } from '../access/decorators';
import { AsyncReactResponseDto, ReactorResultDto, ReactRequestDto, ReactResponseDto } from './dto/react.dto';
import { ReactorRunsService } from './reactor-runs.service';
import { Principal } from '../access/principal';
import { ClientGone } from '../common/client-gone';
import { RequireContentType } from '../common/content-type.guard';
import { Page } from '../common/pagination';
import { UuidParam } from '../common/uuid-param';
import {
  ListReactorsQueryDto,
  PatchReactorDto,
  ReactorBodyDto,
  ReactorDto,
  ReactorPageDto,
} from './dto/reactor.dto';
import { definedFields } from '../common/defined-fields';
import { ReactService } from './react.service';
import { ReactorsService } from './reactors.service';
import { Discloses, PendingReplay, PendingReplayOf, ReplayChecked } from '../idempotency/discloses';
import { IdempotentWrites } from '../idempotency/idempotent-writes';

@ApiTags('Reactors')
@IdempotentWrites()
@Controller('reactors')
export class ReactorsController {
  constructor(
    private readonly reactors: ReactorsService,
    private readonly reactions: ReactService,
    private readonly runs: ReactorRunsService,
  ) {}

  @Post()
  @RequirePermission('reactor:create')
  @ApiOperation({
    summary: 'Create a reactor',
    description:
      'Either a code reactor (`code`, `configuration` a map of strings, optional `runtime`) or a configured ' +
      "instance of a formula (`formula.id`; `configuration` must match the formula's names and types).",
  })
  @ApiCreatedResponse({ type: ReactorDto })
  create(@CurrentPrincipal() p: Principal, @Body() dto: ReactorBodyDto): Promise<ReactorDto> {
    return this.reactors.create(p, dto);
  }

  @Get()
  @RequirePermission('reactor:read')
  @ApiOperation({ summary: 'List reactors' })
  @ApiOkResponse({ type: ReactorPageDto })
  list(@CurrentPrincipal() p: Principal, @Query() query: ListReactorsQueryDto): Promise<Page<ReactorDto>> {
    return this.reactors.list(p, query);
  }

  @Get(':id')
  @RequirePermission('reactor:read')
  @ApiOperation({ summary: 'Get a reactor' })
  @ApiOkResponse({ type: ReactorDto })
  get(@CurrentPrincipal() p: Principal, @UuidParam() id: string): Promise<ReactorDto> {
    return this.reactors.get(p, id);
  }

  @Put(':id')
  @RequirePermission('reactor:update')
  @ApiOperation({
    summary: 'Replace a reactor',
    description: 'A formula reactor keeps its formula, a code reactor stays a code reactor.',
  })
  @ApiOkResponse({ type: ReactorDto })
  update(
    @CurrentPrincipal() p: Principal,
    @UuidParam() id: string,
    @Body() dto: ReactorBodyDto,
  ): Promise<ReactorDto> {
    return this.reactors.update(p, id, dto);
  }

  @Patch(':id')
  @RequirePermission('reactor:update')
  @RequireContentType('application/merge-patch+json')
  @ApiOperation({
    summary: 'Update a reactor',
    description:
      'Content-Type application/merge-patch+json (RFC 7386): configuration and runtime merge, other fields ' +
      'replace; null removes the application or a configuration entry.',
  })
  @ApiConsumes('application/merge-patch+json')
  @ApiBody({ type: PatchReactorDto, description: 'application/merge-patch+json (RFC 7386)' })
  @ApiOkResponse({ type: ReactorDto })
  patch(
    @CurrentPrincipal() p: Principal,
    @UuidParam() id: string,
    @Body() dto: PatchReactorDto,
  ): Promise<ReactorDto> {
    return this.reactors.patch(p, id, definedFields(dto));
  }

  @Delete(':id')
  @HttpCode(204)
  @RequirePermission('reactor:delete')
  @ApiOperation({ summary: 'Delete a reactor' })
  @ApiNoContentResponse()
  delete(@CurrentPrincipal() p: Principal, @UuidParam() id: string): Promise<void> {
    return this.reactors.delete(p, id);
  }

  @Post(':id/react')
  @HttpCode(200)
  @Discloses({ replay: 'recheck' })
  @RequirePermission('token:use')
  @ApiOperation({
    summary: 'Invoke a reactor',
    description:
      "Detokenizes `{{ <token id> }}` expressions in `args` (token:use on each token's containers, at most 100 " +
      "tokens); for a formula reactor keeps the formula's declared request parameters (casting values to their " +
      'declared types). Runs the code in the sandbox with `{ args, configuration, bt }` and answers ' +
      '`{ tokens, raw }`. ' +
      'Errors raised by the code come back in the common error format with the status of their class; a ' +
      'CustomHttpResponseError becomes the literal response.',
  })
  @ApiOkResponse({ type: ReactResponseDto })
  react(
    @CurrentPrincipal() p: Principal,
    @UuidParam() id: string,
    @Body() dto: ReactRequestDto,
    @ClientGone() signal: AbortSignal,
    @PendingReplayOf() replay: PendingReplay | undefined,
  ): Promise<ReactResponseDto | ReplayChecked> {
    return this.reactions.react(p, id, dto, signal, replay);
  }

  @Post(':id/react-async')
  @HttpCode(202)
  @RequirePermission('token:use')
  @ApiOperation({
    summary: 'Invoke a reactor asynchronously',
    description:
      'Checks and detokenizes `args` as POST /reactors/{id}/react does (its errors answer at once), queues the ' +
      'run and answers 202 with its id. The run waits out restarts, runs once on one replica, shares the ' +
      'sandbox with synchronous runs under the same per-tenant rules, and its result is kept encrypted for ' +
      '24 hours: GET /reactors/{id}/results/{run id}.',
  })
  @ApiAcceptedResponse({ type: AsyncReactResponseDto })
  reactAsync(
    @CurrentPrincipal() p: Principal,
    @UuidParam() id: string,
    @Body() dto: ReactRequestDto,
  ): Promise<AsyncReactResponseDto> {
    return this.runs.submit(p, id, dto);
  }

  @Get(':id/results/:requestId')
  @RequirePermission('token:use')
  @ApiOperation({
    summary: 'Get the result of an asynchronous run',
    description:
      '`status` pending, completed (with `tokens` and `raw` as a synchronous react answers them) or failed ' +
      '(with `error`). Only the application that started the run reads it: 404 for an unknown run, another ' +
      'application’s or tenant’s, or one past its 24 hours.',
  })
  @ApiOkResponse({ type: ReactorResultDto })
  result(
    @CurrentPrincipal() p: Principal,
    @UuidParam() id: string,
    @UuidParam('requestId') requestId: string,
  ): Promise<ReactorResultDto> {
    return this.runs.result(p, id, requestId);
  }
}
