// Faye ships no types; the interop suite describes the part of its client API it uses.
declare module 'faye';
