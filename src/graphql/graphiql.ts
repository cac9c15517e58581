import type { Context } from 'koa';
import { defineRoute } from '../http/route.ts';
import { ErrorBody, Type } from '../http/schema.ts';
import { asset, assetTable, packageFile, sendAsset } from '../http/static.ts';

// GraphiQL for a browser that opens the GraphQL endpoint (GET with Accept: text/html). GraphiQL 3's UMD
// build and React 18's UMD builds are served from the installed packages (no CDN, works offline); the
// credential the user types is sent as `Authorization: Bearer …` on every request, kept in the page only.

const PAGE = asset(
  `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>GraphiQL · Waveline</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/graphiql/assets/graphiql.min.css">
<link rel="stylesheet" href="/graphiql/assets/page.css">
</head>
<body>
<form class="waveline-credential" autocomplete="off">
  <label for="waveline-token">Station credential</label>
  <input id="waveline-token" name="token" type="password" placeholder="wvl_…" spellcheck="false">
  <button type="submit">Use</button>
  <span>sent as <code>Authorization: Bearer …</code> with each request; never stored</span>
</form>
<div id="graphiql" role="main">Loading GraphiQL…</div>
<script src="/graphiql/assets/react.production.min.js"></script>
<script src="/graphiql/assets/react-dom.production.min.js"></script>
<script src="/graphiql/assets/graphiql.min.js"></script>
<script src="/graphiql/assets/page.js"></script>
</body>
</html>
`,
  'text/html; charset=utf-8',
);

const PAGE_CSS = asset(
  `html, body { height: 100%; margin: 0; }
body { display: flex; flex-direction: column; font-family: system-ui, sans-serif; }
.waveline-credential { display: flex; gap: .5rem; align-items: center; padding: .5rem .75rem; border-bottom: 1px solid #ddd; font-size: .875rem; }
.waveline-credential input { flex: 0 1 28rem; font: inherit; padding: .25rem .5rem; }
.waveline-credential span { color: #666; }
#graphiql { flex: 1; min-height: 0; }
`,
  'text/css; charset=utf-8',
);

const PAGE_JS = asset(
  `(function () {
  var form = document.querySelector('.waveline-credential');
  var input = document.getElementById('waveline-token');
  var params = new URLSearchParams(location.search);
  var root = ReactDOM.createRoot(document.getElementById('graphiql'));
  var generation = 0;
  var fetcher = GraphiQL.createFetcher({
    url: location.origin + location.pathname,
    fetch: function (url, init) {
      init = init || {};
      var headers = new Headers(init.headers);
      var token = input.value.trim();
      if (!token && !headers.has('Authorization')) {
        // Nothing to ask the server yet: every request needs a credential.
        return Promise.resolve(new Response(JSON.stringify({ errors: [{ message: 'Enter a station credential (scope listener:read) in the field above, then press Use.' }] }), { headers: { 'Content-Type': 'application/json' } }));
      }
      if (token && !headers.has('Authorization')) headers.set('Authorization', 'Bearer ' + token);
      return fetch(url, Object.assign({}, init, { headers: headers }));
    },
  });
  function render() {
    // A new key after the credential changes makes GraphiQL load the schema again with it.
    root.render(React.createElement(GraphiQL, {
      key: 'g' + generation,
      fetcher: fetcher,
      defaultQuery: '{\\n  station { name timezone }\\n  nowPlaying { track { artist title } freshness { status } }\\n}\\n',
      query: params.get('query') || undefined,
      variables: params.get('variables') || undefined,
      shouldPersistHeaders: false,
    }));
  }
  form.addEventListener('submit', function (event) { event.preventDefault(); generation++; render(); });
  render();
})();
`,
  'text/javascript; charset=utf-8',
);

const files = assetTable({
  'graphiql.min.css': packageFile('graphiql', 'graphiql.min.css'),
  'graphiql.min.js': packageFile('graphiql', 'graphiql.min.js'),
  'react.production.min.js': packageFile('react', 'umd/react.production.min.js'),
  'react-dom.production.min.js': packageFile('react-dom', 'umd/react-dom.production.min.js'),
});
const own: Record<string, typeof PAGE> = { 'page.css': PAGE_CSS, 'page.js': PAGE_JS };

/** The GraphiQL page (the GraphQL GET route's `page`). */
export function graphiqlPage(ctx: Context): void {
  sendAsset(ctx, PAGE, 'no-cache');
  ctx.vary('Accept');
}

const AssetParams = Type.Object({ file: Type.String({ maxLength: 100, description: 'file name' }) }, { additionalProperties: false });

export const graphiqlAssetRoutes = [
  defineRoute({
    method: 'get',
    path: '/graphiql/assets/{file}',
    operationId: 'graphiqlAsset',
    summary: 'A script or style sheet of the GraphiQL page',
    description: 'GraphiQL, React and the page’s own script, from the installed packages. Revalidated with the ETag.',
    tags: ['graphql'],
    surface: 'system',
    params: AssetParams,
    responses: {
      200: { description: 'The file (JavaScript or CSS).', contentType: 'application/octet-stream' },
      304: { description: 'Not modified.' },
      404: { description: 'No such file.', schema: ErrorBody },
    },
    handler({ ctx, params }) {
      sendAsset(ctx, Object.hasOwn(own, params.file) ? own[params.file] : files(params.file), 'public, max-age=3600');
    },
  }),
];
