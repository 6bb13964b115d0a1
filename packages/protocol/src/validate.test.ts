import { describe, expect, it } from 'vitest';
import { decodeBatch, validateMessage } from './validate.js';

describe('decodeBatch', () => {
  it('accepts an array and a single object', () => {
    expect(decodeBatch('[{"channel":"/a"}]')).toEqual({ ok: true, messages: [{ channel: '/a' }] });
    expect(decodeBatch('{"channel":"/a"}')).toEqual({ ok: true, messages: [{ channel: '/a' }] });
  });

  it('rejects malformed JSON, scalars and empty batches with a reason', () => {
    const bad = decodeBatch('[{"channel":');
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.reason).toMatch(/malformed JSON/);
    expect(decodeBatch('42')).toEqual({ ok: false, reason: 'expected a JSON array of Bayeux messages' });
    expect(decodeBatch('[]').ok).toBe(false);
  });
});

describe('validateMessage', () => {
  it('accepts a well-formed message and normalizes a numeric id', () => {
    const r = validateMessage({ channel: '/a/b', id: 7, data: { x: 1 } });
    expect(r.ok).toBe(true);
    expect(r.ok && r.message.id).toBe('7');
  });

  it('answers a missing channel with 400::channel_missing and keeps the id', () => {
    expect(validateMessage({ id: '3' })).toMatchObject({ ok: false, error: '400::channel_missing', id: '3' });
  });

  it('answers a bad channel name with 405', () => {
    expect(validateMessage({ channel: '/a//b' })).toMatchObject({
      ok: false,
      error: '405:/a//b:channel_invalid',
    });
  });

  it('rejects non-objects and wrongly typed fields, naming the field', () => {
    expect(validateMessage('x')).toMatchObject({ error: '400:message:message_invalid' });
    expect(validateMessage({ channel: '/a', clientId: 5 })).toMatchObject({
      error: '400:clientId:message_invalid',
    });
    expect(validateMessage({ channel: '/a', ext: [] })).toMatchObject({ error: '400:ext:message_invalid' });
  });

  it('rejects a __proto__ key at any depth in data or ext', () => {
    const data = JSON.parse('{"channel":"/a","data":{"x":[{"__proto__":{"polluted":1}}]}}');
    expect(validateMessage(data)).toMatchObject({ ok: false, error: '400:__proto__:forbidden_key' });
    const ext = JSON.parse('{"channel":"/a","ext":{"__proto__":{}}}');
    expect(validateMessage(ext)).toMatchObject({ ok: false, error: '400:__proto__:forbidden_key' });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
