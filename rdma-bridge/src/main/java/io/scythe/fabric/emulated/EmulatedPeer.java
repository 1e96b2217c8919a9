package io.scythe.fabric.emulated;

/** The responder side of an emulated NIC, as a requester needs it: its memory (by rkey) and its timing state. */
public interface EmulatedPeer {
    String node();

    NicTimeline timeline();

    /** The region registered under {@code rkey}, or {@code null} (unknown or deregistered). */
    RegionView region(int rkey);
}
