/**
 * Error catalogue of @bayou/loadtest. Usage errors (bad options) are thrown before a run
 * starts; run failures (loss, latency past --max-latency) are reported through the exit code.
 */
export const LoadtestErrors = {
  /** An option name the CLI or `resolveOptions()` does not know. */
  UNKNOWN_OPTION: 'LT_ERR_UNKNOWN_OPTION',
  /** An option value that cannot be parsed or is out of range. */
  INVALID_OPTION: 'LT_ERR_INVALID_OPTION',
  /** The scenario name is not one of chat, feed, connections. */
  UNKNOWN_SCENARIO: 'LT_ERR_UNKNOWN_SCENARIO',
  /** The server refused a handshake or subscription during setup. */
  SETUP_FAILED: 'LT_ERR_SETUP_FAILED',
} as const;

export type LoadtestErrorCode = (typeof LoadtestErrors)[keyof typeof LoadtestErrors];

export class LoadtestError extends Error {
  readonly code: LoadtestErrorCode;
  constructor(code: LoadtestErrorCode, message: string) {
    super(message);
    this.name = 'LoadtestError';
    this.code = code;
  }
}

/** Exit codes of `bayou-loadtest`. */
export const ExitCodes = {
  OK: 0,
  /** Messages were lost or duplicated, or clients failed to connect. */
  LOSS: 1,
  /** A latency beyond --max-latency was observed; the run was aborted. */
  LATENCY: 3,
  /** Bad command line. */
  USAGE: 2,
} as const;
