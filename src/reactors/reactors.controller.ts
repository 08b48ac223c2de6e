import { Body, Controller, Delete, Get, HttpCode, Post, Put, Query } from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentPrincipal, RequirePermission } from '../auth/decorators';
import { Principal } from '../auth/principal';
import { Page } from '../common/pagination';
import { UuidParam } from '../common/uuid-param';
import {
  CreateReactorDto,
  ListReactorsQueryDto,
  ReactorDto,
  ReactorPageDto,
  UpdateReactorDto,
} from './dto/reactor.dto';
import { ReactorsService } from './reactors.service';

@ApiTags('Reactors')
@Controller('reactors')
export class ReactorsController {
  constructor(private readonly reactors: ReactorsService) {}

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
}
