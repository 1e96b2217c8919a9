package io.scythe.sim;

import io.scythe.bench.report.RunResult;

/**
 * A simulated run's outcome: its {@code results.json} run (the schema of {@code scythe bench}, plus a {@code sim}
 * object), the hash of its history, and whether every invariant held.
 */
public record SimResult(RunResult run, long historyHash, boolean invariantsOk) {
}
