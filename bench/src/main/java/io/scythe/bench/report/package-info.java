/**
 * What {@code scythe bench} writes: {@link io.scythe.bench.report.BenchReport} collects one
 * {@link io.scythe.bench.report.RunResult} per protocol (or micro-workload configuration) and client count and writes
 * {@code DIR/results.json} (the README documents every field) and, drawn from that JSON alone,
 * {@code DIR/report.html} ({@link io.scythe.bench.report.HtmlReport}: inline SVG, no script, nothing fetched, so
 * {@code scythe report DIR} can redraw it from an old results.json). {@link io.scythe.bench.report.ProgressLine} is
 * the live line on stderr during a run.
 *
 * <p>Where the numbers come from: latencies are HdrHistograms recorded on each event loop and merged after the run;
 * {@code latency_cdf_us} samples the merged histogram at {@link io.scythe.bench.report.RunResult#CDF_PERCENTILES};
 * verbs, bytes and RRPC calls are the per-loop {@code io.scythe.bridge.VerbStats} counters read on each loop before
 * and after the measured run ({@code io.scythe.bench.micro.LoopCounters}); CPU time is the process's
 * ({@code OperatingSystemMXBean}) and the loop threads' ({@code ThreadMXBean}) over the same interval.
 */
package io.scythe.bench.report;
