package io.scythe.txn;

import io.scythe.fabric.Opcode;
import io.scythe.fabric.QueuePair;
import io.scythe.fabric.VerbFaultInjector;
import io.scythe.fabric.WcStatus;
import io.scythe.storage.ObjectLayout;
import io.scythe.txn.scythe.ScytheTxn;
import io.scythe.txn.onesided.OneSidedTxn;
import io.vertx.core.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntPredicate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Verbs that take or release a lock and fail after they were posted ("lands, but reports failure"): never posted
 * again, never ignored; the loop gives up (recovery settles the lock), and the client of the aborted attempt hears
 * "not serving" (never committed), not "outcome unknown". A poll of a ticket's turn that fails keeps the ticket.
 */
class LockVerbFaultTest {
    private static final String T = "accounts";
    private OneMemoryNode node;
    private final List<String> gaveUp = new CopyOnWriteArrayList<>();

    @BeforeEach
    void setUp() throws Exception {
        node = new OneMemoryNode(T, 16);
    }

    @AfterEach
    void tearDown() throws Exception {
        node.close();
    }

    /** Fails the {@code opcode} verbs to the memory node whose number (0, 1, ... as they land) {@code fails} picks. */
    private static VerbFaultInjector failing(final Opcode opcode, final AtomicInteger landed, final IntPredicate fails) {
        return (QueuePair qp, Opcode op) -> op == opcode && "mn".equals(qp.remoteNode())
            && fails.test(landed.getAndIncrement()) ? WcStatus.TRANSPORT_RETRY_EXCEEDED : null;
    }

    private <R> R on(final java.util.function.Function<TxnRuntime, Future<R>> body) throws Exception {
        return node.on(rt -> {
            rt.onGiveUp(gaveUp::add);
            return body.apply(rt);
        });
    }

    private long word(final long key, final int offset) {
        return node.table.objectMemory().getLongVolatile(node.table.offsetOf(node.table.lookup(key)) + offset);
    }

    private static Future<Object> outcome(final Future<?> f) {
        return f.transform(ar -> Future.succeededFuture(ar.succeeded() ? "ok" : ar.cause()));
    }

    @Test
    void shouldNotPostAgainAnAbortsUnlockFaaThatFailedAfterLandingButGiveTheLoopUp() throws Exception {
        final AtomicInteger faas = new AtomicInteger();
        final Object aborted = on(rt -> {
            final ScytheTxn txn = new ScytheTxn(rt, true); // TOCC: the read holds key 3's Takeout Lock
            return txn.readForUpdate(T, 3).compose(v -> {
                node.verbFaults.set(failing(Opcode.FETCH_AND_ADD, faas, n -> n == 0)); // the unlock lands, fails
                return outcome(txn.abort());
            });
        });
        assertThat(faas.get()).as("FAAs that landed on upper: the unlock once, never again").isEqualTo(1);
        assertThat(word(3, ObjectLayout.UPPER_OFFSET)).as("upper moved once: the lock is free, not passed on twice")
            .isEqualTo(word(3, ObjectLayout.LOWER_OFFSET));
        assertThat(aborted).isInstanceOf(NotServingException.class);
        assertThat(((Throwable) aborted).getMessage()).contains("nothing committed");
        assertThat(gaveUp).hasSize(1);
        assertThat(gaveUp.get(0)).contains("releasing its locks failed").contains("TRANSPORT_RETRY_EXCEEDED");
    }

    @Test
    void shouldGiveTheLoopUpWhenAnAbortsCasUnlockWriteFailsAndTellTheClientNothingCommitted() throws Exception {
        final AtomicInteger writes = new AtomicInteger();
        final List<Object> seen = on(rt -> {
            final Coordinator coordinator = new Coordinator(rt, io.scythe.txn.spi.ProtocolRegistry.protocol("ford-occ"), 3);
            final int[] bodies = new int[1];
            return outcome(coordinator.run(txn -> {
                bodies[0]++;
                return txn.readForUpdate(T, 3).compose(v -> { // FORD locks it (CAS) as it reads
                    node.verbFaults.set(failing(Opcode.WRITE, writes, n -> n == 0)); // the WRITE of 0 fails
                    return Future.<Long>failedFuture(new AbortException(AbortReason.USER, "rolled back"));
                });
            })).compose(first -> outcome(coordinator.run(txn -> {
                bodies[0]++;
                return Future.succeededFuture(0L);
            })).map(second -> {
                final List<Object> out = new ArrayList<>();
                out.add(first);
                out.add(second);
                out.add(bodies[0]);
                return out;
            }));
        });
        assertThat(seen.get(0)).as("the aborted attempt's client: never committed, not 'outcome unknown'")
            .isInstanceOf(NotServingException.class);
        assertThat(((Throwable) seen.get(0)).getMessage()).contains("nothing committed");
        assertThat(gaveUp).hasSize(1);
        assertThat(gaveUp.get(0)).contains("releasing its locks failed");
        assertThat(writes.get()).as("the WRITE of 0 was not posted again").isEqualTo(1);
        assertThat(seen.get(1)).as("the loop serves nothing more").isInstanceOf(NotServingException.class);
        assertThat(seen.get(2)).as("neither the aborted attempt nor the next transaction ran again").isEqualTo(1);
        assertThat(word(3, ObjectLayout.CAS_LOCK_OFFSET)).as("the WRITE did land").isZero();
    }

