package io.scythe.cluster;

import com.hazelcast.core.Hazelcast;

import java.util.Arrays;
import java.util.List;

/**
 * A Hazelcast member in a process of its own, configured as a Scythe node ({@link ClusterAccess#hazelcastConfig()}),
 * for {@link PausedPeerIoSpinTest} to SIGSTOP: {@code cluster node port seed...}. Prints "joined" once in the cluster,
 * then waits to be killed.
 */
public final class PausedPeerMember {
    private PausedPeerMember() {
    }

    public static void main(final String[] args) throws InterruptedException {
        final List<String> seeds = Arrays.asList(args).subList(3, args.length);
        final ClusterAccess access = new ClusterAccess(args[0], PausedPeerIoSpinTest.SECRET, args[1], "127.0.0.1",
            Integer.parseInt(args[2]), seeds, 0, 1, null, 60_000);
        Hazelcast.newHazelcastInstance(access.hazelcastConfig());
        System.out.println("joined");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
