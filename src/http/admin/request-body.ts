const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A path id that is not a UUID names nothing: 404, like an unknown one. */
export function isUuid(value: string | undefined): value is string {
  return value !== undefined && UUID.test(value);
}
