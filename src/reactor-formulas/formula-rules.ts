import { ApiError, FieldErrors } from '../common/api-error';
import { compileErrorOf } from '../sandbox/compile-check';
import type { FormulaConfigurationItem, FormulaRequestParameter } from './reactor-formula.entity';
import type { ReactorFormulaBodyDto } from './dto/reactor-formula.dto';

/** PNG or JPEG as a base64 data URL (spec §2.2: image/png, image/jpg, image/jpeg). */
const ICON = /^data:image\/(png|jpe?g);base64,[A-Za-z0-9+/]+={0,2}$/;
const SEGMENT = /^[A-Za-z_$][\w$-]*$/;

export interface CheckedFormula {
  configuration: FormulaConfigurationItem[];
  requestParameters: FormulaRequestParameter[];
}

/**
 * The rules of a formula body the DTO cannot express: icon format, flat and unique configuration names,
 * dotted request parameter names that do not clash (`card` and `card.number`), and code that compiles
 * (422 with the compiler's line and column).
 */
export function checkFormulaBody(dto: ReactorFormulaBodyDto): CheckedFormula {
  const errors: FieldErrors = {};
  const add = (path: string, message: string): void => {
    (errors[path] ??= []).push(message);
  };
  if (dto.icon !== undefined && dto.icon !== null && !ICON.test(dto.icon)) {
    add('icon', 'must be a data URL of a PNG or JPEG image (data:image/png;base64,...)');
  }
  const configNames = new Set<string>();
  dto.configuration.forEach((item, i) => {
    if (!SEGMENT.test(item.name)) {
      add(`configuration[${i}].name`, 'must be a plain name: letters, digits, _, $ or -, and no dots');
    } else if (configNames.has(item.name)) {
      add(`configuration[${i}].name`, 'is declared twice');
    }
    configNames.add(item.name);
  });
  const paramNames = new Set<string>();
  dto.request_parameters.forEach((param, i) => {
    if (!param.name.split('.').every((segment) => SEGMENT.test(segment))) {
      add(`request_parameters[${i}].name`, 'must be a name or a dotted path of names (parent.child)');
    } else if (paramNames.has(param.name)) {
      add(`request_parameters[${i}].name`, 'is declared twice');
    }
    paramNames.add(param.name);
  });
  dto.request_parameters.forEach((param, i) => {
    const parent = [...paramNames].find((other) => other.startsWith(`${param.name}.`));
    if (parent !== undefined) {
      add(`request_parameters[${i}].name`, `cannot be a value and the parent of ${parent} at once`);
    }
  });
  if (Object.keys(errors).length > 0) {
    throw ApiError.validation(errors);
  }
  const compileError = compileErrorOf(dto.code);
  if (compileError !== null) {
    throw ApiError.unprocessable('The code does not compile.', {
      code: [`${compileError.message} (line ${compileError.line}, column ${compileError.column})`],
    });
  }
  return {
    configuration: dto.configuration.map((c) => ({
      name: c.name,
      description: c.description ?? null,
      type: c.type,
    })),
    requestParameters: dto.request_parameters.map((p) => ({
      name: p.name,
      description: p.description ?? null,
      type: p.type,
      optional: p.optional ?? false,
    })),
  };
}
