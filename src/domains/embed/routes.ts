import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import type { Context } from 'koa';
import { defineRoute } from '../../http/route.ts';
import { ErrorBody, Type } from '../../http/schema.ts';
import { asset, sendAsset, type Asset } from '../../http/static.ts';
import type { Services } from '../../services.ts';

// The live now-playing widget (docs/embed.md) and a page showing it for the demo station. The script is
// read once and filled in with the gateway's public URL; its gzip form is made then too, so a request
// costs a header comparison.

const SOURCE = readFileSync(new URL('./now-playing.js', import.meta.url), 'utf8');
export const DEMO_STATION_ID = 'st_demo';
const STATION_ID_PATTERN = '^st_[a-z0-9_]{1,64}$';

interface Widget {
  plain: Asset;
  gzip: Buffer;
}

const widgets = new WeakMap<Services, Widget>();

/** The widget as served by this process (its feed URL is the configured REALTIME_PUBLIC_URL). */
export function widgetScript(svc: Services): Widget {
  let widget = widgets.get(svc);
  if (!widget) {
    const plain = asset(
      SOURCE.replace("'__WAVELINE_FEED__'", JSON.stringify(svc.config.realtimePublicUrl)),
      'text/javascript; charset=utf-8',
    );
    widget = { plain, gzip: gzipSync(plain.bytes, { level: 9 }) };
    widgets.set(svc, widget);
  }
  return widget;
}

function sendWidget(ctx: Context, widget: Widget): void {
  sendAsset(ctx, widget.plain, 'public, max-age=300, stale-while-revalidate=86400');
  ctx.vary('Accept-Encoding');
  ctx.set('Cross-Origin-Resource-Policy', 'cross-origin');
  if (ctx.status === 200 && ctx.acceptsEncodings('gzip', 'identity') === 'gzip') {
    ctx.body = widget.gzip;
    ctx.set('Content-Encoding', 'gzip');
  }
}

const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function demoPage(stationId: string): Asset {
  const station = escapeHtml(stationId);
  return asset(
    `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Waveline · now-playing widget demo</title>
<link rel="icon" href="data:,">
<style>
  body { font-family: system-ui, sans-serif; max-width: 44rem; margin: 2rem auto; padding: 0 1rem; color: #1d1d1f; }
  code, pre { font-family: ui-monospace, monospace; font-size: .875rem; }
  pre { background: #f4f4f6; padding: .75rem; overflow-x: auto; border-radius: .375rem; }
  .dark { background: #14141c; padding: 1rem; border-radius: .75rem; margin-top: 1rem; }
  .dark waveline-now-playing { --waveline-fg: #f5f5f7; --waveline-muted: #b7b7c7; --waveline-bg: #23233a; --waveline-border: none; --waveline-art-size: 5rem; }
  waveline-now-playing::part(title) { color: var(--title-color, inherit); }
</style>
</head>
<body>
<main>
<h1>Now playing on station <code>${station}</code></h1>
<p>This box updates live from the public realtime feed (no credential). Include it on any page:</p>
<pre>&lt;script src="/embed/now-playing.js" data-station="${station}"&gt;&lt;/script&gt;</pre>
<script src="/embed/now-playing.js" data-station="${station}" data-label="Now playing on ${station}"></script>
<p>Styled with CSS custom properties and <code>::part()</code>:</p>
<div class="dark"><waveline-now-playing station="${station}" label="Now playing (dark)"></waveline-now-playing></div>
<p><a href="/docs">API reference</a></p>
</main>
</body>
</html>
`,
    'text/html; charset=utf-8',
  );
}

const pages = new Map<string, Asset>();

const DemoQuery = Type.Object(
  {
    station: Type.Optional(
      Type.String({ pattern: STATION_ID_PATTERN, description: `station id (default ${DEMO_STATION_ID}, the demo station)` }),
    ),
  },
  { additionalProperties: false },
);

export const embedRoutes = [
  defineRoute({
    method: 'get',
    path: '/embed/now-playing.js',
    operationId: 'nowPlayingWidget',
    summary: 'The live now-playing widget (JavaScript, no credential)',
    description:
      'A custom element `waveline-now-playing` (attribute `station`; or a script tag with `data-station`) that shows the current track, the programme on air and its presenters from the public realtime feed. Revalidated with its ETag; gzip when accepted. docs/embed.md.',
    tags: ['system'],
    surface: 'system',
    responses: {
      200: { description: 'The script.', contentType: 'text/javascript' },
      304: { description: 'Not modified.' },
    },
    handler({ ctx, svc }) {
      sendWidget(ctx, widgetScript(svc));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/demo',
    operationId: 'widgetDemo',
    summary: 'A page showing the now-playing widget for the demo station',
    description: '`?station=st_…` shows it for another station.',
    tags: ['system'],
    surface: 'system',
    query: DemoQuery,
    responses: {
      200: { description: 'An HTML page.', contentType: 'text/html' },
      400: { description: 'A malformed station id.', schema: ErrorBody },
    },
    handler({ ctx, query }) {
      const stationId = query.station ?? DEMO_STATION_ID;
      let page = pages.get(stationId);
      if (!page) {
        page = demoPage(stationId);
        if (pages.size < 100) pages.set(stationId, page);
      }
      sendAsset(ctx, page, 'no-cache');
    },
  }),
];
