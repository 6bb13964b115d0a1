import type { Advice as ProtocolAdvice, Message as ProtocolMessage } from '@bayou/protocol';
import { expectTypeOf, it } from 'vitest';
import type { Advice, Message } from './types.js';

// The client declares its own message types so its .d.ts files need no other package;
// this (checked by `tsc`, run by the typecheck script) keeps them in step with the protocol.
it('keeps the client message shapes interchangeable with @bayou/protocol', () => {
  expectTypeOf<ProtocolMessage>().toExtend<Message>();
  expectTypeOf<Message>().toExtend<ProtocolMessage>();
  expectTypeOf<ProtocolAdvice>().toExtend<Advice>();
  expectTypeOf<Advice>().toExtend<ProtocolAdvice>();
});
