// @ts-check
// Faye 1.4 from npm, default options, memory engine, mounted at /bayeux.
import http from 'node:http';
import faye from 'faye';
import { announce, urlOf } from './common.mjs';

const server = http.createServer();
const bayeux = new faye.NodeAdapter({ mount: '/bayeux', timeout: 25 });
bayeux.attach(server);
server.listen(0, '127.0.0.1', () => announce(urlOf(server)));
