// The providers' stand-ins for `npm run bench:push`, in a process of their own (test/support/fakePush.ts):
// prints one JSON line {fcmUrl, expoUrl, account} and serves until killed.
import { startFakeExpo, startFakeFcm } from '../../test/support/fakePush.ts';

const fcm = await startFakeFcm();
const expo = await startFakeExpo();
// Keep memory flat over 100 000 messages: the bench counts at its side.
fcm.sent.push = () => 0;
expo.sent.push = () => 0;
process.stdout.write(JSON.stringify({ fcmUrl: fcm.url, expoUrl: expo.url, account: fcm.account }) + '\n');
process.on('SIGTERM', () => process.exit(0));
