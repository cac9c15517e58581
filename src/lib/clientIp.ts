// The client's address behind trusted proxies, one rule for web (Koa's `ctx.ip`, `maxIpsCount`) and the
// gateway: the X-Forwarded-For entry the nearest trusted proxy wrote, counted from the right.

/** The X-Forwarded-For entry of the client, or null to use the socket's address (no trusted proxy, no header). */
export function forwardedClient(forwardedFor: string | undefined, trustedProxyHops: number): string | null {
  if (trustedProxyHops <= 0 || !forwardedFor) return null;
  const hops = forwardedFor.split(',');
  return hops[Math.max(0, hops.length - trustedProxyHops)].trim() || null;
}
