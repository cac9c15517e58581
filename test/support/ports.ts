import { createServer } from 'node:net';

/** A TCP port free at the time of the call, for a process the test starts on its own port. */
export function freePort(): Promise<number> {
  return new Promise((ok) => {
    const srv = createServer().listen(0, () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => ok(port));
    });
  });
}
