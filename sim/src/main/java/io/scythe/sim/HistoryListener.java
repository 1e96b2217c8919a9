package io.scythe.sim;

/** Receives every finished client transaction of a simulated run (see {@link Simulation#listener}). */
@FunctionalInterface
public interface HistoryListener {
    void finished(TxnRecord record);
}
