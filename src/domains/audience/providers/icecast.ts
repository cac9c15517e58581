import { CountUnavailable } from './http.ts';

// Icecast's `/status-json.xsl` (Icecast 2.4+): `{icestats: {source: {...} | [{...}, ...]}}`. `source` is
// one object when one mount is live, an array when several are, and absent when none is. Each source's
// `listenurl` is the public URL of its mount (`http://host:port/mount`); `listeners` is the count now.

export function icecastListeners(doc: unknown, mount: string): number {
  const icestats = (doc as { icestats?: unknown } | null)?.icestats;
  if (!icestats || typeof icestats !== 'object')
    throw new CountUnavailable('the answer has no icestats object: not an Icecast status document');
  const raw = (icestats as { source?: unknown }).source;
  const sources = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  const wanted = mount.startsWith('/') ? mount : `/${mount}`;
  const entry = sources.find((s) => {
    const url = (s as { listenurl?: unknown } | null)?.listenurl;
    if (typeof url !== 'string') return false;
    let path: string;
    try {
      path = new URL(url).pathname;
    } catch {
      path = url;
    }
    return path.endsWith(wanted);
  }) as { listeners?: unknown } | undefined;
  if (!entry) throw new CountUnavailable(`no source on mount ${wanted} (the mount is down or misnamed)`);
  const n = entry.listeners;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) throw new CountUnavailable(`mount ${wanted} has no listener count`);
  return n;
}
