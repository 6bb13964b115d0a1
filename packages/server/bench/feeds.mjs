// @ts-check
// The bandwidth benches' feeds (bandwidth.mjs, http-bandwidth.mjs), on a seeded generator so
// that every row runs the same feed:
//   price:  a grid of 10,000 rows /grid/<i>, 30 fields each, 4 of which change per update;
//           every client watches 1,000 random rows (fan-out about 10 with 100 clients);
//   chat:   100 rooms /room/<i>, messages of a user, a room and a sentence of ~100 chars;
//           every client is in 10 random rooms;
//   ticker: one channel every client follows (a broadcast).

const ROWS = 10_000;
const ROWS_PER_CLIENT = 1000;
const ROOMS = 100;
const ROOMS_PER_CLIENT = 10;

let seed = 7;

/** Starts the generator over: call before each row. */
export function reseed() {
  seed = 7;
}
/** A small seeded generator, so every row runs the same feed. */
export const random = () => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed / 2 ** 31;
};

/** @typedef {{ name: string, channels: string[], perClient: number, next: (i: number) => unknown }} Feed */

/** @returns {Feed} */
export function priceFeed() {
  const rows = Array.from({ length: ROWS }, (_, i) => {
    /** @type {Record<string, unknown>} */
    const row = {
      symbol: `SYM${i}`,
      venue: 'XLON',
      currency: 'GBP',
      isin: `GB00${String(i).padStart(8, '0')}`,
    };
    for (let f = 0; f < 22; f++) row[`f${f}`] = Math.round(random() * 1e6) / 100;
    return Object.assign(row, { bid: 100, ask: 100.5, last: 100.2, time: 0 });
  });
  return {
    name: 'price',
    channels: rows.map((_, i) => `/grid/${i}`),
    perClient: ROWS_PER_CLIENT,
    next: (i) => {
      const row = /** @type {{ bid: number, ask: number, last: number, time: number }} */ (rows[i]);
      const move = Math.round((random() - 0.5) * 20) / 100;
      row.bid = Math.round((row.bid + move) * 100) / 100;
      row.ask = Math.round((row.bid + 0.5) * 100) / 100;
      row.last = row.bid;
      row.time = Date.now();
      return row;
    },
  };
}

const WORDS =
  'the market opened higher on strong earnings while bonds slipped and traders waited for the central bank decision later today'.split(
    ' ',
  );

/** @returns {Feed} */
export function chatFeed() {
  return {
    name: 'chat',
    channels: Array.from({ length: ROOMS }, (_, i) => `/room/${i}`),
    perClient: ROOMS_PER_CLIENT,
    next: (i) => {
      const words = Array.from({ length: 16 }, () => WORDS[Math.floor(random() * WORDS.length)]);
      return { user: `user${Math.floor(random() * 1000)}`, room: i, text: words.join(' '), time: Date.now() };
    },
  };
}

/**
 * One channel every client follows (a broadcast: the same frame for every session, the case
 * the shared compressed frame is for): a tick of a few fields and a short headline.
 * @returns {Feed}
 */
export function tickerFeed() {
  return {
    name: 'ticker',
    channels: ['/ticker'],
    perClient: 1,
    // From the seeded generator alone, so that every row sends the same bytes.
    next: () => {
      const price = Math.round((100 + (random() - 0.5) * 10) * 100) / 100;
      const words = Array.from({ length: 8 }, () => WORDS[Math.floor(random() * WORDS.length)]);
      return {
        symbol: 'FTSE',
        price,
        change: Math.round((price - 100) * 100) / 100,
        time: Date.now(),
        note: words.join(' '),
      };
    },
  };
}

/** @type {Record<string, () => Feed>} */
export const FEED_MAKERS = { price: priceFeed, chat: chatFeed, ticker: tickerFeed };
