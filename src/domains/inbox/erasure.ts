import { inTransaction } from '../../lib/db.ts';
import type { Services } from '../../services.ts';
import { clientIdentity } from './identity.ts';
import { eraseVotes } from './votes.ts';

// Erasure (docs/inbox.md, "Erasure"): every message and vote of a client goes, and the plays' counts
// drop its votes. The listener names itself by its clientId; the studio by the pseudonym it sees. Bans
// stay: they hold only HMACs, and an erased sender is still banned.

type ErasureServices = Pick<Services, 'db' | 'config'>;

/** Deletes what one client (by its HMAC) left at the station, in one transaction. */
async function eraseClient(svc: ErasureServices, stationId: string, clientHashes: string[]): Promise<void> {
  if (clientHashes.length === 0) return;
  await inTransaction(svc.db, async ({ trx }) => {
    for (const clientHash of clientHashes) {
      await eraseVotes(trx, stationId, clientHash);
      await trx('inbox_messages').where({ station_id: stationId, client_hash: clientHash }).delete();
    }
  });
}

/** The listener's own erasure, by the clientId its app keeps. */
export async function eraseByClientId(svc: ErasureServices, stationId: string, clientId: string): Promise<void> {
  await eraseClient(svc, stationId, [clientIdentity(svc.config.secret, stationId, clientId).clientHash]);
}

/** The studio's erasure, by the pseudonym it sees (every client with that pseudonym). */
export async function eraseByPseudonym(svc: ErasureServices, stationId: string, client: string): Promise<void> {
  const rows: Array<{ client_hash: string }> = await svc.db
    .select('client_hash')
    .from('inbox_messages')
    .where({ station_id: stationId, client })
    .union((q) => q.select('client_hash').from('inbox_votes').where({ station_id: stationId, client }));
  await eraseClient(
    svc,
    stationId,
    rows.map((row) => row.client_hash),
  );
}
