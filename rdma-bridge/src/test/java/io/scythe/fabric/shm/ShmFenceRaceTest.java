package io.scythe.fabric.shm;

import io.scythe.fabric.CompletionQueue;
import io.scythe.fabric.CostModel;
import io.scythe.fabric.FabricException;
import io.scythe.fabric.FabricOptions;
import io.scythe.fabric.MemoryKind;
import io.scythe.fabric.MemoryRegion;
import io.scythe.fabric.Nic;
import io.scythe.fabric.QpOptions;
import io.scythe.fabric.QueuePair;
import io.scythe.fabric.WcStatus;
import io.scythe.fabric.WorkRequest;
import io.scythe.fabric.shm.ShmNic.ConnectStep;
import io.vertx.core.Future;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;

import static io.scythe.fabric.shm.ShmLayout.CONNECTION_SLOTS;
import static io.scythe.fabric.shm.ShmLayout.CONN_CLOSED;
import static io.scythe.fabric.shm.ShmLayout.CONN_FREE;
import static io.scythe.fabric.shm.ShmLayout.CONN_READY;
import static io.scythe.fabric.shm.ShmLayout.CONN_REVOKED;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A fence racing a connect on the shm fabric (review finding A6): whatever step of {@link ShmNic#connect} the fence
 * lands on, the connect is refused or its queue pair is revoked, and no verb of the fenced node lands after
 * {@link Nic#fence} returned. Every file is removed, even on failure.
 */
class ShmFenceRaceTest {
    private ShmFabric fabric;
    private ShmNic mn;
    private MemoryRegion counter;

    /** How a connect followed by one FAA(+1) ended. */
    enum Outcome { REFUSED, REVOKED, ADDED, ADDED_AFTER_FENCE }

    @BeforeEach
    void setUp() {
        fabric = new ShmFabric(new FabricOptions().provider(ShmFabric.NAME)
            .cluster("fr-" + ProcessHandle.current().pid() + "-" + System.nanoTime()).costModel(CostModel.zero()));
        mn = (ShmNic) fabric.attachNow("mn");
        counter = mn.register("counter", 64, MemoryKind.HOST);
    }

    @AfterEach
    void tearDown() {
        final Path root = fabric.root();
        fabric.close();
        MappedFiles.deleteTree(root);
        assertThat(Files.exists(root)).as("files left in /dev/shm").isFalse();
    }

    @ParameterizedTest
    @EnumSource(ConnectStep.class)
    void shouldRefuseOrRevokeAConnectionTheResponderFencesAtThisStep(final ConnectStep step) {
        final ShmNic cn = (ShmNic) fabric.attachNow("cn");
        assertFenceAtStepRefusesOrRevokes(cn, step, () -> mn.fence("cn"));
    }

    @ParameterizedTest
    @EnumSource(ConnectStep.class)
    void shouldRefuseOrRevokeAConnectionTheInitiatorFencesAtThisStep(final ConnectStep step) {
        final ShmNic cn = (ShmNic) fabric.attachNow("cn");
        assertFenceAtStepRefusesOrRevokes(cn, step, () -> cn.fence("mn"));
    }

    /** Before the re-check a fence refuses the connect; after it, the returned queue pair is revoked. */
    private void assertFenceAtStepRefusesOrRevokes(final ShmNic cn, final ConnectStep step, final Runnable fence) {
        cn.connectHook = at -> {
            if (at == step) {
                fence.run();
            }
        };
        assertThat(connectAndAdd(cn, () -> false))
            .isEqualTo(step == ConnectStep.RECHECKED ? Outcome.REVOKED : Outcome.REFUSED);
        assertThat(counter.buffer().getLongVolatile(0)).as("no FAA landed").isZero();
        assertThat(readySlotsOf("cn")).as("no ready slot left to the fenced node").isZero();
    }

    @ParameterizedTest
    @EnumSource(ConnectStep.class)
    void shouldNotDisturbTheConnectOfANodeThatIsNotFenced(final ConnectStep step) {
        final ShmNic cn = (ShmNic) fabric.attachNow("cn");
        cn.connectHook = at -> {
            if (at == step) {
                mn.fence("someone-else");
            }
        };
        assertThat(connectAndAdd(cn, () -> false)).isEqualTo(Outcome.ADDED);
        assertThat(counter.buffer().getLongVolatile(0)).isEqualTo(1);
    }

    @Test
    void shouldHaveTheConnectionManagerRevokeASlotReadiedAfterTheFenceAndNeverAcceptIt() {
        final List<QueuePair> accepted = new CopyOnWriteArrayList<>();
        final CompletionQueue acceptorCq = mn.createCompletionQueue(16);
        mn.acceptor(new Nic.QpAcceptor() {
            @Override
            public CompletionQueue completionQueueFor(final String peerNode) {
                return acceptorCq;
            }

            @Override
            public void accepted(final QueuePair incoming) {
                accepted.add(incoming);
            }
        });
        final ShmNic cn = (ShmNic) fabric.attachNow("cn");
        final boolean[] revokedByManager = new boolean[1];
        cn.connectHook = at -> {
            if (at == ConnectStep.NAMED) {
                mn.fence("cn"); // the slot is only claimed: the fence's scan passes it by
            } else if (at == ConnectStep.PUBLISHED) {
                // A connector stopped here, ready but not re-checked: the memory node's connection manager acts.
                final int slot = slotOf("cn");
                final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (mn.file.connectionState(slot) != CONN_REVOKED && System.nanoTime() < deadline) {
                    Thread.onSpinWait();
                }
                revokedByManager[0] = mn.file.connectionState(slot) == CONN_REVOKED;
            }
        };
        assertThat(connectAndAdd(cn, () -> false)).isEqualTo(Outcome.REFUSED);
        assertThat(revokedByManager[0]).as("revoked by the connection manager").isTrue();
        assertThat(accepted).as("never accepted").isEmpty();
    }

    /**
     * A closed slot comes free only when no verb is inside it: a stopped initiator's late decrement must not land in
     * the next connection's count, which a fence barrier would then under-read. A gone initiator's count is dropped.
     */
    @Test
    void shouldFreeAClosedSlotOnlyOnceNoVerbIsInsideIt() throws Exception {
        final Process finished = new ProcessBuilder("true").start();
        assertThat(finished.waitFor(10, TimeUnit.SECONDS)).isTrue();
        final int stopped = mn.file.claimConnection("cn1", ProcessHandle.current().pid(), 1);
        final int dead = mn.file.claimConnection("cn2", finished.pid(), 2);
        mn.file.executing(stopped, 1);
        mn.file.executing(dead, 1);
        mn.file.transition(stopped, CONN_READY, CONN_CLOSED); // the other end closed them, verbs inside
        mn.file.transition(dead, CONN_READY, CONN_CLOSED);
        awaitState(dead, CONN_FREE);
        assertThat(mn.file.executing(dead)).as("the gone initiator's count dropped").isZero();
        assertThat(mn.file.connectionState(stopped)).as("kept while a verb is inside").isEqualTo(CONN_CLOSED);
        mn.file.executing(stopped, -1);
        awaitState(stopped, CONN_FREE);
        assertThat(mn.file.executing(mn.file.claimConnection("cn3", ProcessHandle.current().pid(), 3))).isZero();
    }

    private void awaitState(final int slot, final int state) throws InterruptedException {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30); // loaded machine: bounds, not delays
        while (mn.file.connectionState(slot) != state && System.nanoTime() - deadline < 0) {
            Thread.sleep(1); // polls the connection manager's work, over a second of grace
        }
        assertThat(mn.file.connectionState(slot)).as("state of slot %d", slot).isEqualTo(state);
    }

    /**
     * A connector thread connects and adds in a loop, pausing a random time at a random step of each connect, while
     * this thread fences it a random time after its first connect began. No add posted after fence() returned may
     * succeed, and after the fence and its barrier the counter must not move. Then the node is readmitted.
     */
    @Test
    void shouldLetNoVerbLandAfterTheFenceWhileConnectsRaceIt() throws Exception {
        final long seed = System.nanoTime();
        final Random random = new Random(seed);
        final ShmNic cn = (ShmNic) fabric.attachNow("cn");
        final ExecutorService connector = Executors.newSingleThreadExecutor();
        final int[] outcomes = new int[Outcome.values().length];
        try {
            // At least 100 rounds, and on until a connect was refused. Whether a round ends refused or revoked is
            // timing: on an idle machine a connected queue pair's add rarely falls after the fence (clean-clone CI
            // runs 43 and 47: none in 2,000 rounds), so the revoked end is also made certain after the rounds.
            for (int round = 0; round < 100 || (round < 2_000 && outcomes[Outcome.REFUSED.ordinal()] == 0); round++) {
                final ConnectStep pauseAt = ConnectStep.values()[random.nextInt(ConnectStep.values().length)];
                final long pauseNs = random.nextInt(30_000);
                final AtomicBoolean connecting = new AtomicBoolean();
                final AtomicBoolean fenceReturned = new AtomicBoolean();
                cn.connectHook = at -> {
                    connecting.set(true);
                    if (at == pauseAt) {
                        spin(pauseNs);
                    }
                };
                final CompletableFuture<Outcome> connects = CompletableFuture.supplyAsync(() -> {
                    Outcome outcome;
                    do {
                        outcome = connectAndAdd(cn, fenceReturned::get);
                        outcomes[outcome.ordinal()]++;
                    } while (outcome == Outcome.ADDED); // ADDED_AFTER_FENCE ends the round: asserted below
                    return outcome;
                }, connector);
                while (!connecting.get()) {
                    Thread.onSpinWait(); // then fence within about one connect's time
                }
                spin(random.nextInt(60_000));
                mn.fence("cn");
                fenceReturned.set(true);
                mn.fenceBarrier("cn").await(5, TimeUnit.SECONDS);
                final long afterFence = counter.buffer().getLongVolatile(0);
                assertThat(connects.get(10, TimeUnit.SECONDS)).as("seed %d round %d", seed, round)
                    .isNotEqualTo(Outcome.ADDED_AFTER_FENCE);
                assertThat(counter.buffer().getLongVolatile(0)).as("seed %d round %d: FAA landed after the fence",
                    seed, round).isEqualTo(afterFence);
                assertThat(readySlotsOf("cn")).as("seed %d round %d", seed, round).isZero();
                mn.readmit("cn");
            }
        } finally {
            connector.shutdownNow();
            connector.awaitTermination(10, TimeUnit.SECONDS);
        }
        assertThat(outcomes[Outcome.REFUSED.ordinal()]).as("seed %d: some connects were refused", seed).isPositive();

        // The revoked end, made certain: a queue pair connected before the fence, its add posted after the barrier.
        cn.connectHook = at -> { };
        final CompletionQueue cq = cn.createCompletionQueue(16);
        Future<QueuePair> connected = cn.connect("mn", cq, new QpOptions());
        final long slotDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (connected.failed() && connected.cause().getMessage().contains("no free connection slot")
            && System.nanoTime() - slotDeadline < 0) {
            Thread.sleep(1); // the rounds' closed slots come free after their grace period
            connected = cn.connect("mn", cq, new QpOptions());
        }
        assertThat(connected.succeeded()).as("connects once readmitted (%s)", connected.cause()).isTrue();
        mn.fence("cn");
        mn.fenceBarrier("cn").await(5, TimeUnit.SECONDS);
        final long beforeAdd = counter.buffer().getLongVolatile(0);
        final WcStatus status = ShmMultiProcessTest.run(connected.result(), cq,
            new WorkRequest().fetchAndAdd(counter.address(), counter.rkey(), 1, new UnsafeBuffer(new byte[8]), 0));
        connected.result().close();
        assertThat(status).as("an add on a queue pair connected before the fence").isEqualTo(WcStatus.REVOKED);
        assertThat(counter.buffer().getLongVolatile(0)).as("the revoked add did not land").isEqualTo(beforeAdd);
        mn.readmit("cn");
    }

    /**
     * Connects {@code cn} to the memory node and adds 1 to its counter; retries while slots are used up. An add that
     * succeeds although {@code fenced} said so before it was posted is {@link Outcome#ADDED_AFTER_FENCE}.
     */
    private Outcome connectAndAdd(final Nic cn, final BooleanSupplier fenced) {
        final CompletionQueue cq = cn.createCompletionQueue(16);
        while (true) {
            final Future<QueuePair> connected = cn.connect("mn", cq, new QpOptions());
            assertThat(connected.isComplete()).isTrue();
            if (connected.failed()) {
                assertThat(connected.cause()).isInstanceOf(FabricException.class);
                if (connected.cause().getMessage().contains("no free connection slot")) {
                    Thread.yield(); // closed slots come free after their grace period
                    continue;
                }
                assertThat(connected.cause()).hasMessageContaining("fenced");
                return Outcome.REFUSED;
            }
            final QueuePair qp = connected.result();
            final boolean fencedBefore = fenced.getAsBoolean();
            final WcStatus status = ShmMultiProcessTest.run(qp, cq,
                new WorkRequest().fetchAndAdd(counter.address(), counter.rkey(), 1, new UnsafeBuffer(new byte[8]), 0));
            qp.close();
            assertThat(status).isIn(WcStatus.SUCCESS, WcStatus.REVOKED);
            if (status == WcStatus.REVOKED) {
                return Outcome.REVOKED;
            }
            return fencedBefore ? Outcome.ADDED_AFTER_FENCE : Outcome.ADDED;
        }
    }

    private int readySlotsOf(final String initiator) {
        int ready = 0;
        for (int slot = 0; slot < CONNECTION_SLOTS; slot++) {
            if (mn.file.connectionState(slot) == CONN_READY && initiator.equals(mn.file.initiator(slot))) {
                ready++;
            }
        }
        return ready;
    }

    private int slotOf(final String initiator) {
        for (int slot = 0; slot < CONNECTION_SLOTS; slot++) {
            if (mn.file.connectionState(slot) == CONN_READY && initiator.equals(mn.file.initiator(slot))) {
                return slot;
            }
        }
        throw new AssertionError("no ready slot of " + initiator);
    }

    private static void spin(final long ns) {
        final long until = System.nanoTime() + ns;
        while (System.nanoTime() - until < 0) {
            Thread.onSpinWait();
        }
    }
}
