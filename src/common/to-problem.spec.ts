import { BadRequestException, NotFoundException } from '@nestjs/common';
import { QueryFailedError } from 'typeorm';
import { ExpressionError, expressionFieldError } from '../expressions';
import { ApiError } from './api-error';
import { toProblem } from './to-problem';

const SECRET = '4111111111111111';

function queryError(code: string): QueryFailedError {
  const driverError = Object.assign(new Error(`value ${SECRET} broke ${code}`), { code });
  return new QueryFailedError(`INSERT ... '${SECRET}'`, [SECRET], driverError);
}

describe('toProblem', () => {
  it('renders an ApiError as it says', () => {
    expect(toProblem(ApiError.field('data.number', 'must pass the Luhn check'))).toEqual({
      type: 'https://www.rfc-editor.org/rfc/rfc9110#status.400',
      title: 'Bad Request',
      status: 400,
      detail: 'One or more validation errors occurred.',
      errors: { 'data.number': ['must pass the Luhn check'] },
    });
    expect(toProblem(new ApiError(422, 'No.'))).toMatchObject({ status: 422, title: 'Unprocessable Entity' });
  });

  it('gives framework exceptions and body-parser errors fixed texts, never their messages', () => {
    expect(toProblem(new BadRequestException(`Unexpected token in ${SECRET}`))).toEqual(
      expect.objectContaining({ status: 400, detail: 'The request could not be read.' }),
    );
    expect(toProblem(new NotFoundException())).toMatchObject({ status: 404 });
    const parserError = Object.assign(new Error(`bad json ${SECRET}`), {
      status: 413,
      type: 'entity.too.large',
    });
    expect(toProblem(parserError)).toMatchObject({ status: 413, detail: 'The request body is too large.' });
    expect(JSON.stringify(toProblem(parserError))).not.toContain(SECRET);
  });

  it('maps database errors caused by input to 4xx and hides their text', () => {
    expect(toProblem(queryError('23505'))).toMatchObject({ status: 409 });
    expect(toProblem(queryError('22021'))).toMatchObject({ status: 400 });
    expect(toProblem(queryError('22P05'))).toMatchObject({ status: 400 });
    expect(JSON.stringify(toProblem(queryError('23505')))).not.toContain(SECRET);
  });

  it('answers 500 without echoing anything for unknown errors and non-Error values', () => {
    for (const thrown of [
      new Error(`boom ${SECRET}`),
      queryError('42P01'),
      SECRET,
      { message: SECRET },
      null,
    ]) {
      const body = toProblem(thrown);
      expect(body).toEqual({
        type: 'https://www.rfc-editor.org/rfc/rfc9110#status.500',
        title: 'Internal Server Error',
        status: 500,
        detail: 'An unexpected error occurred.',
      });
    }
  });
});

describe('expressionFieldError', () => {
  it('keeps an ExpressionError message at the given path', () => {
    const err = expressionFieldError('search_indexes[0]', new ExpressionError('unknown filter "nope"'));
    expect(err).toBeInstanceOf(ApiError);
    expect(toProblem(err).errors).toEqual({ 'search_indexes[0]': ['unknown filter "nope"'] });
  });

  it('hides any other error behind the fallback', () => {
    const err = expressionFieldError(
      'mask',
      new TypeError(`cannot read ${SECRET}`),
      'is not a valid expression',
    );
    expect(toProblem(err).errors).toEqual({ mask: ['is not a valid expression'] });
  });
});
