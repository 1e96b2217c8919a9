package io.scythe.cluster;

import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A rejoin's driver dying midway (issue 23 §2): its claim names its Hazelcast member, so once that member left another
 * CN takes the claim over (one claimer wins) and drives the rejoin from the step reached; a live driver keeps it.
 */
class MemoryNodeRejoinClaimTest {
    private static String driver(final String cn, final String member) {
        return new JsonObject().put("cn", cn).put("member", member).encode();
    }

    @Test
    void shouldLetAnotherComputeNodeTakeOverARejoinOnlyOnceItsDriversMemberLeft() {
        final ConcurrentMap<String, String> claims = new ConcurrentHashMap<>();
        final List<String> said = new ArrayList<>();
        final String key = "mn2:replacement-member";
        final String a = driver("cn0", "member-a");
        final String b = driver("cn1", "member-b");
        final String c = driver("cn2", "member-c");
        assertThat(MemoryNodeRejoin.claim(claims, key, a, Set.of("member-a", "member-b", "member-c"), said::add))
            .as("free: cn0 drives it").isTrue();
        assertThat(MemoryNodeRejoin.claim(claims, key, b, Set.of("member-a", "member-b", "member-c"), said::add))
            .as("cn0 is alive: cn1 leaves it").isFalse();
        assertThat(MemoryNodeRejoin.claim(claims, key, a, Set.of("member-a", "member-b"), said::add))
            .as("cn0 itself, asked again (a rescan): it drives already").isFalse();
        assertThat(said).isEmpty();
        // cn0's member left (the driver died midway): the first CN to look takes it over, the next finds it held.
        assertThat(MemoryNodeRejoin.claim(claims, key, b, Set.of("member-b", "member-c"), said::add)).isTrue();
        assertThat(claims.get(key)).isEqualTo(b);
        assertThat(said).singleElement().asString().contains("takes over the rejoin " + key).contains("cn0");
        assertThat(MemoryNodeRejoin.claim(claims, key, c, Set.of("member-b", "member-c"), said::add)).isFalse();
        assertThat(claims.get(key)).isEqualTo(b);
        // A claim of the older form (a bare CN name) names no member: left to its driver.
        claims.put("mn1:old", "cn0");
        assertThat(MemoryNodeRejoin.claim(claims, "mn1:old", c, Set.of("member-c"), said::add)).isFalse();
    }

