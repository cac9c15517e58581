import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { startGateway } from '../../src/gateway/server.ts';
import { processStats, serve } from './proc.ts';

// The Waveline gateway under test, alone in its process so its CPU and memory can be read.
const config = loadConfig();
const gateway = await startGateway(config, createLogger(config, 'bench-gateway'), 0);
serve((message) => {
  if (message.type === 'port') return gateway.port;
  if (message.type === 'stats') return { ...processStats(message.collect === true), queries: gateway.queries() };
  return null;
});
process.once('SIGTERM', () => void gateway.close().then(() => process.exit(0)));
