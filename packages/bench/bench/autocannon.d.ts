// The part of autocannon's API the benchmark uses (autocannon ships no types).
declare module "autocannon" {
  interface AutocannonOptions {
    url: string;
    method?: string;
    connections?: number;
    duration?: number;
    body?: string;
    headers?: Record<string, string>;
  }
  interface AutocannonResult {
    requests: { total: number; average: number };
    latency: { p50: number; p99: number; average: number };
    errors: number;
    non2xx: number;
    timeouts: number;
  }
  function autocannon(options: AutocannonOptions): Promise<AutocannonResult>;
  export default autocannon;
}
