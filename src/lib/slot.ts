// The Redis Cluster hash slot of a key or sharded channel (CRC16/XMODEM of the key, or of its hash tag —
// the part between the first `{` and the next `}` when not empty — modulo 16384), as `CLUSTER KEYSLOT`
// answers (test/scale/redis/names.scale.ts checks it against the server).

const TABLE = new Uint16Array(256);
for (let i = 0; i < 256; i++) {
  let crc = i << 8;
  for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  TABLE[i] = crc;
}

export const SLOTS = 16384;

export function keySlot(key: string): number {
  let hashed = key;
  const open = key.indexOf('{');
  if (open >= 0) {
    const close = key.indexOf('}', open + 1);
    if (close > open + 1) hashed = key.slice(open + 1, close);
  }
  let crc = 0;
  for (const byte of Buffer.from(hashed, 'utf8')) crc = ((crc << 8) & 0xffff) ^ TABLE[((crc >> 8) ^ byte) & 0xff];
  return crc % SLOTS;
}
