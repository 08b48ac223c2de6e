import { Body, Controller, Get, HttpCode, Post, Query, Req, Res, UseGuards } from '@nestjs/common';
import { ApiExcludeEndpoint, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Public } from '../../access/decorators';
import { ApiError } from '../../common/api-error';
import { AcceptInvitationDto, AcceptedInvitationDto } from './dto/invitation.dto';
import { ACCEPT_PAGE_CSP, acceptedPage, acceptForm, problemPage } from './accept-page';
import { AcceptRateLimit } from './accept-rate-limit';
import { InvitationsService } from './invitations.service';
import { IdempotentWrites } from '../../idempotency/idempotent-writes';

/** The public side of an invitation: the page behind the e-mailed link, and accepting it. */
@ApiTags('Members and invitations')
@Public()
@UseGuards(AcceptRateLimit)
@IdempotentWrites()
@Controller('invitations/accept')
export class AcceptController {
  constructor(private readonly invitations: InvitationsService) {}

  @Get()
  @ApiExcludeEndpoint()
  async page(@Query('token') token: unknown, @Res() res: Response): Promise<void> {
    res.setHeader('Content-Security-Policy', ACCEPT_PAGE_CSP);
    res.setHeader('Referrer-Policy', 'no-referrer');
    res.setHeader('Cache-Control', 'no-store');
    const secret = typeof token === 'string' ? token : '';
    const view = secret === '' ? null : await this.invitations.view(secret);
    if (view === null || !view.ok) {
      res
        .status(view?.status ?? 400)
        .type('html')
        .send(problemPage('This link does not work', view?.message ?? 'The link has no invitation token.'));
      return;
    }
    res.status(200).type('html').send(acceptForm(view, secret));
  }

  @Post()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Accept an invitation',
    description:
      'Public. Creates (or reuses) the user and makes them an ADMIN member; the invitation is consumed. ' +
      'A used, withdrawn or replaced link answers 404, an expired one 410. Rate limited per IP (429).',
  })
  @ApiOkResponse({ type: AcceptedInvitationDto })
  async accept(@Body() dto: AcceptInvitationDto, @Req() req: Request, @Res() res: Response): Promise<void> {
    const fromPage = (req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded');
    try {
      const accepted = await this.invitations.accept(dto.token, dto.first_name, dto.last_name);
      if (!fromPage) {
        res.status(200).json(accepted);
        return;
      }
      const tenant = await this.invitations.tenantNameOf(accepted.member.tenant_id);
      res.setHeader('Content-Security-Policy', ACCEPT_PAGE_CSP);
      res.status(200).type('html').send(acceptedPage(tenant));
    } catch (err) {
      if (!fromPage || !(err instanceof ApiError)) {
        throw err;
      }
      res.setHeader('Content-Security-Policy', ACCEPT_PAGE_CSP);
      res
        .status(err.status)
        .type('html')
        .send(problemPage('The invitation could not be accepted', err.detail));
    }
  }
}
