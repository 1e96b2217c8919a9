package io.scythe.cluster;

import com.hazelcast.cluster.Address;
import com.hazelcast.config.Config;
import com.hazelcast.config.JoinConfig;
import com.hazelcast.config.MapConfig;
import com.hazelcast.config.XmlConfigBuilder;
import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.instance.impl.HazelcastInstanceProxy;
import com.hazelcast.map.IMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A map-lock step whose lock a split and merge took away (issue 23 section 3: {@code nextEpoch}'s unlock threw). */
class MapLockStepTest {

    /** cluster.xml's configuration of {@code scythe.epochs}. */
    private static final MapConfig EPOCHS_CONFIG;

    static {
        try (InputStream xml = ClusterAccess.class.getResourceAsStream("cluster.xml")) {
            EPOCHS_CONFIG = new XmlConfigBuilder(xml).build().getMapConfig(ScytheNode.EPOCHS);
        } catch (final java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

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
        config.addMapConfig(EPOCHS_CONFIG); // cluster.xml's: its merge policy
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
                merge(splitOff, big);
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

    /** Merges {@code splitOff} into {@code big}'s cluster (as Hazelcast's {@code MergeClustersOp} does). */
    private static void merge(final HazelcastInstance splitOff, final HazelcastInstance big) {
        ((HazelcastInstanceProxy) splitOff).getOriginal().node.getClusterService().merge(address(big));
    }

    /** Waits up to 30 s for {@code done}; true when it came. */
    private static boolean within30s(final BooleanSupplier done) throws InterruptedException {
        final long deadline = System.nanoTime() + 30_000_000_000L;
        while (!done.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
            Thread.sleep(50);
        }
        return true;
    }

    /**
     * Issue 23 section 3: a CN's whole epoch and slot steps run on a one-member split side, lock and unlock included
     * (nothing for {@link MapLockStep} to catch): its empty map hands out epoch 1 of cn1 (the cluster was at 7) and
     * slot 1 (cnX's), and both sides gave epoch 1 of cn3. After the merge the map holds the higher values (Hazelcast's
     * default policy kept the larger side's: cn2's counter, raised to 3 on the split side, went back to 1), and every
     * incarnation that shares an epoch or slot finds so: the split side's cn1 by reading, the big side's cnX and cn3 by
     * their watch, one of each pair only.
     */
    @Test
    void shouldKeepTheHigherValueAtAMergeAndFindAnEpochOrSlotGivenTwice() throws Exception {
        final HazelcastInstance big = member(null);
        final HazelcastInstance splitOff = member(null);
        final IMap<String, Long> bigEpochs = big.getMap(ScytheNode.EPOCHS);
        bigEpochs.put("cn1", 7L);
        bigEpochs.put(EpochClaims.epochKey("cn1", 7), 100L);
        bigEpochs.put("cn2", 1L);
        bigEpochs.put("cn3", 1L);
        bigEpochs.put(EpochClaims.epochKey("cn3", 1), 3L);
        bigEpochs.put(ScytheNode.SLOTS, 1L);
        bigEpochs.put(ScytheNode.SLOTS + ":cnX", 1L);
        bigEpochs.put(EpochClaims.slotKey(1), 5L);
        final List<String> bigLost = new CopyOnWriteArrayList<>();
        EpochClaims.watch(bigEpochs, "cnX", 4, 1, 5L, why -> bigLost.add("cnX: " + why));
        EpochClaims.watch(bigEpochs, "cn3", 1, 2, 3L, why -> bigLost.add("cn3: " + why));

        final IMap<String, Long> epochs = splitOff.getMap(ScytheNode.EPOCHS);
        final long token = 9L;
        final long epoch = MapLockStep.underLock(epochs, "cn1", "epoch of cn1", () -> {
            final Long last = epochs.get("cn1");
            final long next = (last == null ? 0 : last) + 1;
            assertThat(MapLockStep.raise(epochs, "cn1", next)).isTrue();
            assertThat(EpochClaims.claim(epochs, EpochClaims.epochKey("cn1", next), token)).isTrue();
            return next;
        }, logged::add);
        assertThat(epoch).isEqualTo(1); // computed from the split side's empty map: the cluster had given it
        epochs.put(ScytheNode.SLOTS, 1L);
        epochs.put(ScytheNode.SLOTS + ":cn1", 1L);
        assertThat(EpochClaims.claim(epochs, EpochClaims.slotKey(1), token)).isTrue();
        epochs.put("cn2", 3L); // cn2 restarted twice on this side
        epochs.put("cn3", 1L);
        epochs.put(EpochClaims.epochKey("cn3", 1), 11L); // this side's cn3.e1
        assertThat(logged).isEmpty(); // the lock was never lost: MapLockStep sees nothing wrong

        merge(splitOff, big);
        assertThat(within30s(() -> splitOff.getCluster().getMembers().size() == 2
            && Long.valueOf(11).equals(bigEpochs.get(EpochClaims.epochKey("cn3", 1))))).isTrue();
        // The higher value stays: counters never go down, and of two claims one stands.
        assertThat(bigEpochs.get("cn2")).isEqualTo(3);
        assertThat(bigEpochs.get("cn1")).isEqualTo(7);
        assertThat(bigEpochs.get(EpochClaims.slotKey(1))).isEqualTo(9);
        assertThat(EpochClaims.conflict(splitOff.getMap(ScytheNode.EPOCHS), "cn1", epoch, 1, token))
            .isEqualTo("the cluster has given cn1 epoch 7, above its epoch 1: its epoch was taken on one side of a "
                + "split (the other side had given it), or a later incarnation started");
        assertThat(within30s(() -> bigLost.size() >= 2)).isTrue();
        assertThat(bigLost).containsExactlyInAnyOrder(
            "cnX: another incarnation holds slot 1 (both sides of a split handed it out; the other's claim won at the "
                + "merge)",
            "cn3: another incarnation holds cn3.e1 (both sides of a split handed it out; the other's claim won at the "
                + "merge)");
        assertThat(EpochClaims.conflict(bigEpochs, "cn3", 1, 2, 3L)).contains("another incarnation holds cn3.e1");
        assertThat(EpochClaims.conflict(bigEpochs, "cn3", 1, 2, 11L)).isNull(); // the winner keeps it

        // The losers leave: cnX, which lost slot 1, drops slots:cnX; cn3 lost only its epoch and keeps its slot.
        bigEpochs.put(EpochClaims.slotKey(2), 3L);
        assertThat(EpochClaims.dropLostSlot(bigEpochs, "cn3", 2, 3L)).isFalse();
        assertThat(EpochClaims.dropLostSlot(splitOff.getMap(ScytheNode.EPOCHS), "cn1", 1, token)).isFalse();
        assertThat(EpochClaims.dropLostSlot(bigEpochs, "cnX", 1, 5L)).isTrue();
        assertThat(bigEpochs.get(ScytheNode.SLOTS + ":cnX")).isNull();
        bigEpochs.put(ScytheNode.SLOTS + ":cnX", 1L); // as if cnX was down at the merge: its restart must see it
        bigEpochs.remove(EpochClaims.slotKey(2));
        // cnX restarts (epoch 5, token 6) through the real slot step: slots:cnX=1 survived the merge, but slot 1's
        // claim is cn1's (its epoch 1's token). It took slot 1 back and threw cn1 out, which did the same at its
        // restart, forever; now it takes a fresh slot and cn1 keeps its claim.
        bigEpochs.put(EpochClaims.epochKey("cnX", 5), 6L);
        final long cnXSlot = MapLockStep.underLock(bigEpochs, ScytheNode.SLOTS, "slot of cnX",
            () -> EpochClaims.takeSlot(bigEpochs, "cnX", 6L, 255), logged::add);
        assertThat(cnXSlot).isEqualTo(2);
        assertThat(bigEpochs.get(ScytheNode.SLOTS + ":cnX")).isEqualTo(2);
        assertThat(bigEpochs.get(EpochClaims.slotKey(1))).isEqualTo(9);
        assertThat(EpochClaims.conflict(bigEpochs, "cnX", 5, 2, 6L)).isNull();
        // cn1's restart (epoch 8, token 12) keeps its slot: the claim passes from its earlier incarnation.
        bigEpochs.put(EpochClaims.epochKey("cn1", 8), 12L);
        assertThat(EpochClaims.takeSlot(bigEpochs, "cn1", 12L, 255)).isEqualTo(1);
        assertThat(bigEpochs.get(EpochClaims.slotKey(1))).isEqualTo(12);
    }

    /**
     * Without a split: the loser of two slot steps that raised the count to the same value (a step done again after
     * its lock was lost) had set its {@code slots:<node>} before its claim failed; its retry took that slot and
     * overwrote the winner's claim. Now it takes the next slot, and the winner keeps its own.
     */
    @Test
    void shouldGiveTheLoserOfASlotClaimAFreshSlotNotTheWinners() throws Exception {
        final IMap<String, Long> epochs = member(null).getMap(ScytheNode.EPOCHS);
        epochs.put(EpochClaims.epochKey("cnA", 1), 21L);
        epochs.put(EpochClaims.epochKey("cnB", 1), 22L);
        final AtomicInteger attempts = new AtomicInteger();
        final long slot = MapLockStep.underLock(epochs, ScytheNode.SLOTS, "slot of cnB", () -> {
            if (attempts.incrementAndGet() == 1) { // cnA's step, which raised the count to 1 too, claims first
                epochs.put(ScytheNode.SLOTS + ":cnA", 1L);
                epochs.put(EpochClaims.slotKey(1), 21L);
            }
            return EpochClaims.takeSlot(epochs, "cnB", 22L, 255);
        }, logged::add);
        assertThat(attempts).hasValue(2);
        assertThat(slot).isEqualTo(2);
        assertThat(epochs.get(EpochClaims.slotKey(1))).isEqualTo(21);
        assertThat(epochs.get(EpochClaims.slotKey(2))).isEqualTo(22);
        assertThat(epochs.get(ScytheNode.SLOTS + ":cnB")).isEqualTo(2);
        assertThat(logged).singleElement().asString().contains("slot 1 was claimed already by another incarnation");
    }

    /**
     * Every CN restart claimed {@code claim:<node>.e<epoch>} and none was ever removed: the map grew by a key per
     * restart and each slot step scanned them all. Six incarnations of cn1 in a row, each through the real slot
     * step, keep one slot and leave one epoch claim of cn1's (the last); cn10's are not cn1's.
     */
    @Test
    void shouldKeepOneEpochClaimPerNodeAcrossRestartsAndItsSlot() throws Exception {
        final IMap<String, Long> epochs = member(null).getMap(ScytheNode.EPOCHS);
        epochs.put(EpochClaims.epochKey("cn10", 1), 99L);
        for (long epoch = 1; epoch <= 6; epoch++) {
            final long token = 100 + epoch;
            assertThat(EpochClaims.claim(epochs, EpochClaims.epochKey("cn1", epoch), token)).isTrue();
            assertThat(EpochClaims.takeSlot(epochs, "cn1", token, 255)).isEqualTo(1);
            assertThat(EpochClaims.pruneEpochClaimsBelow(epochs, "cn1", epoch)).isEqualTo(epoch == 1 ? 0 : 1);
            assertThat(epochs.keySet()).filteredOn(k -> k.startsWith("claim:cn1.e"))
                .containsExactly(EpochClaims.epochKey("cn1", epoch));
            assertThat(EpochClaims.conflict(epochs, "cn1", epoch, 1, token)).isNull();
        }
        assertThat(epochs.get(EpochClaims.epochKey("cn10", 1))).isEqualTo(99);
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

    /**
     * Issue 23 §1: a lock another holds and never releases (its holder stopped answering) held a start without end;
     * now the step gives the start up, naming its lock, once the bound passed, and its body never ran.
     */
    @Test
    void shouldGiveTheStartUpWhenAnotherHoldsTheLockPastTheBound() throws Exception {
        final IMap<String, Long> epochs = member(null).getMap("scythe.epochs");
        final Thread holder = new Thread(() -> epochs.lock("slots"));
        holder.start();
        holder.join();
        final AtomicInteger ran = new AtomicInteger();
        final long startNs = System.nanoTime();
        assertThatThrownBy(() -> MapLockStep.underLock(epochs, "slots", "slot of cn1", 700, () -> ran.incrementAndGet(),
            logged::add)).isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("slot of cn1: the lock on scythe.epochs[slots] stayed held by another for")
            .hasMessageContaining("giving the start up");
        final long tookMs = java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs);
        assertThat(tookMs).isBetween(600L, 30_000L);
        assertThat(ran).hasValue(0);
        assertThat(epochs.isLocked("slots")).isTrue(); // still the holder's: nothing of it was touched
    }

    /** A lock held for less than the bound is waited for, and the step runs once it is free. */
    @Test
    void shouldRunTheStepOnceALockHeldForAWhileIsFree() throws Exception {
        final IMap<String, Long> epochs = member(null).getMap("scythe.epochs");
        final java.util.concurrent.CountDownLatch locked = new java.util.concurrent.CountDownLatch(1);
        final Thread holder = new Thread(() -> {
            epochs.lock("slots");
            locked.countDown();
            try {
                Thread.sleep(300);
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            epochs.unlock("slots");
        });
        holder.start();
        locked.await();
        assertThat(MapLockStep.underLock(epochs, "slots", "slot of cn1", 20_000, () -> 7L, logged::add)).isEqualTo(7L);
        holder.join();
        assertThat(epochs.isLocked("slots")).isFalse();
    }
}
