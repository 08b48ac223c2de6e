import { applyDecorators, Body, Controller, HttpCode, Post } from '@nestjs/common';
import {
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiForbiddenResponse,
  ApiSecurity,
  ApiUnauthorizedResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { API_KEY_SCHEME, CurrentPrincipal } from '../access/decorators';
import { Principal } from '../access/principal';
import { IdempotentWrites } from '../idempotency/idempotent-writes';
import { AuthorizeSessionDto, CreatedSessionDto } from './dto/session.dto';
import { SessionsService } from './sessions.service';

/** Any valid key passes the global guard; the service refuses the wrong kind of application (403). */
function KeyOf(who: string): MethodDecorator {
  return applyDecorators(
    ApiSecurity(API_KEY_SCHEME),
    ApiUnauthorizedResponse({ description: 'Missing or invalid BT-API-KEY.' }),
    ApiForbiddenResponse({ description: `Requires the key of ${who}.` }),
  );
}

@ApiTags('Sessions')
@IdempotentWrites()
@Controller('sessions')
export class SessionsController {
  constructor(private readonly sessions: SessionsService) {}

  @Post()
  @KeyOf('a public application')
  @ApiOperation({
    summary: 'Create a session (public application)',
    description:
      'For a page: answers a `session_key` (use it as BT-API-KEY), a `nonce` for the backend to authorize ' +
      'the session with, and `expires_at` (3 minutes). Until authorized the session key may do nothing. ' +
      "403 for a key that is not a public application's.",
  })
  @ApiCreatedResponse({ type: CreatedSessionDto })
  create(@CurrentPrincipal() p: Principal): Promise<CreatedSessionDto> {
    return this.sessions.create(p);
  }

  @Post('authorize')
  @HttpCode(204)
  @KeyOf('a private application, granting no more than it holds')
  @ApiOperation({
    summary: 'Authorize a session (private application)',
    description:
      'Grants the session `permissions` or `rules` (a rule names a `container` or `conditions` on the ' +
      "token's `id` or `container`), never more than the authorizing application holds itself (403), once " +
      '(409), optionally ending it at `expires_at` (at most 60 minutes ahead). Every use of the session ' +
      "key is audited as the session's (actor_type `session`).",
  })
  @ApiNoContentResponse({ description: 'Authorized.' })
  @ApiNotFoundResponse({ description: "No session of the caller's tenant has this nonce, or it expired." })
  @ApiConflictResponse({ description: 'The session is authorized already.' })
  authorize(@CurrentPrincipal() p: Principal, @Body() dto: AuthorizeSessionDto): Promise<void> {
    return this.sessions.authorize(p, dto);
  }
}
