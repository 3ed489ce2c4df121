/** The generated files of src/generated/, by file name, from the admin and public documents as served. */
export function generatedFiles(adminDocument: unknown, publicDocument: unknown): Promise<Record<string, string>>;
