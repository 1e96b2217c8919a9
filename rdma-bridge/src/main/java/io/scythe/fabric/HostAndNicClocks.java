package io.scythe.fabric;

/** A node's two clocks as its NIC starts: both begin now on the fabric's true time, as {@link ClockOptions} says. */
public record HostAndNicClocks(DriftingClock host, DriftingClock nic) {

    /** The clocks {@code fabric}'s options give {@code node}, starting now. */
    public static HostAndNicClocks start(final Fabric fabric, final String node) {
        final ClockOptions options = fabric.options().clocks();
        final String server = fabric.options().serverOf(node); // co-located nodes read one server's clocks
        final DriftingClock nic = new DriftingClock(fabric.clock(), options.nicOf(server));
        return new HostAndNicClocks(new DriftingClock(fabric.clock(), options.hostOf(server), nic.startNs()), nic);
    }
}
