package io.scythe.cluster;

import com.hazelcast.cluster.Address;
import com.hazelcast.config.Config;
import com.hazelcast.config.JoinConfig;
import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.instance.impl.HazelcastInstanceProxy;
import com.hazelcast.map.IMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A map-lock step whose lock a split and merge took away (issue 23 section 3: {@code nextEpoch}'s unlock threw). */
class MapLockStepTest {

    private final String cluster = "maplockstep-" + UUID.randomUUID();
    private final List<HazelcastInstance> members = new ArrayList<>();
    private final List<String> logged = new ArrayList<>();

    @AfterEach
    void stop() {
        members.forEach(m -> m.getLifecycleService().terminate());
    }

    /** A member on loopback that joins only {@code join} (itself when null: a cluster of its own, a split side). */
    private HazelcastInstance member(final Integer join) throws Exception {
        final int port = LocalCluster.freePort();
        final Config config = new Config().setClusterName(cluster);
        config.setProperty("hazelcast.logging.type", "jdk");
        config.setProperty("hazelcast.merge.first.run.delay.seconds", "600"); // only the merge this test asks for
        config.getNetworkConfig().setPort(port).setPortAutoIncrement(false);
        config.getNetworkConfig().getInterfaces().setEnabled(true).addInterface("127.0.0.1");
        final JoinConfig joining = config.getNetworkConfig().getJoin();
        joining.getMulticastConfig().setEnabled(false);
        joining.getAutoDetectionConfig().setEnabled(false);
        joining.getTcpIpConfig().setEnabled(true).addMember("127.0.0.1:" + (join == null ? port : join));
        final HazelcastInstance hz = Hazelcast.newHazelcastInstance(config);
        members.add(hz);
        return hz;
    }

    private static Address address(final HazelcastInstance hz) {
        return hz.getCluster().getLocalMember().getAddress();
    }

    /**
     * A member alone on its side of a split takes the lock, then merges into the other side (as Hazelcast's
     * {@code MergeClustersOp} makes it, after soakports' 2.3 s clock jump): its unlock threw
     * IllegalMonitorStateException out of the node's start; the step is now done again in the merged cluster.
     */
    @Test
    void shouldDoAStepAgainWhenAMergeTookItsLock() throws Exception {
        final HazelcastInstance big = member(null);
        final HazelcastInstance splitOff = member(null);
        assertThat(splitOff.getCluster().getMembers()).hasSize(1);
        big.getMap("scythe.epochs").put("cn1", 7L);
        final IMap<String, Long> epochs = splitOff.getMap("scythe.epochs");
        final AtomicInteger attempts = new AtomicInteger();
        final long epoch = MapLockStep.underLock(epochs, "cn1", "epoch of cn1", () -> {
            final Long last = epochs.get("cn1");
            if (attempts.incrementAndGet() == 1) {
                ((HazelcastInstanceProxy) splitOff).getOriginal().node.getClusterService()
                    .merge(address(big));
                final long deadline = System.nanoTime() + 30_000_000_000L;
                while (splitOff.getCluster().getMembers().size() < 2 && System.nanoTime() - deadline < 0) {
                    Thread.onSpinWait();
                }
                assertThat(splitOff.getCluster().getMembers()).hasSize(2);
            }
            final long next = (last == null ? 0 : last) + 1;
            if (!MapLockStep.raise(epochs, "cn1", next)) {
                throw MapLockStep.stale("read epoch " + last + " but the map holds " + epochs.get("cn1"));
            }
            return next;
        }, logged::add);
        assertThat(attempts).hasValue(2);
        // The first attempt read its split side's empty map and wrote in the merged cluster: a put lowered 7 to 1
        // (epoch 2 given again); a raise keeps 7, and the second attempt reads it.
        assertThat(epoch).isEqualTo(8);
        assertThat(big.<String, Long>getMap("scythe.epochs").get("cn1")).isEqualTo(8);
        assertThat(logged).singleElement().asString().contains("epoch of cn1: the lock on scythe.epochs[cn1] was lost")
            .contains("attempt 2 of 3");
    }

    @Test
    void shouldNeverLowerACounterAndSayWhenItHeldMore() throws Exception {
        final IMap<String, Long> epochs = member(null).getMap("scythe.epochs");
        assertThat(MapLockStep.raise(epochs, "cn1", 3)).isTrue();
        assertThat(MapLockStep.raise(epochs, "cn1", 5)).isTrue();
        assertThat(MapLockStep.raise(epochs, "cn1", 5)).isTrue();
        assertThat(MapLockStep.raise(epochs, "cn1", 1)).isFalse();
        assertThat(epochs.get("cn1")).isEqualTo(5);
    }

    @Test
    void shouldGiveTheStartUpClearlyWhenTheLockIsLostEveryTime() throws Exception {
        final IMap<String, Long> epochs = member(null).getMap("scythe.epochs");
        final AtomicInteger attempts = new AtomicInteger();
        assertThatThrownBy(() -> MapLockStep.underLock(epochs, "cn1", "epoch of cn1", () -> {
            attempts.incrementAndGet();
            epochs.forceUnlock("cn1"); // what a merge leaves: the key not locked
            return 1L;
        }, logged::add)).isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("epoch of cn1: the lock on scythe.epochs[cn1] was lost")
            .hasMessageContaining("3 times in a row, giving the start up");
        assertThat(attempts).hasValue(MapLockStep.ATTEMPTS);
        assertThat(logged).hasSize(MapLockStep.ATTEMPTS - 1);
    }

    @Test
    void shouldThrowTheStepsOwnFailureNotTheLostLock() throws Exception {
        final IMap<String, Long> epochs = member(null).getMap("scythe.epochs");
        assertThatThrownBy(() -> MapLockStep.underLock(epochs, "slots", "slot of cn1", () -> {
            epochs.forceUnlock("slots");
            throw new IllegalStateException("a cluster has at most 255 compute nodes");
        }, logged::add)).isInstanceOf(IllegalStateException.class)
            .hasMessage("a cluster has at most 255 compute nodes");
        assertThat(epochs.isLocked("slots")).isFalse();
    }
}
