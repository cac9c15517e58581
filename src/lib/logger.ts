import { pino, type DestinationStream, type Logger } from 'pino';
import type { Config } from '../config.ts';

export type { Logger };

// Secrets never reach the log: tokens travel in these headers and fields.
const REDACT = ['req.headers.authorization', 'req.headers["x-preview-grant"]', 'req.headers.cookie', 'token', '*.token', 'grant'];

/** `destination` (default stdout) lets tests read the lines. */
export function createLogger(config: Pick<Config, 'logLevel' | 'nodeEnv'>, role: string, destination?: DestinationStream): Logger {
  const pretty = !destination && config.nodeEnv !== 'production' && process.stdout.isTTY;
  const options = {
    level: config.logLevel,
    base: { role },
    redact: { paths: REDACT, censor: '[redacted]' },
    ...(pretty ? { transport: { target: 'pino-pretty', options: { colorize: true } } } : {}),
  };
  return destination ? pino(options, destination) : pino(options);
}
