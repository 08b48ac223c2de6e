import { Body, Controller, Delete, Get, HttpCode, Post, Put, Query } from '@nestjs/common';
import {
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import { CurrentPrincipal, RequirePermission } from '../access/decorators';
import { Principal } from '../access/principal';
import { Page } from '../common/pagination';
import { UuidParam } from '../common/uuid-param';
import {
  ListReactorFormulasQueryDto,
  ReactorFormulaBodyDto,
  ReactorFormulaDto,
  ReactorFormulaPageDto,
} from './dto/reactor-formula.dto';
import { ReactorFormulasService } from './reactor-formulas.service';
import { IdempotentWrites } from '../idempotency/idempotent-writes';

const DOES_NOT_COMPILE = 'The code does not compile (message with line and column).';

@ApiTags('Reactor formulas')
@IdempotentWrites()
@Controller('reactor-formulas')
export class ReactorFormulasController {
  constructor(private readonly formulas: ReactorFormulasService) {}

  @Post()
  @RequirePermission('reactor:create')
  @ApiOperation({
    summary: 'Create a private reactor formula',
    description: 'The code must compile (422 with line and column otherwise).',
  })
  @ApiCreatedResponse({ type: ReactorFormulaDto })
  @ApiUnprocessableEntityResponse({ description: DOES_NOT_COMPILE })
  create(@CurrentPrincipal() p: Principal, @Body() dto: ReactorFormulaBodyDto): Promise<ReactorFormulaDto> {
    return this.formulas.create(p, dto);
  }

  @Get()
  @RequirePermission('reactor:read')
  @ApiOperation({ summary: 'List official formulas and the tenant’s private ones' })
  @ApiOkResponse({ type: ReactorFormulaPageDto })
  list(
    @CurrentPrincipal() p: Principal,
    @Query() query: ListReactorFormulasQueryDto,
  ): Promise<Page<ReactorFormulaDto>> {
    return this.formulas.list(p, query);
  }

  @Get(':id')
  @RequirePermission('reactor:read')
  @ApiOperation({ summary: 'Get a reactor formula' })
  @ApiOkResponse({ type: ReactorFormulaDto })
  get(@CurrentPrincipal() p: Principal, @UuidParam() id: string): Promise<ReactorFormulaDto> {
    return this.formulas.get(p, id);
  }

  @Put(':id')
  @RequirePermission('reactor:update')
  @ApiOperation({
    summary: 'Replace a private reactor formula',
    description: 'Official formulas are read-only.',
  })
  @ApiOkResponse({ type: ReactorFormulaDto })
  @ApiUnprocessableEntityResponse({ description: DOES_NOT_COMPILE })
  update(
    @CurrentPrincipal() p: Principal,
    @UuidParam() id: string,
    @Body() dto: ReactorFormulaBodyDto,
  ): Promise<ReactorFormulaDto> {
    return this.formulas.update(p, id, dto);
  }

  @Delete(':id')
  @HttpCode(204)
  @RequirePermission('reactor:delete')
  @ApiOperation({
    summary: 'Delete a private reactor formula',
    description: 'Official formulas are read-only; a formula used by reactors answers 409.',
  })
  @ApiNoContentResponse()
  @ApiConflictResponse()
  delete(@CurrentPrincipal() p: Principal, @UuidParam() id: string): Promise<void> {
    return this.formulas.delete(p, id);
  }
}
