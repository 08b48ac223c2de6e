import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsObject, IsOptional, IsString, ValidateNested } from 'class-validator';
import { ApiError } from './api-error';
import { validatePlain } from './validation';

class Inner {
  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  code?: string;
}

class Body {
  @ApiPropertyOptional({ nullable: true })
  @IsOptional()
  @IsString()
  description?: string | null;

  @ApiPropertyOptional()
  @IsOptional()
  @IsObject()
  settings?: Record<string, unknown>;

  @ApiPropertyOptional({ type: Inner })
  @IsOptional()
  @ValidateNested()
  @Type(() => Inner)
  inner?: Inner;
}

function refusal(plain: Record<string, unknown>): ApiError | null {
  try {
    validatePlain(Body, plain);
    return null;
  } catch (err) {
    return err as ApiError;
  }
}

describe('null on an optional member', () => {
  it('is accepted where the member is documented nullable, and the member may be absent', () => {
    expect(validatePlain(Body, { description: null }).description).toBeNull();
    expect(validatePlain(Body, {}).settings).toBeUndefined();
    expect(refusal({ description: 'x', settings: {}, inner: { code: 'c' } })).toBeNull();
  });

  it.each([
    [{ settings: null }, 'settings'],
    [{ inner: null }, 'inner'],
    [{ inner: { code: null } }, 'inner.code'],
  ])('is refused with a 400 naming the member elsewhere: %j', (plain, path) => {
    const err = refusal(plain);
    expect(err).toBeInstanceOf(ApiError);
    expect(err?.status).toBe(400);
    expect(err?.errors).toEqual({ [path]: [`${path} must not be null`] });
  });
});
