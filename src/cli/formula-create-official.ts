import { readFileSync } from 'node:fs';
import { ApiError } from '../common/api-error';
import { validatePlain } from '../common/validation';
import { AppConfig } from '../config/app-config';
import { ReactorFormulaBodyDto } from '../reactor-formulas/dto/reactor-formula.dto';
import { ReactorFormulasService } from '../reactor-formulas/reactor-formulas.service';
import { CliError, Command, out, parse, UsageError, withAppContext } from './kit';

async function createOfficialFormula(args: string[], config: AppConfig): Promise<void> {
  const { values } = parse(args, { file: { type: 'string' } });
  if (typeof values.file !== 'string' || values.file === '') {
    throw new UsageError(
      '--file is required: a JSON file with name, code, configuration and request_parameters',
    );
  }
  let body: unknown;
  try {
    body = JSON.parse(readFileSync(values.file, 'utf8'));
  } catch (err) {
    throw new CliError(`${values.file} could not be read as JSON: ${(err as Error).message}`);
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new CliError(`${values.file} must hold one JSON object`);
  }
  const created = await withAppContext(config, async (app) => {
    try {
      const dto = validatePlain(ReactorFormulaBodyDto, { ...body, type: 'official' });
      return await app.get(ReactorFormulasService).createOfficial(dto);
    } catch (err) {
      if (err instanceof ApiError) {
        throw new CliError(`${err.detail} ${JSON.stringify(err.errors ?? {})}`);
      }
      throw err;
    }
  });
  out(`Published official formula "${created.name}" (${created.id}).`);
}

export const formulaCreateOfficial: Command = {
  usage: 'formula:create-official --file <formula.json>',
  summary:
    'Publish an official reactor formula (read-only to tenants) from a JSON file in the API body shape.',
  run: createOfficialFormula,
};
