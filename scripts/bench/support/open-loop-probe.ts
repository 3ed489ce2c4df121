import http from 'node:http';
import { percentile } from './percentile.ts';

export interface ProbeResult {
  sent: number;
  answered: number;
  p50Ms: number;
  p99Ms: number;
  p999Ms: number;
  maxMs: number;
  /** Requests that took longer than 20 ms. */
  over20Ms: number;
}

/**
 * Sends GET `url` at a fixed rate whether or not earlier requests have been answered (open loop), and reports
 * their latencies. A closed-loop load (autocannon's connections, each waiting for its answer) has only its
 * few outstanding requests caught in a stall of the event loop; an open-loop one has every request that
 * arrives during it, as real traffic does, so stalls show in its p99.
 */
export async function probeOpenLoop(url: string, options: { seconds: number; perSecond: number }): Promise<ProbeResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const latencies: number[] = [];
  let sent = 0;
  const total = Math.round(options.seconds * options.perSecond);
  const interval = 1000 / options.perSecond;
  const begin = performance.now();
  const answers: Array<Promise<void>> = [];
  try {
    while (sent < total) {
      // Each request at its own time from the start (timers fire late or early by a millisecond or so).
      const wait = begin + sent * interval - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const started = performance.now();
      sent++;
      answers.push(new Promise<void>((resolve) => {
        http
          .get(url, { agent }, (response) => {
            response.resume();
            response.on('end', () => {
              latencies.push(performance.now() - started);
              resolve();
            });
          })
          .on('error', () => resolve());
      }));
    }
    await Promise.all(answers);
  } finally {
    agent.destroy();
  }
  const round = (ms: number) => Math.round(ms * 10) / 10;
  return {
    sent,
    answered: latencies.length,
    p50Ms: round(percentile(latencies, 50)),
    p99Ms: round(percentile(latencies, 99)),
    p999Ms: round(percentile(latencies, 99.9)),
    maxMs: round(percentile(latencies, 100)),
    over20Ms: latencies.filter((ms) => ms > 20).length,
  };
}
