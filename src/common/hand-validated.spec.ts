import { ArgumentMetadata, ValidationPipe } from '@nestjs/common';
import { Allow, IsString } from 'class-validator';
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

const pipe: ValidationPipe = createValidationPipe();
const asBody = (metatype: ArgumentMetadata['metatype']): ArgumentMetadata => ({ type: 'body', metatype });

async function outcome(metatype: ArgumentMetadata['metatype'], text: string): Promise<unknown> {
  try {
    return { ...(await pipe.transform(JSON.parse(text), asBody(metatype))) };
  } catch (err) {
    return (err as ApiError).errors;
  }
}

describe('HandValidated bodies', () => {
  it.each([
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
  ])('give what the full pipe gives for %s', async (text) => {
    expect(await outcome(Body, text)).toEqual(await outcome(Unmarked, text));
  });

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
