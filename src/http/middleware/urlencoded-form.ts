import type { Middleware } from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';

/**
 * Parses a POSTed `application/x-www-form-urlencoded` body (what an HTML form sends) into `ctx.request.body`:
 * flat names only (no `a[b]` nesting), at most 500 fields and 200 values per name, at most `limitBytes`
 * (413 beyond). Errors are thrown for the error envelope (or the caller) to answer.
 */
export function urlencodedForm(options: { limitBytes: number }): Middleware {
  return koaBody({
    json: false,
    urlencoded: true,
    text: false,
    multipart: false,
    formLimit: options.limitBytes,
    queryString: { arrayLimit: 200, depth: 0, parameterLimit: 500 },
    patchNode: false,
    patchKoa: true,
    parsedMethods: [HttpMethodEnum.POST],
  });
}
