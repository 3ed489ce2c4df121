/**
 * Refusals of the upload pipeline, apart from HTTP (the admin API and the MCP tools map them): a file over
 * the size limit, and a file or source the service cannot take (empty, unreadable, a source URL that is
 * refused or fails). Messages are shown to callers: they name the field and the reason, never a secret.
 */
export class MediaTooLargeError extends Error {
  override name = 'MediaTooLargeError';
  constructor(readonly limitBytes: number) {
    super(`The file exceeds the media size limit of ${limitBytes} bytes.`);
  }
}

export class MediaRejectedError extends Error {
  override name = 'MediaRejectedError';
  constructor(
    message: string,
    readonly hint?: string,
  ) {
    super(message);
  }
}
