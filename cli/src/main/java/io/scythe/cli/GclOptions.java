package io.scythe.cli;

import picocli.CommandLine.Option;

import java.time.Duration;

/**
 * The knobs of GAM's micro-benchmark ({@code GclSpec}) beyond the read ratio and skew, the same for the simulator's
 * {@code sim --workload gcl} and the embedded cluster's {@code bench --workload gcl}.
 */
final class GclOptions {
    @Accepts(min = "0", max = "1")
    @Option(names = "--sharing-ratio", defaultValue = "1", description = "[gcl] Share of the lines every CN accesses "
        + "(and of the accesses that go to them); the rest are split into each CN's private lines (default: "
        + "${DEFAULT-VALUE}).")
    double sharingRatio;

    @Accepts(min = "0s")
    @Option(names = "--access-hold", defaultValue = "0s", description = "[gcl] How long an access holds its line's "
        + "latch before it lets it go (the work done under it; a holder's local successors take the line over, so "
        + "SELCC's fairness lease γ, scythe.selcc.gamma, comes into play) (default: ${DEFAULT-VALUE}).")
    Duration accessHold;

    @Accepts(min = "0", max = "1")
    @Option(names = "--locality", defaultValue = "0", description = "[gcl] Probability that an access goes to the "
        + "line its client accessed last (SELCC Fig. 13: 0.5) (default: ${DEFAULT-VALUE}).")
    double locality;
}
