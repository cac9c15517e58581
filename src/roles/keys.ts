import type { Config } from '../config.ts';
import { adminCall, takeKey } from './admin.ts';

const USAGE = `usage: waveline keys <create|list|get|rotate|delete> …

Operator keys (docs/operations.md, "Operator keys"), through the admin API with the root key
(WAVELINE_ADMIN_TOKEN; operator keys cannot manage keys):

  waveline keys create --label "Newsroom CMS" --stations st_a,st_b --scopes content:write,schedule:write [--expires-at 2027-06-01T00:00:00Z]
  waveline keys create --label "Network audit" --stations '*' --scopes audit:read
  waveline keys list
  waveline keys get <id>
  waveline keys rotate <id>      (prints the new key; the old one stops at once)
  waveline keys delete <id>      (the key stops at once)

Scopes: stations:write credentials:write content:write schedule:write feeds:write push:credentials
push:send webhooks:write plays:read audit:read artwork:write. The key is printed once: store it then.
`;

function option(args: string[], name: string): string | undefined {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
}

const list = (value: string | undefined): string[] =>
  (value ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);

function usage(): never {
  process.stderr.write(USAGE);
  process.exit(64);
}

/** `waveline keys …`: the operator-key calls of the admin API, spelled for the shell. */
export async function run(config: Readonly<Config>): Promise<void> {
  const args = process.argv.slice(3);
  const key = takeKey(args);
  const [command, id] = args;
  switch (command) {
    case 'create': {
      const label = option(args, '--label');
      const stations = option(args, '--stations');
      if (!label || !stations) usage();
      const expiresAt = option(args, '--expires-at');
      const body = {
        label,
        stations: stations === '*' ? '*' : list(stations),
        scopes: list(option(args, '--scopes')),
        ...(expiresAt ? { expiresAt } : {}),
      };
      return adminCall(config, { method: 'POST', path: '/operator-keys', payload: JSON.stringify(body), key });
    }
    case 'list':
      return adminCall(config, { method: 'GET', path: '/operator-keys', key });
    case 'get':
    case 'rotate':
    case 'delete':
      if (!id) usage();
      return adminCall(config, {
        method: command === 'get' ? 'GET' : command === 'rotate' ? 'POST' : 'DELETE',
        path: `/operator-keys/${encodeURIComponent(id)}${command === 'rotate' ? '/rotate' : ''}`,
        key,
      });
    default:
      usage();
  }
}