    @Test
    void shouldGiveTheLoopUpWhenFordsExecutionLockCasFailsAfterItWasPosted() throws Exception {
        final AtomicInteger cases = new AtomicInteger();
        final Object locked = on(rt -> {
            final Txn txn = io.scythe.txn.spi.ProtocolRegistry.protocol("ford-occ").begin(rt, false);
            node.verbFaults.set(failing(Opcode.COMPARE_AND_SWAP, cases, n -> n == 0)); // the lock CAS lands, fails
            return outcome(txn.readForUpdate(T, 3)); // FORD locks it (CAS + READ in one doorbell) as it reads
        });
        assertThat(cases.get()).as("the lock CAS, posted once").isEqualTo(1);
        assertThat(locked).as("not the verb's own failure: the lock may be held").isInstanceOf(Throwable.class)
            .isNotInstanceOf(io.scythe.bridge.VerbException.class);
        assertThat(gaveUp).as("the CAS may have taken the word: only recovery can free it").hasSize(1);
        assertThat(gaveUp.get(0)).contains("its lock CAS on key 3 of " + T + " failed after it was posted");
    }

    @Test
    void shouldGiveACommitUpInDoubtWhenFordsWriteBackFailsAfterItWasPosted() throws Exception {
        final AtomicInteger writes = new AtomicInteger();
        final Object committed = on(rt -> {
            final Txn txn = io.scythe.txn.spi.ProtocolRegistry.protocol("ford-occ").begin(rt, false);
            return txn.readForUpdate(T, 3).compose(v -> {
                txn.write(T, 3, v, 0, v.capacity());
                node.verbFaults.set(failing(Opcode.WRITE, writes, n -> n == 0)); // the write-back's first WRITE
                return outcome(txn.commit());
            });
        });
        assertThat(committed).as("past its point of no return: neither committed nor aborted for its client")
            .isInstanceOf(OutcomeUnknownException.class);
        assertThat(gaveUp).hasSize(1);
        assertThat(gaveUp.get(0)).contains("a write-back verb failed and may still land");
    }

    @Test
    void shouldKeepATicketWhosePollsFailAndGiveTheLoopUpWhenTheyFailTwentyTimesInARow() throws Exception {
        final AtomicInteger polls = new AtomicInteger();
        final Object waited = on(rt -> queuedBehind(rt, failing(Opcode.READ, polls, n -> true), // MN unreachable
            (holder, waiter) -> outcome(waiter.readForUpdate(T, 3)).compose(o -> {
                node.verbFaults.set(null);
                return holder.abort().map(o); // upper reaches the waiter's ticket, which nobody will release
            })));
        assertThat(polls.get()).as("polls of upper").isEqualTo(20);
        assertThat(waited).isInstanceOf(NotServingException.class);
        assertThat(gaveUp).hasSize(1);
        assertThat(gaveUp.get(0)).contains("Takeout ticket");
        assertThat(word(3, ObjectLayout.LOWER_OFFSET) - word(3, ObjectLayout.UPPER_OFFSET))
            .as("the waiter's ticket stays queued: its loop gave up, and recovery cancels it").isEqualTo(1);
    }

    @Test
    void shouldWaitOnForATurnThroughPollsThatFailNotManyInARow() throws Exception {
        final AtomicInteger reads = new AtomicInteger();
        // 30 polls fail, 15 in a row at most; the holder lets go once they are done.
        final Object committed = on(rt -> queuedBehind(rt, failing(Opcode.READ, reads, n -> n < 31 && n != 15),
            (holder, waiter) -> {
                final Future<Object> turn = outcome(waiter.readForUpdate(T, 3).compose(v -> waiter.commit()));
                return releaseAfter(rt, holder, reads, 32, turn).compose(v -> turn);
            }));
        assertThat(gaveUp).as("the waiter kept its ticket (polls landed: %d)", reads.get()).isEmpty();
        assertThat(committed).isEqualTo("ok");
        assertThat(word(3, ObjectLayout.LOWER_OFFSET)).isEqualTo(word(3, ObjectLayout.UPPER_OFFSET));
    }

    /**
     * A TOCC holder of key 3's Takeout Lock, and a waiter (younger) whose read will queue behind it: {@code then}
     * runs with both once the holder holds the lock and {@code faults} are on.
     */
    private <R> Future<R> queuedBehind(final TxnRuntime rt, final VerbFaultInjector faults,
                                       final java.util.function.BiFunction<ScytheTxn, ScytheTxn, Future<R>> then) {
        final ScytheTxn holder = new ScytheTxn(rt, true);
        final ScytheTxn waiter = new ScytheTxn(rt, true);
        return holder.readForUpdate(T, 3).compose(held -> {
            node.verbFaults.set(faults);
            return then.apply(holder, waiter);
        });
    }

    /**
     * Aborts {@code holder} once {@code reads} reached {@code count}, or at once when the waiter's {@code turn} ended
     * before (it gave its ticket up: its polls stopped, and waiting for more would only hang the test until its
     * timeout, as it once did in a suite run, with nothing said about why).
     */
    private static Future<Void> releaseAfter(final TxnRuntime rt, final OneSidedTxn holder, final AtomicInteger reads,
                                             final int count, final Future<?> turn) {
        if (reads.get() >= count || turn.isComplete()) {
            return holder.abort();
        }
        return rt.timers().after(20_000).compose(v -> releaseAfter(rt, holder, reads, count, turn));
    }
}
