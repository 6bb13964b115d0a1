/** The console's own channels: its feed, its services, and the test for them. */

export const FEED_CHANNEL = '/bayou/admin/stats';
export const ADMIN_PREFIX = '/bayou/admin';
export const ADMIN_SERVICES = '/service/bayou/admin/';

/** A channel of the console itself (never listed among the application's channels). */
export const isAdminChannel = (channel: string): boolean =>
  channel === ADMIN_PREFIX || channel.startsWith(`${ADMIN_PREFIX}/`);