    /**
     * Review 41: right before each configuration write the driver checks it still drives: its CN has its lease, it
     * holds the claim (a paused driver's may have been taken over), and the replacement is live (it may have died
     * during the settlement wait).
     */
    @Test
    void shouldStopADriverThatLostItsLeaseOrItsClaimOrWhoseReplacementLeft() {
        final ConcurrentMap<String, String> claims = new ConcurrentHashMap<>();
        final String key = "mn2:replacement-member";
        final String a = driver("cn0", "member-a");
        claims.put(key, a);
        final Set<String> live = Set.of("member-a", "replacement-member");
        MemoryNodeRejoin.stillDrives(false, claims, key, a, live, "replacement-member"); // drives: no throw
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> MemoryNodeRejoin.stillDrives(true, claims, key, a,
            live, "replacement-member")).hasMessageContaining("lost its lease");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> MemoryNodeRejoin.stillDrives(false, claims, key, a,
            Set.of("member-a"), "replacement-member")).hasMessageContaining("replacement's member");
        claims.put(key, driver("cn1", "member-b")); // taken over while cn0 was paused
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> MemoryNodeRejoin.stillDrives(false, claims, key, a,
            live, "replacement-member")).hasMessageContaining("is held by").hasMessageContaining("cn1");
    }

    /**
     * Review 41, second pass: a driver that stopped (its CN lost its lease) gives its claim up, so another CN claims
     * the rejoin while the stopped one's member still lives; a claim another took over meanwhile is not touched.
     */
    @Test
    void shouldGiveUpTheClaimOfAStoppedDriverSoAnotherComputeNodeTakesIt() {
        final ConcurrentMap<String, String> claims = new ConcurrentHashMap<>();
        final List<String> said = new ArrayList<>();
        final String key = "mn2:replacement-member";
        final String a = driver("cn0", "member-a");
        final String b = driver("cn1", "member-b");
        final Set<String> live = Set.of("member-a", "member-b");
        assertThat(MemoryNodeRejoin.claim(claims, key, a, live, said::add)).isTrue();
        MemoryNodeRejoin.release(claims, key, a, said::add);
        assertThat(claims).doesNotContainKey(key);
        assertThat(said).singleElement().asString().contains("gives up its claim on the rejoin " + key);
        assertThat(MemoryNodeRejoin.claim(claims, key, b, live, said::add)).as("cn0's member lives on").isTrue();
        MemoryNodeRejoin.release(claims, key, a, said::add);
        assertThat(claims.get(key)).as("cn1's claim stays").isEqualTo(b);
        assertThat(said).hasSize(1);
    }

    /**
     * The rejoin driver's check-then-write gap (review 41): between its check that it still drives and its write, its
     * claim may be taken over and another configuration made. Each write is a compare-and-set on the epoch the driver
     * checked: of two drivers that both saw epoch 1 settled, one writes the rejoin; the other's lands nothing (before:
     * an unconditional write, which here would throw "not removed", or, for the full copies below, land). A copy made
     * in epoch 2 is not declared full once epoch 3 is current (before: the unconditional write marked it full there).
     */
    @Test
    void shouldLandOneOfTwoDriversWritesAndNoneOverAConfigurationItsDriverDidNotSee() {
        final ConcurrentMap<String, String> entries = new ConcurrentHashMap<>();
        final io.scythe.txn.MemoryNodeConfiguration initial = io.scythe.txn.MemoryNodeConfiguration.initial(3, 2);
        final io.scythe.txn.MemoryNodeConfiguration removed = initial.without(2);
        entries.put(MemoryNodeFailover.KEY, MemoryNodeFailover.encode(removed));
        final long seen = removed.epoch();
        final io.scythe.txn.MemoryNodeConfiguration byB = MemoryNodeFailover.change(entries, initial, 2, seen,
            (now, node) -> now.rejoin(node, 2));
        assertThat(byB.epoch()).isEqualTo(seen + 1);
        assertThat(byB.rejoining()).containsExactly(2);
        assertThat(MemoryNodeFailover.change(entries, initial, 2, seen, (now, node) -> now.rejoin(node, 2)))
            .as("the superseded driver lands nothing").isNull();
        assertThat(MemoryNodeFailover.decode(entries.get(MemoryNodeFailover.KEY))).isEqualTo(byB);
        // Copied in byB's epoch; then another memory node fails over.
        final io.scythe.txn.MemoryNodeConfiguration later = byB.without(0);
        entries.put(MemoryNodeFailover.KEY, MemoryNodeFailover.encode(later));
        assertThat(MemoryNodeFailover.change(entries, initial, 2, byB.epoch(), (now, node) -> now.rejoined(node)))
            .as("a copy of an older epoch is not declared full").isNull();
        assertThat(MemoryNodeFailover.decode(entries.get(MemoryNodeFailover.KEY)).rejoining()).containsExactly(2);
        final io.scythe.txn.MemoryNodeConfiguration full = MemoryNodeFailover.change(entries, initial, 2,
            later.epoch(), (now, node) -> now.rejoined(node));
        assertThat(full.rejoining()).as("copied again in the current epoch: full").isEmpty();
        assertThat(full.epoch()).isEqualTo(later.epoch() + 1);
    }

    /**
     * A driver that gave up (here its steps threw, as after six changed configurations) releases its claim at once,
     * so another compute node takes the rejoin while this member lives on; one driven to its end keeps it. Before,
     * only a stopped driver released it.
     */
    @Test
    void shouldGiveUpTheClaimOfADriverThatFailed() throws Exception {
        final ConcurrentMap<String, String> claims = new ConcurrentHashMap<>();
        final java.util.List<String> log = new java.util.ArrayList<>();
        claims.put("mn2:m", "mine");
        assertThatThrownBy(() -> MemoryNodeRejoin.driveClaimed(claims, "mn2:m", "mine", () -> false, log::add, () -> {
            throw new IllegalStateException("the configuration kept changing after each copy of mn2");
        })).hasMessageContaining("kept changing");
        assertThat(claims).as("released").isEmpty();
        claims.put("mn2:m", "mine");
        MemoryNodeRejoin.driveClaimed(claims, "mn2:m", "mine", () -> false, log::add, () -> { });
        assertThat(claims).as("done: kept").containsEntry("mn2:m", "mine");
        MemoryNodeRejoin.driveClaimed(claims, "mn2:m", "mine", () -> true, log::add, () -> { });
        assertThat(claims).as("stopped: released").isEmpty();
    }

    /**
     * Stop 42's review fix, step 1 of the driver: its rejoin write is a compare-and-set on the epoch its wait found
     * settled, not on a configuration read after that wait. Here memory node mn0 fails over right after the wait found
     * mn2's removal (epoch 2) settled: the write on epoch 2 lands nothing, and the driver waits for the newer epoch's
     * settlement (cn1 drains it on the third look) before it writes the rejoin over it. Before the fix it re-read the
     * configuration after the wait and wrote the rejoin over epoch 3, which nobody had found settled (a redo record
     * naming the old process's addresses could still be rolled forward onto the new copy).
     */
    @Test
    void shouldWriteTheRejoinOnlyOverAnEpochItsWaitFoundSettled() throws Exception {
        final ConcurrentMap<String, String> entries = new ConcurrentHashMap<>();
        final io.scythe.txn.MemoryNodeConfiguration initial = io.scythe.txn.MemoryNodeConfiguration.initial(3, 2);
        final io.scythe.txn.MemoryNodeConfiguration removed = initial.without(2);
        final io.scythe.txn.MemoryNodeConfiguration later = removed.without(0);
        entries.put(MemoryNodeFailover.KEY, MemoryNodeFailover.encode(removed));
        final Set<Long> foundSettled = ConcurrentHashMap.newKeySet();
        final java.util.concurrent.atomic.AtomicInteger laterLooks = new java.util.concurrent.atomic.AtomicInteger();
        final List<Long> writtenOver = new ArrayList<>();
        final List<String> said = new ArrayList<>();
        final MemoryNodeRejoin.Configurations configurations = new MemoryNodeRejoin.Configurations() {
            @Override
            public io.scythe.txn.MemoryNodeConfiguration current() {
                return MemoryNodeFailover.decode(entries.get(MemoryNodeFailover.KEY));
            }

            @Override
            public String settlementWaitsFor(final long epoch) {
                if (epoch == removed.epoch()) {
                    if (foundSettled.add(epoch)) { // settled; right after this answer, mn0 fails over
                        entries.put(MemoryNodeFailover.KEY, MemoryNodeFailover.encode(later));
                    }
                    return null;
                }
                if (laterLooks.incrementAndGet() < 3) {
                    return "cn1 to drain";
                }
                foundSettled.add(epoch);
                return null;
            }

            @Override
            public io.scythe.txn.MemoryNodeConfiguration rejoinIn(final long seen) {
                final io.scythe.txn.MemoryNodeConfiguration written = MemoryNodeFailover.change(entries, initial, 2,
                    seen, (now, node) -> now.rejoin(node, 2));
                if (written != null) {
                    writtenOver.add(written.epoch() - 1);
                }
                return written;
            }

            @Override
            public List<String> names() {
                return List.of("mn0", "mn1", "mn2");
            }
        };
        final io.scythe.txn.MemoryNodeConfiguration c = MemoryNodeRejoin.rejoinWhenSettled(2, "mn2", configurations,
            () -> { }, said::add, System.nanoTime());
        assertThat(writtenOver).as("one rejoin written, over an epoch a wait found settled").singleElement()
            .isEqualTo(later.epoch());
        assertThat(foundSettled).contains(later.epoch());
        assertThat(laterLooks.get()).as("waited for the newer epoch's settlement").isEqualTo(3);
        assertThat(c.epoch()).isEqualTo(later.epoch() + 1);
        assertThat(c.rejoining()).containsExactly(2);
        assertThat(c.removed()).containsExactly(0);
        assertThat(MemoryNodeFailover.decode(entries.get(MemoryNodeFailover.KEY))).isEqualTo(c);
        assertThat(said).anySatisfy(line -> assertThat(line).contains("configuration changed before mn2's rejoin was "
            + "written: looks again"));
    }
}
