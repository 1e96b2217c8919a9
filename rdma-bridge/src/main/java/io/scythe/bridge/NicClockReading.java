package io.scythe.bridge;

/**
 * One one-sided read of a peer's NIC clock ({@link RdmaChannel#readNicClock()}): the peer's clock as the READ
 * executed on its NIC ({@code remoteNs}), bracketed by this node's NIC clock when the READ was posted ({@code sentNs})
 * and when it completed ({@code completedNs}, its completion timestamp). The raw material of NIC-to-NIC clock
 * synchronisation (Aurogon's F2, §5.2.2): a reader that trusts the path to be symmetric takes the peer to have read
 * its clock halfway through the round trip.
 *
 * @param node the peer whose clock was read
 */
public record NicClockReading(String node, long sentNs, long remoteNs, long completedNs) {

    /** Round trip of the READ on this NIC's clock. */
    public long roundTripNs() {
        return completedNs - sentNs;
    }

    /**
     * How far the peer's NIC clock is ahead of this node's (negative: behind), assuming it was read halfway through
     * the round trip: wrong by at most {@link #roundTripNs()} / 2 plus this NIC's drift over the round trip.
     */
    public long offsetNs() {
        return remoteNs - (sentNs + roundTripNs() / 2);
    }
}
