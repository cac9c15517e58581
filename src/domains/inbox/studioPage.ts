import { fileURLToPath } from 'node:url';
import type { Context } from 'koa';
import { defineRoute } from '../../http/route.ts';
import { ErrorBody, Type } from '../../http/schema.ts';
import { assetTable, sendAsset } from '../../http/static.ts';

// The studio page (docs/inbox.md, "The studio page"): a page presenters keep open on the desk, served
// with its script and style sheet from this server (no CDN, no external font). It needs no key to load:
// the operator key is pasted into the page, kept in the tab's sessionStorage and sent as
// `Authorization: Bearer` on its calls to the studio API; it never appears in a URL. The page's
// Content-Security-Policy allows this server alone, and no inline script or style.

const here = (file: string): string => fileURLToPath(new URL(`./studio-page/${file}`, import.meta.url));

const files = assetTable({
  'inbox.html': here('inbox.html'),
  'inbox.js': here('inbox.js'),
  'inbox.css': here('inbox.css'),
});

export const STUDIO_PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

function guarded(ctx: Context): void {
  ctx.set('Content-Security-Policy', STUDIO_PAGE_CSP);
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('Cross-Origin-Opener-Policy', 'same-origin');
  ctx.set('Cross-Origin-Resource-Policy', 'same-origin');
}

const PageQuery = Type.Object(
  {
    station: Type.Optional(
      Type.String({
        pattern: '^[A-Za-z0-9_-]{1,80}$',
        description: 'the station whose inbox the page opens (the key is pasted in the page)',
      }),
    ),
  },
  { additionalProperties: false },
);

const AssetParams = Type.Object({ file: Type.String({ maxLength: 100, description: 'file name' }) }, { additionalProperties: false });
const PAGE_ASSETS = new Set(['inbox.js', 'inbox.css']);

export const studioPageRoutes = [
  defineRoute({
    method: 'get',
    path: '/admin/studio/inbox',
    operationId: 'studioInboxPage',
    summary: 'The studio page (HTML): the inbox live, with buttons to show, answer, hide and ban',
    description:
      'Needs no key to load: the operator key (scopes `inbox:read` and `inbox:write`) is pasted into the page, kept in the tab’s sessionStorage and sent as `Authorization: Bearer`. `?station=st_…` opens that station. docs/inbox.md, "The studio page".',
    tags: ['inbox'],
    surface: 'system',
    query: PageQuery,
    responses: {
      200: { description: 'An HTML page (its script and style sheet from this server only).', contentType: 'text/html' },
      304: { description: 'Not modified.' },
      400: { description: 'A malformed station id, or another parameter (a key never goes in the URL).', schema: ErrorBody },
    },
    handler({ ctx }) {
      guarded(ctx);
      sendAsset(ctx, files('inbox.html'), 'no-cache');
    },
  }),
  defineRoute({
    method: 'get',
    path: '/admin/studio/assets/{file}',
    operationId: 'studioPageAsset',
    summary: 'The script or style sheet of the studio page',
    tags: ['inbox'],
    surface: 'system',
    params: AssetParams,
    responses: {
      200: { description: 'The file (JavaScript or CSS), revalidated with its ETag.', contentType: 'application/octet-stream' },
      304: { description: 'Not modified.' },
      404: { description: 'No such file.', schema: ErrorBody },
    },
    handler({ ctx, params }) {
      guarded(ctx);
      sendAsset(ctx, files(PAGE_ASSETS.has(params.file) ? params.file : '-'), 'no-cache');
    },
  }),
];
