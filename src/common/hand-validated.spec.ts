import { ArgumentMetadata, ValidationPipe } from '@nestjs/common';
import { Allow, IsObject, IsOptional, IsString } from 'class-validator';
import { ReactRequestDto } from '../reactors/dto/react.dto';
import { CreateTokenDto, UpdateTokenDto } from '../tokens/dto/token.dto';
import { ApiError } from './api-error';
import { AsSent, createValidationPipe, HandValidated } from './validation';

@HandValidated()
class Body {
  @Allow() name?: unknown;
  @Allow() tags?: unknown;
  @Allow() @AsSent() data?: unknown;
}

@HandValidated()
class WithARule {
  @Allow() name?: unknown;
  @IsString() label?: unknown;
}

/** The same class without the mark: what the full pipe makes of a body. */
class Unmarked {
  @Allow() name?: unknown;
  @Allow() tags?: unknown;
  @Allow() @AsSent() data?: unknown;
}

/** The react body's shape: its object members are taken as sent without class-validator. */
class Objects {
  @IsOptional() @IsObject() @AsSent() args?: Record<string, unknown>;
  @IsOptional() @IsObject() @AsSent() more?: Record<string, unknown>;
}

/** The same rules without AsSent: the full pipe's copy and walk. */
class Walked {
  @IsOptional() @IsObject() args?: Record<string, unknown>;
  @IsOptional() @IsObject() more?: Record<string, unknown>;
}

const pipe: ValidationPipe = createValidationPipe();
const asBody = (metatype: ArgumentMetadata['metatype']): ArgumentMetadata => ({ type: 'body', metatype });

async function outcome(metatype: ArgumentMetadata['metatype'], text: string): Promise<unknown> {
  try {
    return { ...(await pipe.transform(JSON.parse(text), asBody(metatype))) };
  } catch (err) {
    return (err as ApiError).errors;
  }
}

/** Bodies each fast path must answer as the full pipe does, with the instance or with the same errors. */
const BODIES = [
  '{"name":"n","tags":["a",1,null],"data":{"__proto__":{"x":1},"constructor":"c","deep":[{"a":1}]}}',
  '{"name":null,"data":"x"}',
  '{}',
  '{"name":"n","color":"blue","4242424242424242":1}',
  '{"name":"n","__proto__":{"polluted":true}}',
  '{"name":"n","constructor":1}',
  '{"tags":[{"a":1}],"name":{"b":[1]}}',
  '[{"name":"n"}]',
  'null',
  '"text"',
  '{"args":{}}',
  '{"args":{"card":"{{ 26818785-547b-4b28-b0fa-531377e99f4e }}","n":[1,{"a":null}]},"more":{"x":1}}',
  '{"args":[]}',
  '{"args":null}',
  '{"args":"text"}',
  '{"args":1}',
  '{"other":{}}',
  '{"args":{},"other":1}',
  '[]',
];

describe.each([
  [Body, Unmarked],
  [Objects, Walked],
])('%p bodies', (fast, full) => {
  it.each(BODIES)('give what the full pipe gives for %s', async (text) => {
    expect(await outcome(fast, text)).toEqual(await outcome(full, text));
  });
});

describe('HandValidated bodies', () => {
  it('refuses unknown members with the pipe message, naming them bounded', async () => {
    expect(await outcome(Body, '{"name":"n","color":"blue","4242424242424242":1}')).toEqual({
      color: ['is not allowed'],
      '################': ['is not allowed'],
    });
  });

  it('keep AsSent data as sent, the very object, with its __proto__ and constructor members', async () => {
    const body = JSON.parse('{"data":{"__proto__":{"x":1},"constructor":"c"},"name":"n"}') as {
      data: object;
    };
    const result = (await pipe.transform(body, asBody(Body))) as Body;
    expect(result).toBeInstanceOf(Body);
    expect(result.data).toBe(body.data);
    expect(Object.keys(body.data)).toEqual(['__proto__', 'constructor']);
  });

  it('are validated by every rule when a rule besides @Allow() sneaks into the class', async () => {
    expect(await outcome(WithARule, '{"name":"n","label":5}')).toEqual({
      label: ['label must be a string'],
    });
  });

  it('are the token create and patch bodies, which carry no rule besides @Allow()', async () => {
    const create = '{"type":"card","data":{"number":"4242424242424242"},"containers":["/pci/"],"color":1}';
    expect(await outcome(CreateTokenDto, create)).toEqual({ color: ['is not allowed'] });
    const fullPipe = jest.spyOn(ValidationPipe.prototype, 'transform');
    try {
      const accepted = await pipe.transform(
        JSON.parse('{"type":"token","data":[1]}'),
        asBody(CreateTokenDto),
      );
      expect(accepted).toBeInstanceOf(CreateTokenDto);
      expect(fullPipe).not.toHaveBeenCalled();
    } finally {
      fullPipe.mockRestore();
    }
    expect(await outcome(UpdateTokenDto, '{"id":"x"}')).toEqual({ id: ['is not allowed'] });
  });
});

describe('bodies of optional object members', () => {
  it('takes the members as sent, in an instance of the class', async () => {
    const args = JSON.parse('{"__proto__":{"x":1},"constructor":"c","deep":[{"a":1}]}') as object;
    const full = jest.spyOn(ValidationPipe.prototype, 'transform');
    try {
      for (const metatype of [Objects, ReactRequestDto]) {
        const dto = (await pipe.transform({ args }, asBody(metatype))) as { args?: unknown };
        expect(dto).toBeInstanceOf(metatype);
        expect(dto.args).toBe(args);
      }
      expect(full).not.toHaveBeenCalled();
      await pipe.transform({ args }, asBody(Walked));
      expect(full).toHaveBeenCalledTimes(1);
    } finally {
      full.mockRestore();
    }
  });

  it('still refuses what the rules refuse for the react body', async () => {
    expect(await outcome(ReactRequestDto, '{"args":[]}')).toEqual({ args: ['args must be an object'] });
    expect(await outcome(ReactRequestDto, '{"args":null}')).toEqual({ args: ['args must not be null'] });
    expect(await outcome(ReactRequestDto, '{"unknown":{}}')).toEqual({ unknown: ['is not allowed'] });
  });
});
