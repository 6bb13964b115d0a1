import { runScenario } from '../dist/index.js';
import { startNodes, startRedis } from './cluster-processes.mjs';
import { cpuSeconds } from './lib.mjs';
const [engine = 'redis', mode = 'sat', prof = ''] = process.argv.slice(2);
const redis = await startRedis();
const [node] = await startNodes(1, engine === 'redis' ? redis : null);
const file = `/tmp/h5/prof-${engine}-${mode}.cpuprofile`;
const cpu = {};
try {
  const r = await runScenario('chat', { url: node.url, transport: 'websocket', clients: 1000, rooms: 100, roomsPerClient: 10,
    messageSize: 50, batchSize: 10, duration: 5000, warmup: 3000, drain: 5000, metricsUrl: 'off', localAddresses: [],
    ...(mode === 'sat' ? { maxOutstanding: 5000 } : { rate: 200 }) },
    { protocol: 'bayeux', onWindow: (e) => { cpu[e] = cpuSeconds(node.pid); if (prof) node.send(e === 'open' ? { type: 'profile', action: 'start' } : { type: 'profile', action: 'stop', file }); } });
  console.log(engine, mode, Math.round(r.deliveredPerSecond), r.deliveriesPerFrame, ((cpu.close - cpu.open) * 1e6 / r.deliveredInWindow).toFixed(2), r.latency.p50, r.latency.p99);
  await new Promise((r) => setTimeout(r, 1500));
} finally { await node.stop(); redis.stop(); }
