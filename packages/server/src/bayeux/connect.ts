/** `/meta/connect`: the kernel's connect manager binds, holds or answers it. */
import type { Message } from '@bayou/protocol';
import type { BatchContext } from './batch-context.js';
import type { KernelApi } from './kernel-api.js';

export function handleConnect(
  k: Pick<KernelApi, 'sessionFor' | 'connects'>,
  message: Message,
  ctx: BatchContext,
): void {
  const session = k.sessionFor(message, ctx);
  if (session === undefined) return;
  k.connects.connect(session, message, ctx);
}
