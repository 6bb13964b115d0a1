export { bayeuxLongPolling } from './bayeux-lp-driver.js';
export { bayeuxEventSource, bayeuxStreaming } from './bayeux-stream-driver.js';
export { bayeuxWebSocket } from './bayeux-ws-driver.js';
export { browserEventSource, browserStreaming } from './browser-stream-driver.js';
export type { DeliverySink, Driver, DriverFactory, DriverOptions } from './driver.js';
export { driverFor, type Protocol } from './drivers.js';
export { ExitCodes, LoadtestError, type LoadtestErrorCode, LoadtestErrors } from './errors.js';
export { helpText } from './help-text.js';
export { type ChartSpec, chartSpecs, renderHtml } from './html-report.js';
export { fetchServerSample, parsePrometheus, type ServerSample } from './metrics.js';
export { headerMap, parseAddresses, parseDuration, parseHeader } from './option-values.js';
export {
  CLIENT_KINDS,
  type ClientKind,
  DEFAULTS,
  type FeedSource,
  type LoadtestOptions,
  parseArgs,
  redactOptions,
  resolveOptions,
  type Scenario,
  TRANSPORTS,
  type Transport,
} from './options.js';
export { progressLine, renderReport } from './report.js';
export type { FeedSummary, RunResult, ServerPoint } from './result.js';
export { type Progress, type RunHooks, runScenario } from './runner.js';
export { type DemoFeedPart, demoSymbol } from './scenarios/demo-feed.js';
export { socketIo } from './socketio-driver.js';
export {
  type LatencySummary,
  type PercentilePoint,
  percentileDistribution,
  type SeriesPoint,
} from './stats.js';
