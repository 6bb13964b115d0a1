/** Reading and checking the `subscription` field shared by subscribe and unsubscribe. */
import { formatError, type Message, parseChannel } from '@bayou/protocol';

/** The names asked for, or the Bayeux error to answer with. */
export function readSubscriptions(message: Message, forSubscribe: boolean): string[] | { error: string } {
  const raw = message.subscription;
  const names = typeof raw === 'string' ? [raw] : Array.isArray(raw) ? raw : null;
  if (names === null || names.length === 0) return { error: formatError('subscriptionMissing') };
  for (const name of names) {
    const info = parseChannel(name);
    if (info === null) return { error: formatError('channelInvalid', [String(name)]) };
    if (forSubscribe && info.kind === 'meta')
      return { error: formatError('subscribeDenied', [name as string]) };
  }
  return names as string[];
}
