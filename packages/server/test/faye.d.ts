// Faye ships no types; the interop suite describes the part of its client API it uses.
declare module 'faye';

// Faye's permessage-deflate extension ships no types either; the suite only hands it to Faye.
declare module 'permessage-deflate';
