// The npm registry this project installs from has no builds of msgpackr-extract (BullMQ's optional
// native msgpack) for other platforms, so `npm install` leaves them out of package-lock.json and a later
// `npm ci` refuses the lock as incomplete. This adds the entries back as optional, platform-bound
// packages (npm skips them on other platforms without fetching). Run after changing dependencies:
// `npm run lock:complete`.
import { readFileSync, writeFileSync } from 'node:fs';

const file = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(file, 'utf8'));
const parent = lock.packages['node_modules/msgpackr-extract'];
const platforms: Record<string, [string, string]> = {
  'darwin-arm64': ['darwin', 'arm64'],
  'darwin-x64': ['darwin', 'x64'],
  'linux-arm': ['linux', 'arm'],
  'linux-arm64': ['linux', 'arm64'],
  'linux-x64': ['linux', 'x64'],
  'win32-x64': ['win32', 'x64'],
};
let added = 0;
if (parent) {
  for (const [name, [os, cpu]] of Object.entries(platforms)) {
    const key = `node_modules/@msgpackr-extract/msgpackr-extract-${name}`;
    if (lock.packages[key]) continue;
    lock.packages[key] = { version: parent.version, cpu: [cpu], license: 'MIT', optional: true, os: [os] };
    added++;
  }
}
lock.packages = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : 1)));
writeFileSync(file, JSON.stringify(lock, null, 2) + '\n');
console.log(`package-lock.json: ${added} platform entries added`);
