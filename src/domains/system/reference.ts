import { defineRoute } from '../../http/route.ts';
import { ErrorBody, Type } from '../../http/schema.ts';
import { asset, assetTable, packageFile, sendAsset } from '../../http/static.ts';

// The API reference at /docs: Swagger UI (swagger-ui-dist, no dependencies of its own) rendering
// /openapi.json, every file served from the installed package so the page works offline.

const PAGE = asset(
  `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Waveline API reference</title>
<link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
<div id="reference"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/reference.js"></script>
</body>
</html>
`,
  'text/html; charset=utf-8',
);

// An external script rather than an inline one, so the page needs no 'unsafe-inline'.
const INIT = asset(
  `window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#reference', deepLinking: true, persistAuthorization: true, displayOperationId: true, tryItOutEnabled: false });\n`,
  'text/javascript; charset=utf-8',
);

const files = assetTable({
  'swagger-ui.css': packageFile('swagger-ui-dist', 'swagger-ui.css'),
  'swagger-ui-bundle.js': packageFile('swagger-ui-dist', 'swagger-ui-bundle.js'),
  'favicon-32x32.png': packageFile('swagger-ui-dist', 'favicon-32x32.png'),
});

const DocsAssetParams = Type.Object({ file: Type.String({ maxLength: 100, description: 'file name' }) }, { additionalProperties: false });

export const referenceRoutes = [
  defineRoute({
    method: 'get',
    path: '/docs',
    operationId: 'apiReference',
    summary: 'The API reference page (HTML) rendering this document',
    tags: ['system'],
    surface: 'system',
    responses: { 200: { description: 'An HTML page (Swagger UI) that reads /openapi.json.', contentType: 'text/html' } },
    handler({ ctx }) {
      sendAsset(ctx, PAGE, 'public, max-age=60');
    },
  }),
  defineRoute({
    method: 'get',
    path: '/docs/assets/{file}',
    operationId: 'apiReferenceAsset',
    summary: 'A script, style sheet or icon of the API reference page',
    tags: ['system'],
    surface: 'system',
    params: DocsAssetParams,
    responses: {
      200: { description: 'The file (JavaScript, CSS or PNG), revalidated with its ETag.', contentType: 'application/octet-stream' },
      304: { description: 'Not modified.' },
      404: { description: 'No such file.', schema: ErrorBody },
    },
    handler({ ctx, params }) {
      sendAsset(ctx, params.file === 'reference.js' ? INIT : files(params.file), 'public, max-age=3600');
    },
  }),
];
