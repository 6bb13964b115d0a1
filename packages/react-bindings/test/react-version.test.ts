/** The React these tests run on is the one the project says: 19 in `react`, 18 in `react18`. */
import { version } from 'react';
import { version as domVersion } from 'react-dom';
import { expect, it } from 'vitest';

it('runs on the React major the project names', () => {
  const expected = process.env.BAYOU_REACT_MAJOR;
  expect(expected).toMatch(/^1[89]$/);
  expect(version.split('.')[0]).toBe(expected);
  expect(domVersion.split('.')[0]).toBe(expected);
});
