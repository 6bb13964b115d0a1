/**
 * `/service/presence`: a client asks `{ channel }` and is answered `{ channel, members }`,
 * the cluster-wide member list — if it may subscribe to that channel (else
 * `403:<channel>:subscribe_denied`, asked before anything else so that a refused client
 * learns nothing of the channel).
 */
import { formatError } from '@bayou/protocol';
import { BayeuxReplyError } from '../errors.js';
import type { ChannelHook } from '../options.js';
import type { ServiceHandler } from './events.js';
import type { PresenceTracker, PresenceView } from './presence-tracker.js';

export { PRESENCE_SERVICE } from '@bayou/protocol';

export function presenceService(
  tracker: PresenceTracker,
  canSubscribe: ChannelHook | undefined,
): ServiceHandler {
  return async (data, ctx): Promise<{ channel: string; members: PresenceView[] }> => {
    const channel =
      data !== null && typeof data === 'object' ? (data as { channel?: unknown }).channel : undefined;
    if (typeof channel !== 'string') throw new BayeuxReplyError(formatError('messageInvalid', ['channel']));
    if (canSubscribe !== undefined && (await canSubscribe(ctx.session, channel, ctx.message)) === false)
      throw new BayeuxReplyError(formatError('subscribeDenied', [channel]));
    if (!tracker.covers(channel)) throw new BayeuxReplyError(formatError('channelInvalid', [channel]));
    return { channel, members: await tracker.members(channel) };
  };
}
