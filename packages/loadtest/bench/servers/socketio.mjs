// @ts-check
// Socket.IO 4 from npm with its defaults (WebSocket and polling); the bench's Socket.IO
// driver joins rooms with `join` (acknowledged) and publishes with `pub` (room, data),
// which the server broadcasts to the room as `m`.
import http from 'node:http';
import { Server } from 'socket.io';
import { announce, urlOf } from './common.mjs';

const server = http.createServer();
const io = new Server(server, { serveClient: false });
io.on('connection', (socket) => {
  socket.on('join', (rooms, ack) => {
    socket.join(rooms);
    if (typeof ack === 'function') ack(true);
  });
  socket.on('pub', (room, data) => io.to(room).emit('m', data));
});
server.listen(0, '127.0.0.1', () => announce(urlOf(server, '')));
