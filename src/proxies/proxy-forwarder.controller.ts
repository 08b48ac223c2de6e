import { applyDecorators, Controller, Delete, Get, Patch, Post, Put, Req, Res } from '@nestjs/common';
import {
  ApiBody,
  ApiHeader,
  ApiOperation,
  ApiQuery,
  ApiResponse,
  ApiSecurity,
  ApiTags,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { API_KEY_SCHEME, Public } from '../access/decorators';
import { sendProxyError } from './proxy-error';
import { ProxyForwarder } from './proxy-forwarder.service';

const PATHS = ['proxy', 'proxy/*path'];

const DESCRIPTION =
  'Forwards the request to a destination, replacing `{{ <token id> }}` expressions in a JSON, ' +
  'form-urlencoded or text body with the token data (token:use on each token, at most 100 tokens). Any ' +
  'path and query after `/proxy` are appended to the destination. Route with `BT-PROXY-KEY` (or the ' +
  '`bt-proxy-key` query parameter) for a configured proxy, or `BT-PROXY-URL` for any HTTPS destination. ' +
  "The destination's status, headers and body come back untouched, with `BT-PROXY-DESTINATION-STATUS`, " +
  'sandboxed (`Content-Security-Policy: sandbox`, `nosniff`) and without headers that act on the ' +
  "vault's origin (`Set-Cookie`, CORS, security policies); " +
  'errors of the proxy itself answer `{ "proxy_error": <problem details> }`.';

/**
 * /proxy for each method the spec names. Authentication is the forwarder's (a configured proxy may not
 * need a key), and so are errors: they answer `proxy_error`, not the common body.
 */
@ApiTags('Proxy')
@Controller()
@Public()
export class ProxyForwarderController {
  constructor(private readonly forwarder: ProxyForwarder) {}

  @Get(PATHS)
  @Documented('GET')
  get(@Req() req: Request, @Res() res: Response): Promise<void> {
    return this.handle(req, res);
  }

  @Post(PATHS)
  @Documented('POST')
  @WithBody()
  post(@Req() req: Request, @Res() res: Response): Promise<void> {
    return this.handle(req, res);
  }

  @Put(PATHS)
  @Documented('PUT')
  @WithBody()
  put(@Req() req: Request, @Res() res: Response): Promise<void> {
    return this.handle(req, res);
  }

  @Patch(PATHS)
  @Documented('PATCH')
  @WithBody()
  patch(@Req() req: Request, @Res() res: Response): Promise<void> {
    return this.handle(req, res);
  }

  @Delete(PATHS)
  @Documented('DELETE')
  delete(@Req() req: Request, @Res() res: Response): Promise<void> {
    return this.handle(req, res);
  }

  private async handle(req: Request, res: Response): Promise<void> {
    try {
      await this.forwarder.forward(req, res);
    } catch (err) {
      sendProxyError(res, err);
    }
  }
}

function Documented(method: string): MethodDecorator {
  return applyDecorators(
    ApiOperation({ summary: `Proxy a ${method} request`, description: DESCRIPTION }),
    ApiSecurity(API_KEY_SCHEME),
    ApiHeader({ name: 'BT-PROXY-KEY', required: false, description: 'Key of a configured proxy.' }),
    ApiHeader({ name: 'BT-PROXY-URL', required: false, description: 'HTTPS destination base URL.' }),
    ApiQuery({ name: 'bt-proxy-key', required: false, description: 'Key of a configured proxy.' }),
    ApiResponse({ status: 200, description: "The destination's response, untouched." }),
    ProxyError(400, 'no route, a refused destination, a bad body.'),
    ProxyError(401, 'missing or invalid BT-API-KEY.'),
    ProxyError(403, 'no token:use on a referenced token.'),
    ProxyError(408, 'the destination did not answer in time.'),
    ProxyError(
      429,
      'a rate limit is reached (the caller’s application or tenant, the proxy per address, or proxy keys per address); `Retry-After`, `RateLimit` and `RateLimit-Policy` say when to retry.',
    ),
    ProxyError(502, 'the destination could not be reached.'),
  );
}

/** The proxy's own errors (spec §4.5 rule 5): `{ proxy_error: <problem details> }`, not the common body. */
function ProxyError(status: number, when: string): MethodDecorator {
  return ApiResponse({
    status,
    description: `\`proxy_error\`: ${when}`,
    schema: { $ref: '#/components/schemas/ProxyError' },
  });
}

/** Any body: JSON, form-urlencoded and text bodies are detokenized, others sent as they are. */
function WithBody(): MethodDecorator {
  return ApiBody({
    required: false,
    description: 'Sent to the destination after detokenization (JSON, form-urlencoded or text).',
    schema: {
      type: 'object',
      additionalProperties: true,
      example: { number: "{{ <card token id> | json: '$.number' }}", amount: 1000 },
    },
  });
}
