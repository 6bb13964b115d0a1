/** The READMEs list every error code the code defines (they drift apart otherwise). */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { BayeuxErrors, formatError } from '@bayou/protocol';
import { describe, expect, it } from 'vitest';
import { ErrorCodes } from '../src/index.js';
import { defaultOptions } from '../src/options.js';

const readme = (pkg: string) => readFileSync(resolve(import.meta.dirname, `../../${pkg}/README.md`), 'utf8');

describe('error documentation', () => {
  it('documents every BAYOU_ERR_* code of the server', () => {
    const text = readme('server');
    for (const code of Object.keys(ErrorCodes)) expect(text).toContain(`\`${code}\``);
  });

  it('documents every Bayeux error of the protocol with its wire string', () => {
    const text = readme('protocol');
    for (const name of Object.keys(BayeuxErrors) as (keyof typeof BayeuxErrors)[]) {
      expect(text).toContain(`\`${name}\``);
      const wire = formatError(name);
      // The table shows args as <placeholders>: compare the code and the message.
      expect(text).toContain(`${wire.split(':')[0]}:`);
      expect(text).toContain(`:${BayeuxErrors[name].message}\``);
    }
  });
});

describe('option documentation', () => {
  it('lists every plugin option in the server README options table', () => {
    const text = readme('server');
    const keys = [
      ...Object.keys(defaultOptions),
      'authenticate',
      'canSubscribe',
      'canPublish',
      'auth',
      'metricsRegistry',
      'engine',
    ];
    for (const key of keys) expect(text).toMatch(new RegExp(`^\\| \`${key}[\`(]`, 'm'));
  });
});
