/**
 * Which Redis Cluster hash slot a key or shard channel lives in, as the cluster computes it
 * (the Redis Cluster specification, "Keys distribution model"): CRC16 (XMODEM: polynomial
 * 0x1021, initial value 0) of the key's hash tag — what lies between its first `{` and the
 * first `}` after it, when that is not empty — else of the whole key, modulo 16384.
 */

const TABLE = new Uint16Array(256);
for (let i = 0; i < 256; i++) {
  let crc = i << 8;
  for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  TABLE[i] = crc;
}

function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) crc = ((crc << 8) & 0xffff) ^ (TABLE[((crc >> 8) ^ byte) & 0xff] as number);
  return crc;
}

const encoder = new TextEncoder();

/** The hash slot (0–16383) of `key`. */
export function keySlot(key: string): number {
  const open = key.indexOf('{');
  if (open >= 0) {
    const close = key.indexOf('}', open + 1);
    if (close > open + 1) key = key.slice(open + 1, close);
  }
  return crc16(encoder.encode(key)) % 16384;
}
