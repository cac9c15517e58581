import type { Knex } from 'knex';
import type { Db } from '../../lib/db.ts';
import type { Services } from '../../services.ts';

// The station's stream positions (docs/inbox.md, "The studio stream"): every new or changed message takes
// the station's next position in its own transaction. The position's row stays locked until that
// transaction commits, so positions become visible in the order they were given: a stream that has read
// up to position n never meets a smaller one later, and resuming "after n" misses nothing.

/** A CTE (`next_position`) taking the station's next position; its one binding is the station id. */
export const NEXT_POSITION_CTE = `next_position AS (
  INSERT INTO inbox_positions (station_id, seq) VALUES (?, 1)
  ON CONFLICT (station_id) DO UPDATE SET seq = inbox_positions.seq + 1
  RETURNING seq
)`;

/** The station's last given position (0 before its first message). */
export async function currentPosition(db: Db | Knex.Transaction, stationId: string): Promise<number> {
  const row = await db('inbox_positions').where({ station_id: stationId }).first<{ seq: string } | undefined>('seq');
  return row ? Number(row.seq) : 0;
}

/** After a commit that gave positions: every process's streams of the station read what is new. */
export function announce(svc: Pick<Services, 'invalidation'>, stationId: string): void {
  void svc.invalidation.invalidate('inbox', stationId);
}
