import { describe, expect, it } from 'vitest';
import { channelKind } from './channel.js';
import { isMetaChannel, META_CHANNELS, META_PREFIX } from './message.js';

describe('isMetaChannel', () => {
  it('is true for every meta channel, known or not, and agrees with channelKind', () => {
    for (const channel of [...META_CHANNELS, '/meta/ack', '/meta/x']) {
      expect(channel.startsWith(META_PREFIX)).toBe(true);
      expect(isMetaChannel(channel)).toBe(true);
      expect(channelKind(channel)).toBe('meta');
    }
  });

  it('is false for broadcast and service channels that merely contain "meta"', () => {
    for (const channel of ['/metadata', '/meta', '/chat/meta/x', '/service/meta/x', '/~r']) {
      expect(isMetaChannel(channel)).toBe(false);
      expect(channelKind(channel)).not.toBe('meta');
    }
  });
});
