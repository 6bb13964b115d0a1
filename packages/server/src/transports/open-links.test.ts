import { expect, it } from 'vitest';
import { OpenLinks } from './open-links.js';

it('counts and lists the open links, and forgets a closed one', () => {
  const links = new OpenLinks<string>();
  links.add('a');
  links.add('b');
  links.add('a');
  expect(links.size).toBe(2);
  links.delete('a');
  links.delete('a');
  expect([...links]).toEqual(['b']);
  expect(links.size).toBe(1);
});

it('settles whenEmpty when the last link closes, not before, and at once when none is open', async () => {
  const links = new OpenLinks<string>();
  await links.whenEmpty();
  links.add('a');
  links.add('b');
  const settled: string[] = [];
  const first = links.whenEmpty().then(() => settled.push('first'));
  const second = links.whenEmpty().then(() => settled.push('second'));
  links.delete('a');
  links.delete('c');
  await Promise.resolve();
  expect(settled).toEqual([]);
  links.delete('b');
  await Promise.all([first, second]);
  expect(settled).toEqual(['first', 'second']);
});
