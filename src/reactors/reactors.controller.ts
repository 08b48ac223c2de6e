import { Body, Controller, Delete, Get, HttpCode, Post, Put, Query } from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentPrincipal, RequirePermission } from '../access/decorators';
import { ReactRequestDto, ReactResponseDto } from './dto/react.dto';
import { Principal } from '../access/principal';
import { ClientGone } from '../common/client-gone';
import { Page } from '../common/pagination';
import { UuidParam } from '../common/uuid-param';
import {
  CreateReactorDto,
  ListReactorsQueryDto,
  ReactorDto,
  ReactorPageDto,
  UpdateReactorDto,
} from './dto/reactor.dto';
import { ReactService } from './react.service';
import { ReactorsService } from './reactors.service';

@ApiTags('Reactors')
@Controller('reactors')
export class ReactorsController {
  constructor(
    private readonly reactors: ReactorsService,
    private readonly reactions: ReactService,
  ) {}

  @Post()
  @RequirePermission('reactor:create')
  @ApiOperation({
    summary: 'Create a reactor',
    description:
      "A configured instance of a formula. `configuration` must match the formula's configuration names and types.",
  })
  @ApiCreatedResponse({ type: ReactorDto })
  create(@CurrentPrincipal() p: Principal, @Body() dto: CreateReactorDto): Promise<ReactorDto> {
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
  @ApiOperation({ summary: 'Replace a reactor', description: 'The formula cannot change.' })
  @ApiOkResponse({ type: ReactorDto })
  update(
    @CurrentPrincipal() p: Principal,
    @UuidParam() id: string,
    @Body() dto: UpdateReactorDto,
  ): Promise<ReactorDto> {
    return this.reactors.update(p, id, dto);
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
  @RequirePermission('token:use')
  @ApiOperation({
    summary: 'Invoke a reactor',
    description:
      "Detokenizes `{{ <token id> }}` expressions in `args` (token:use on each token's containers, at most 100 " +
      "tokens), keeps the formula's declared request parameters (casting values to their declared types), runs " +
      "the formula's code in the sandbox with `{ args, configuration, bt }` and answers `{ tokens, raw }`. " +
      'Errors raised by the code come back in the common error format with the status of their class; a ' +
      'CustomHttpResponseError becomes the literal response.',
  })
  @ApiOkResponse({ type: ReactResponseDto })
  react(
    @CurrentPrincipal() p: Principal,
    @UuidParam() id: string,
    @Body() dto: ReactRequestDto,
    @ClientGone() signal: AbortSignal,
  ): Promise<ReactResponseDto> {
    return this.reactions.react(p, id, dto, signal);
  }
}
