// @ts-check
// Runs a loadtest scenario with a chosen long-polling generator: `lean` is the loadtest's
// own driver (runScenario), `standard` the browser-like node:http one (standard-lp.mjs) and
// `undici` the same browser tab on undici (undici-lp.mjs), both run in this process
// through the loadtest's own runPart, so the scenario, the publishing loop and the
// statistics are the very ones the lean generator uses.
import { runScenario } from '../../dist/index.js';
import { resolveOptions } from '../../dist/options.js';
import { buildResult } from '../../dist/result.js';
import { runPart } from '../../dist/run-part.js';
import { standardLongPolling } from './standard-lp.mjs';
import { undiciLongPolling } from './undici-lp.mjs';

/** @import { LoadtestOptions, RunHooks, RunResult, Scenario } from '../../dist/index.js' */

/** The long-polling generators by the name `--lp-generators` takes, with what each is. */
export const GENERATORS = {
  lean: 'lean driver (raw sockets, pipelined, pre-formatted requests)',
  standard: 'standard client (node:http, keep-alive agent of 2 per client, cookie jar, Chrome headers)',
  undici: 'standard client (undici, keep-alive pool of 2 per client, cookie jar, Chrome headers)',
};

const FACTORIES = { standard: standardLongPolling, undici: undiciLongPolling };

/**
 * Runs `scenario` with `generator`'s clients (`runScenario` for the lean one).
 * @param {string} generator lean, standard or undici
 * @param {Scenario} scenario
 * @param {Partial<LoadtestOptions>} partial
 * @param {RunHooks} [hooks]
 * @returns {Promise<RunResult>}
 */
export async function runWithGenerator(generator, scenario, partial, hooks = {}) {
  if (generator === 'lean') return runScenario(scenario, partial, hooks);
  if (generator !== 'standard' && generator !== 'undici')
    throw new Error(`unknown generator ${generator} (${Object.keys(GENERATORS).join('|')})`);
  const factory = FACTORIES[generator];
  const options = resolveOptions({ ...partial, metricsUrl: 'off' });
  if (options.workers !== 1) throw new Error(`the ${generator} generator runs in one process (workers 1)`);
  /** @type {Promise<void>[]} */
  const pending = [];
  const startedAt = new Date();
  const part = await runPart(
    scenario,
    options,
    { lo: 0, hi: options.clients, worker: 0, workers: 1 },
    factory,
    {
      barrier: async () => {},
      onTick: () => {},
      onWindow: (event) => pending.push(Promise.resolve(hooks.onWindow?.(event))),
    },
  );
  await Promise.all(pending);
  return buildResult({ scenario, options, startedAt, parts: [part], samples: {} });
}
