package io.scythe.fabric.emulated;

import io.scythe.fabric.DriftingClock;

/**
 * The responder side of an emulated NIC, as a requester needs it: its memory (by rkey), its timing state and its
 * clock (what a READ of its {@code NicClockWord} returns).
 */
public interface EmulatedPeer {
    String node();

    NicTimeline timeline();

    /** The responder's NIC clock. */
    DriftingClock nicClock();

    /** The region registered under {@code rkey}, or {@code null} (unknown or deregistered). */
    RegionView region(int rkey);
}
