import type { Config } from '../config.ts';
import { adminCall, takeKey } from './admin.ts';

const USAGE = `usage: waveline artwork <pin|unpin|pins|block|unblock|blocks|recent> <stationId> …

Track art an operator fixes (docs/now-playing.md, "Artwork you can trust"), through the admin API (scope artwork:write):

  waveline artwork pin <stationId> <pinId> --artist "Daft Punk" [--title "One More Time"] (--version <versionId> | --url <url> | --none)
  waveline artwork unpin <stationId> <pinId>
  waveline artwork pins <stationId> [<pinId>]
  waveline artwork block <stationId> (--url <url> | --version <versionId>)
  waveline artwork unblock <stationId> <blockId>
  waveline artwork blocks <stationId>
  waveline artwork recent <stationId> [--limit 50]   (what listeners saw, and why a source was refused)
`;

function option(args: string[], name: string): string | undefined {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
}

function usage(): never {
  process.stderr.write(USAGE);
  process.exit(64);
}

/** `waveline artwork …`: the artwork calls of the admin API, spelled for the shell. */
export async function run(config: Readonly<Config>): Promise<void> {
  const args = process.argv.slice(3);
  const key = takeKey(args);
  const [command, stationId, id] = args;
  if (!command || !stationId) usage();
  const base = `/stations/${encodeURIComponent(stationId)}/artwork`;
  const versionId = option(args, '--version');
  const url = option(args, '--url');
  switch (command) {
    case 'pin': {
      const artist = option(args, '--artist');
      if (!id || !artist || [versionId, url, args.includes('--none') || undefined].filter(Boolean).length !== 1) usage();
      const title = option(args, '--title');
      const image = versionId ? { versionId } : url ? { url } : null;
      const body = { match: { artist, ...(title ? { title } : {}) }, image };
      return adminCall(config, { method: 'PUT', path: `${base}/pins/${encodeURIComponent(id)}`, payload: JSON.stringify(body), key });
    }
    case 'unpin':
      if (!id) usage();
      return adminCall(config, { method: 'DELETE', path: `${base}/pins/${encodeURIComponent(id)}`, key });
    case 'pins':
      return adminCall(config, { method: 'GET', path: id ? `${base}/pins/${encodeURIComponent(id)}` : `${base}/pins`, key });
    case 'block': {
      if (!versionId === !url) usage();
      return adminCall(config, { method: 'POST', path: `${base}/blocks`, payload: JSON.stringify(url ? { url } : { versionId }), key });
    }
    case 'unblock':
      if (!id) usage();
      return adminCall(config, { method: 'DELETE', path: `${base}/blocks/${encodeURIComponent(id)}`, key });
    case 'blocks':
      return adminCall(config, { method: 'GET', path: `${base}/blocks`, key });
    case 'recent': {
      const limit = option(args, '--limit');
      return adminCall(config, { method: 'GET', path: `${base}/recent${limit ? `?limit=${encodeURIComponent(limit)}` : ''}`, key });
    }
    default:
      usage();
  }
}
