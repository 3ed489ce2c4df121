import { expect } from 'chai';
import {
  conflict,
  forbidden,
  internal,
  INTERNAL_ERROR_MESSAGE,
  methodNotAllowed,
  notFound,
  payloadTooLarge,
  planRequired,
  rateLimited,
  revisionConflict,
  unauthorized,
  unavailable,
  unsupportedMediaType,
  validationError,
} from '../../src/http/errors/error-factory.ts';
import { HttpError } from '../../src/http/errors/http-error.ts';
import { toHttpError } from '../../src/http/errors/to-http-error.ts';

describe('HTTP errors', () => {
  describe('factory', () => {
    const table: Array<[string, HttpError, number, string, boolean | undefined, boolean]> = [
      ['validationError', validationError('bad'), 400, 'VALIDATION_ERROR', false, true],
      ['unauthorized', unauthorized(), 401, 'UNAUTHORIZED', false, true],
      ['forbidden', forbidden(), 403, 'FORBIDDEN', false, true],
      ['planRequired', planRequired(), 403, 'PLAN_REQUIRED', false, true],
      ['notFound', notFound(), 404, 'NOT_FOUND', false, true],
      ['methodNotAllowed', methodNotAllowed(['get']), 405, 'METHOD_NOT_ALLOWED', false, true],
      ['conflict', conflict('taken'), 409, 'CONFLICT', false, true],
      ['revisionConflict', revisionConflict(), 409, 'REVISION_CONFLICT', false, true],
      ['payloadTooLarge', payloadTooLarge(10), 413, 'PAYLOAD_TOO_LARGE', false, true],
      ['unsupportedMediaType', unsupportedMediaType(), 415, 'UNSUPPORTED_MEDIA_TYPE', false, true],
      ['rateLimited', rateLimited(1), 429, 'RATE_LIMITED', true, true],
      ['unavailable', unavailable(), 503, 'SERVICE_UNAVAILABLE', true, true],
      ['internal', internal(), 500, 'INTERNAL_ERROR', undefined, false],
    ];
    for (const [name, error, status, code, retryable, expose] of table) {
      it(`${name}: ${status} ${code}, retryable ${String(retryable)}, expose ${String(expose)}`, () => {
        expect(error).to.be.instanceOf(HttpError);
        expect(error).to.be.instanceOf(Error);
        expect([error.status, error.code, error.retryable, error.expose]).to.deep.equal([status, code, retryable, expose]);
        expect(error.message).to.be.a('string').and.not.equal('');
      });
    }

    it('rateLimited: Retry-After in whole seconds, rounded up, never negative', () => {
      expect(rateLimited(0.2).headers).to.deep.equal({ 'Retry-After': '1' });
      expect(rateLimited(30).headers).to.deep.equal({ 'Retry-After': '30' });
      expect(rateLimited(-5).headers).to.deep.equal({ 'Retry-After': '0' });
      expect(() => rateLimited(Number.NaN)).to.throw(RangeError);
    });

    it('internal: generic message, the cause kept for the logs', () => {
      const cause = new Error('SQLITE_BUSY');
      const error = internal({ cause });
      expect(error.message).to.equal(INTERNAL_ERROR_MESSAGE);
      expect(error.cause).to.equal(cause);
    });

    it('methodNotAllowed sets Allow', () => {
      expect(methodNotAllowed(['get', 'head']).headers).to.deep.equal({ Allow: 'GET, HEAD' });
    });

    it('HttpError refuses a non-error status', () => {
      expect(() => new HttpError({ status: 200, code: 'OK', message: 'ok' })).to.throw(RangeError);
    });
  });

  describe('toHttpError', () => {
    it('returns an HttpError as is', () => {
      const error = notFound();
      expect(toHttpError(error)).to.equal(error);
    });

    it("maps raw-body's entity.too.large to 413 with the limit", () => {
      const error = Object.assign(new Error('request entity too large'), {
        status: 413,
        expose: true,
        type: 'entity.too.large',
        limit: 2048,
      });
      const mapped = toHttpError(error);
      expect([mapped.status, mapped.code, mapped.message]).to.deep.equal([
        413,
        'PAYLOAD_TOO_LARGE',
        'The request body exceeds the limit of 2048 bytes.',
      ]);
    });

    it("maps co-body's JSON SyntaxError to 400 VALIDATION_ERROR without echoing the body", () => {
      const error = Object.assign(new SyntaxError('Unexpected end of JSON input'), { status: 400, body: '{"password":"x' });
      const mapped = toHttpError(error);
      expect([mapped.status, mapped.code]).to.deep.equal([400, 'VALIDATION_ERROR']);
      expect(`${mapped.message} ${mapped.hint}`).not.to.include('password');
    });

    it('maps http-errors by status, hiding 5xx messages', () => {
      const gone = toHttpError(Object.assign(new Error('gone'), { status: 410, expose: true }));
      expect([gone.status, gone.code, gone.message, gone.expose]).to.deep.equal([410, 'GONE', 'gone', true]);
      const bad = toHttpError(Object.assign(new Error('upstream 10.0.0.7 down'), { status: 502, expose: false }));
      expect([bad.status, bad.code, bad.expose]).to.deep.equal([502, 'BAD_GATEWAY', false]);
    });

    it('treats a foreign error with a status but no expose flag (an upstream response) as internal', () => {
      const upstream = Object.assign(new Error('receiver answered 404'), { status: 404 });
      const mapped = toHttpError(upstream);
      expect([mapped.status, mapped.code]).to.deep.equal([500, 'INTERNAL_ERROR']);
      expect(mapped.cause).to.equal(upstream);
    });

    it('maps anything else to 500 INTERNAL_ERROR with the original as cause', () => {
      const mapped = toHttpError(new RangeError('boom'));
      expect([mapped.status, mapped.code, mapped.message]).to.deep.equal([500, 'INTERNAL_ERROR', INTERNAL_ERROR_MESSAGE]);
      expect(toHttpError('thrown string').code).to.equal('INTERNAL_ERROR');
    });
  });
});
