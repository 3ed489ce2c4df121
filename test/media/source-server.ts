import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type Route = (request: http.IncomingMessage, response: http.ServerResponse) => void;

/** A plain HTTP server on 127.0.0.1 serving test files by path, recording every request it gets. */
export interface SourceServer {
  url: string;
  port: number;
  requests: string[];
  route(path: string, handler: Route): void;
  close(): Promise<void>;
}

export async function startSourceServer(host = '127.0.0.1'): Promise<SourceServer> {
  const routes = new Map<string, Route>();
  const requests: string[] = [];
  const server = http.createServer((request, response) => {
    requests.push(request.url ?? '');
    const handler = routes.get((request.url ?? '').split('?')[0]!);
    if (handler) handler(request, response);
    else {
      response.statusCode = 404;
      response.end('not here');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}`,
    port,
    requests,
    route: (path, handler) => routes.set(path, handler),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Answers with the bytes (Content-Length set unless chunked). */
export function file(bytes: Uint8Array, options: { type?: string; chunked?: boolean } = {}): Route {
  return (_request, response) => {
    response.setHeader('content-type', options.type ?? 'application/octet-stream');
    if (!options.chunked) response.setHeader('content-length', bytes.length);
    response.end(bytes);
  };
}

export function redirect(location: string, status = 302): Route {
  return (_request, response) => {
    response.statusCode = status;
    response.setHeader('location', location);
    response.end();
  };
}
