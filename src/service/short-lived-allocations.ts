/**
 * Imported first by the service's entry point (src/main.ts), before any other module allocates: turns off
 * V8's allocation-site pretenuring for the life of the process.
 *
 * V8 watches which object and array literals make objects that survive young-generation collections, and
 * from then on allocates those sites' objects straight in the old generation, which only a full collection
 * frees. A service that rebuilds its read models at start (the first start, an upgrade that changes a
 * projection's version) folds the log through the same read-model code that later answers requests
 * (find, get, document decoding), and the rebuild keeps what it reads for a while: the sites are marked
 * long-lived, and every public read after it allocates its short-lived results in the old generation. Measured
 * on 10,000 entries (single entry by random slug, 10 connections, CPU per request from /proc): 52-55 µs in
 * the process that had just rebuilt, 33-35 µs in the same service restarted on the same files, 39-41 µs in a
 * process that rebuilt with pretenuring off; the rebuild itself ran as fast without it (public-content 36.5k
 * and 38.1k log events/s). Serving is mostly short-lived objects, so the feedback buys the service nothing.
 *
 * Set from here rather than on the command line so that every way of starting the service (npm start, the
 * container, `node dist/src/main.js`) gets it; the flag is read at collection time, so setting it before the
 * first collection is as good as passing it to node.
 */
import v8 from 'node:v8';

v8.setFlagsFromString('--no-allocation-site-pretenuring');
