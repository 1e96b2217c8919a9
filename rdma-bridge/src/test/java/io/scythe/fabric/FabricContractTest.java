package io.scythe.fabric;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The behaviour every fabric provider must show, whatever carries the verbs: semantics, ordering, and every error
 * path of ../shared/DESIGN.md's fabric. A provider's test extends this class and says how to open its fabric (with
 * the zero cost model). Nodes cn0 and mn0 are attached by the same process; the test thread owns the completion
 * queues and polls them until the expected completions arrive.
 */
public abstract class FabricContractTest {
    /** How long a test waits for completions that a provider delivers asynchronously. */
    protected static final long TIMEOUT_NS = TimeUnit.SECONDS.toNanos(10);

    protected Fabric fabric;
    protected Nic cn;
    protected Nic mn;
    protected MemoryRegion data;
    protected RemoteRegion remote;
    protected CompletionQueue cq;
    protected QueuePair qp;
    protected final Recorder recorder = new Recorder();
    protected final UnsafeBuffer local = new UnsafeBuffer(new byte[4096]);

    /** Opens the provider under test with {@link CostModel#zero()}, cluster {@code cluster}, and nodes cn0, mn0. */
    protected abstract Fabric openFabric(String cluster) throws Exception;

    /** Whether the provider reads NIC clocks (a peer's one-sided, completion timestamps); disni does not. */
    protected boolean readsNicClocks() {
        return true;
    }

    /** Releases what {@link #openFabric} took beyond the fabric itself (files, Vert.x). */
    protected void closeProvider() throws Exception {
    }

    @BeforeEach
    void setUp() throws Exception {
        fabric = openFabric("contract-" + ProcessHandle.current().pid() + "-" + System.nanoTime());
        cn = fabric.attach("cn0").await(10, TimeUnit.SECONDS);
        mn = fabric.attach("mn0").await(10, TimeUnit.SECONDS);
        data = mn.register("data", 4096, MemoryKind.HOST);
        remote = data.describe();
        cq = cn.createCompletionQueue(1024);
        qp = connect(cn, "mn0", cq, new QpOptions().sendQueueDepth(16));
    }

    @AfterEach
    void tearDown() throws Exception {
        try {
            fabric.close();
        } finally {
            closeProvider();
        }
    }

    protected static QueuePair connect(final Nic from, final String to, final CompletionQueue cq,
                                       final QpOptions options) throws Exception {
        return from.connect(to, cq, options).await(10, TimeUnit.SECONDS);
    }

    /** Polls until every request posted on {@link #qp} has completed; returns the work done. */
    protected int poll() {
        return pollUntilIdle(cq, recorder);
    }

    /** Polls {@code queue} until nothing is outstanding on it. */
    protected static int pollUntilIdle(final CompletionQueue queue, final Recorder into) {
        final long deadline = System.nanoTime() + TIMEOUT_NS;
        int work = 0;
        do {
            work += queue.poll(System.nanoTime(), into, 1024);
            assertThat(System.nanoTime() - deadline).as("completions overdue").isNegative();
        } while (queue.outstanding() > 0);
        return work;
    }

    /** Polls {@code queue} until {@code into} holds {@code count} completions. */
    protected static void pollUntil(final CompletionQueue queue, final Recorder into, final int count) {
        final long deadline = System.nanoTime() + TIMEOUT_NS;
        while (into.entries.size() < count) {
            queue.poll(System.nanoTime(), into, 1024);
            assertThat(System.nanoTime() - deadline).as("completions overdue").isNegative();
        }
    }

    @Test
    void shouldWriteThenReadBackTheSameBytes() throws Exception {
        local.putLong(0, 0x1122334455667788L);
        local.putLong(8, 42);
        assertThat(qp.post(new WorkRequest().write(remote.addressOf(64), remote.rkey(), local, 0, 16).wrId(1)))
            .isEqualTo(QueuePair.POST_OK);
        poll();
        final UnsafeBuffer dst = new UnsafeBuffer(new byte[16]);
        qp.post(new WorkRequest().read(remote.addressOf(64), remote.rkey(), dst, 0, 16).wrId(2));
        poll();
        assertThat(recorder.ids()).containsExactly(1L, 2L);
        assertThat(recorder.statuses()).containsOnly(WcStatus.SUCCESS);
        assertThat(recorder.last().byteLength()).isEqualTo(16);
        assertThat(dst.getLong(0)).isEqualTo(0x1122334455667788L);
        assertThat(dst.getLong(8)).isEqualTo(42);
        assertThat(data.buffer().getLong(64)).isEqualTo(0x1122334455667788L);
    }

    @Test
    void shouldReturnTheOldValueFromAtomics() throws Exception {
        data.buffer().putLong(8, 5);
        final UnsafeBuffer result = new UnsafeBuffer(new byte[32]);
        final WorkRequest first = new WorkRequest().compareAndSwap(remote.addressOf(8), remote.rkey(), 5, 9, result, 0);
        first.link(new WorkRequest().compareAndSwap(remote.addressOf(8), remote.rkey(), 5, 11, result, 8))
            .link(new WorkRequest().fetchAndAdd(remote.addressOf(8), remote.rkey(), 100, result, 16));
        qp.post(first);
        poll();
        assertThat(result.getLong(0)).as("first CAS sees 5 and swaps").isEqualTo(5);
        assertThat(result.getLong(8)).as("second CAS sees 9 and fails").isEqualTo(9);
        assertThat(result.getLong(16)).as("FAA sees 9").isEqualTo(9);
        assertThat(data.buffer().getLong(8)).isEqualTo(109);
    }

    @Test
    void shouldExecuteADoorbellBatchInOrderAndReportOnlySignaledRequests() throws Exception {
        final UnsafeBuffer src = new UnsafeBuffer(new byte[8]);
        final UnsafeBuffer dst = new UnsafeBuffer(new byte[8]);
        WorkRequest first = null;
        WorkRequest last = null;
        // WRITE 1, 2, ..., 5 to the same word, each unsignaled, then a signaled READ: it must see 5.
        for (int i = 1; i <= 5; i++) {
            final UnsafeBuffer value = new UnsafeBuffer(new byte[8]);
            value.putLong(0, i);
            final WorkRequest wr = new WorkRequest().write(remote.addressOf(0), remote.rkey(), value, 0, 8)
                .inline(true).signaled(false).wrId(i);
            if (first == null) {
                first = wr;
            } else {
                last.link(wr);
            }
            last = wr;
        }
        last.link(new WorkRequest().read(remote.addressOf(0), remote.rkey(), dst, 0, 8).wrId(6));
        assertThat(qp.post(first)).isEqualTo(QueuePair.POST_OK);
        assertThat(qp.outstanding()).isEqualTo(6);
        poll();
        assertThat(recorder.ids()).containsExactly(6L);
        assertThat(dst.getLong(0)).isEqualTo(5);
        assertThat(qp.outstanding()).isZero();
        assertThat(src.getLong(0)).isZero();
    }

    @Test
    void shouldCopyInlinePayloadAtPostTime() throws Exception {
        local.putLong(0, 7);
        qp.post(new WorkRequest().write(remote.addressOf(0), remote.rkey(), local, 0, 8).inline(true).wrId(1));
        local.putLong(0, 8); // reusing the buffer at once is allowed for an inline write
        poll();
        assertThat(data.buffer().getLong(0)).isEqualTo(7);
    }

    @Test
    void shouldFailOutOfBoundsAccessWithoutTouchingNeighbouringMemory() throws Exception {
        final MemoryRegion neighbour = mn.register("neighbour", 4096, MemoryKind.HOST);
        data.buffer().setMemory(0, 4096, (byte) 0x5a);
        local.setMemory(0, 64, (byte) 0x11);
        // Straddles the end of the region by 8 bytes.
        qp.post(new WorkRequest().write(remote.address() + 4096 - 56, remote.rkey(), local, 0, 64).wrId(1));
        poll();
        assertThat(recorder.statuses()).containsExactly(WcStatus.REMOTE_ACCESS_ERROR);
        assertThat(recorder.last().byteLength()).isZero();
        for (int i = 0; i < 4096; i++) {
            assertThat(data.buffer().getByte(i)).isEqualTo((byte) 0x5a);
            assertThat(neighbour.buffer().getByte(i)).isZero();
        }
        assertThat(qp.state()).isEqualTo(QpState.ERROR);
    }

    @Test
    void shouldRefuseAReadBelowTheRegionAndAnAddressInTheGapBetweenRegions() throws Exception {
        final MemoryRegion second = mn.register("second", 4096, MemoryKind.HOST);
        qp.post(new WorkRequest().read(remote.address() - 8, remote.rkey(), local, 0, 8).wrId(1));
        poll();
        qp.reset();
        qp.post(new WorkRequest().read(second.address() - 8, second.rkey(), local, 0, 8).wrId(2));
        poll();
        assertThat(recorder.statuses()).containsExactly(WcStatus.REMOTE_ACCESS_ERROR, WcStatus.REMOTE_ACCESS_ERROR);
    }

    @Test
    void shouldFailAWrongRkey() throws Exception {
        qp.post(new WorkRequest().read(remote.addressOf(0), remote.rkey() + 1, local, 0, 8).wrId(1));
        poll();
        assertThat(recorder.statuses()).containsExactly(WcStatus.REMOTE_ACCESS_ERROR);
    }

    @Test
    void shouldRefuseAMisalignedAtomicAndLeaveMemoryUnchanged() throws Exception {
        data.buffer().putLong(8, 3);
        qp.post(new WorkRequest().fetchAndAdd(remote.addressOf(4), remote.rkey(), 1, local, 0).wrId(1));
        poll();
        assertThat(recorder.statuses()).containsExactly(WcStatus.REMOTE_INVALID_REQUEST);
        assertThat(data.buffer().getLong(0)).isZero();
        assertThat(data.buffer().getLong(8)).isEqualTo(3);
    }

    @Test
    void shouldFailVerbsOnADeregisteredRegion() throws Exception {
        mn.deregister(data);
        qp.post(new WorkRequest().write(remote.addressOf(0), remote.rkey(), local, 0, 8).wrId(1));
        poll();
        assertThat(recorder.statuses()).containsExactly(WcStatus.REMOTE_ACCESS_ERROR);
        assertThat(data.isRegistered()).isFalse();
    }

    @Test
    void shouldNeverReuseAnRkeyAfterReregistration() throws Exception {
        mn.deregister(data);
        final MemoryRegion again = mn.register("data", 4096, MemoryKind.HOST);
        assertThat(again.rkey()).isNotEqualTo(remote.rkey());
        qp.post(new WorkRequest().read(remote.addressOf(0), remote.rkey(), local, 0, 8).wrId(1));
        poll();
        assertThat(recorder.statuses()).containsExactly(WcStatus.REMOTE_ACCESS_ERROR);
    }

    @Test
    void shouldFlushEverythingAfterAFailureAndRecoverAfterReset() throws Exception {
        data.buffer().putLong(0, 1);
        final WorkRequest bad = new WorkRequest().read(remote.addressOf(0), remote.rkey() ^ 1, local, 0, 8)
            .signaled(false).wrId(1);
        bad.link(new WorkRequest().read(remote.addressOf(0), remote.rkey(), local, 8, 8).signaled(false).wrId(2))
            .link(new WorkRequest().read(remote.addressOf(0), remote.rkey(), local, 16, 8).wrId(3));
        qp.post(bad);
        poll();
        assertThat(recorder.ids()).containsExactly(1L, 2L, 3L);
        assertThat(recorder.statuses()).containsExactly(WcStatus.REMOTE_ACCESS_ERROR, WcStatus.WR_FLUSH_ERROR,
            WcStatus.WR_FLUSH_ERROR);
        assertThat(local.getLong(8)).as("flushed READ did not execute").isZero();
        // A QP in ERROR still accepts requests and flushes them.
        qp.post(new WorkRequest().read(remote.addressOf(0), remote.rkey(), local, 8, 8).wrId(4));
        poll();
        assertThat(recorder.last().status()).isEqualTo(WcStatus.WR_FLUSH_ERROR);
        assertThat(qp.reset()).isTrue();
        assertThat(qp.state()).isEqualTo(QpState.READY);
        qp.post(new WorkRequest().read(remote.addressOf(0), remote.rkey(), local, 8, 8).wrId(5));
        poll();
        assertThat(recorder.last().status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(local.getLong(8)).isEqualTo(1);
    }

    @Test
    void shouldFailEveryVerbOnARevokedQueuePairForGood() throws Exception {
        assertThat(mn.fence("cn0")).isEqualTo(1);
        qp.post(new WorkRequest().write(remote.addressOf(0), remote.rkey(), local, 0, 8).wrId(1));
        qp.post(new WorkRequest().read(remote.addressOf(0), remote.rkey(), local, 0, 8).wrId(2));
        poll();
        assertThat(recorder.statuses()).containsExactly(WcStatus.REVOKED, WcStatus.REVOKED);
        assertThat(qp.state()).isEqualTo(QpState.REVOKED);
        assertThat(qp.reset()).isFalse();
        assertThat(data.buffer().getLong(0)).isZero();
        // A fenced node cannot open a new queue pair until readmitted.
        final Throwable refused = cn.connect("mn0", cq, new QpOptions()).transform(ar -> io.vertx.core.Future
            .succeededFuture(ar.cause())).await(10, TimeUnit.SECONDS);
        assertThat(refused).isInstanceOf(FabricException.class).hasMessageContaining("fenced");
        mn.readmit("cn0");
        assertThat(connect(cn, "mn0", cq, new QpOptions()).state()).isEqualTo(QpState.READY);
    }

    @Test
    void shouldRefuseAPostOnAClosedQueuePair() throws Exception {
        qp.close();
        assertThat(qp.post(new WorkRequest().read(remote.addressOf(0), remote.rkey(), local, 0, 8)))
            .isEqualTo(QueuePair.NOT_CONNECTED);
    }

    @Test
    void shouldRefuseMalformedRequestsAtPostWithoutPostingAnyOfTheBatch() throws Exception {
        final WorkRequest ok = new WorkRequest().write(remote.addressOf(0), remote.rkey(), local, 0, 8);
        ok.link(new WorkRequest().read(remote.addressOf(0), remote.rkey(), local, 4090, 16)); // past local buffer
        assertThat(qp.post(ok)).isEqualTo(QueuePair.INVALID_REQUEST);
        assertThat(qp.post(new WorkRequest().write(remote.addressOf(0), remote.rkey(), local, 0, 128).inline(true)))
            .as("inline above maxInlineBytes").isEqualTo(QueuePair.INVALID_REQUEST);
        assertThat(qp.post(new WorkRequest().fetchAndAdd(remote.addressOf(0), remote.rkey(), 1, local, 4092)))
            .isEqualTo(QueuePair.INVALID_REQUEST);
        assertThat(qp.outstanding()).isZero();
        poll();
        assertThat(recorder.entries).isEmpty();
        assertThat(data.buffer().getLong(0)).isZero();
    }

    @Test
    void shouldDeliverASendIntoThePeersPostedReceiveBuffer() throws Exception {
        final CompletionQueue mnCq = mn.createCompletionQueue(64);
        final QueuePair[] accepted = new QueuePair[1];
        mn.acceptor(new Nic.QpAcceptor() {
            @Override
            public CompletionQueue completionQueueFor(final String peerNode) {
                return mnCq;
            }

            @Override
            public void accepted(final QueuePair incoming) {
                accepted[0] = incoming;
            }
        });
        final QueuePair twoSided = connect(cn, "mn0", cq, new QpOptions());
        assertThat(accepted[0].remoteNode()).isEqualTo("cn0");
        // Receive buffers are registered memory, as on a real NIC (and necessarily so across processes).
        final org.agrona.concurrent.AtomicBuffer inbox = mn.register("inbox", 64, MemoryKind.HOST).buffer();
        assertThat(accepted[0].postRecv(inbox, 0, 32, 77)).isZero();
        local.putInt(0, 12345);
        twoSided.post(new WorkRequest().send(local, 0, 4).wrId(1));
        poll();
        final Recorder mnRecorder = new Recorder();
        pollUntil(mnCq, mnRecorder, 1);
        assertThat(recorder.statuses()).containsExactly(WcStatus.SUCCESS);
        assertThat(mnRecorder.entries).hasSize(1);
        assertThat(mnRecorder.last().opcode()).isEqualTo(Opcode.RECV);
        assertThat(mnRecorder.last().wrId()).isEqualTo(77);
        assertThat(mnRecorder.last().byteLength()).isEqualTo(4);
        assertThat(inbox.getInt(0)).isEqualTo(12345);
        // No buffer posted any more: receiver not ready.
        twoSided.post(new WorkRequest().send(local, 0, 4).wrId(2));
        poll();
        assertThat(recorder.last().status()).isEqualTo(WcStatus.RNR_RETRY_EXCEEDED);
        // A passive end (no acceptor) cannot receive either.
        assertThat(qp.post(new WorkRequest().send(local, 0, 4).wrId(3))).isZero();
        poll();
        assertThat(recorder.last().status()).isEqualTo(WcStatus.RNR_RETRY_EXCEEDED);
    }

    @Test
    void shouldRefuseBadRegistrations() throws Exception {
        assertThatThrownBy(() -> mn.register("data", 64, MemoryKind.HOST)).isInstanceOf(FabricException.class)
            .hasMessageContaining("already registered");
        assertThatThrownBy(() -> mn.register("x", 0, MemoryKind.HOST)).isInstanceOf(FabricException.class);
        assertThatThrownBy(() -> mn.register("../etc", 64, MemoryKind.HOST))
            .isInstanceOf(IllegalArgumentException.class);
        mn.register("dm", CostModel.DEFAULT_DEVICE_MEMORY_BYTES, MemoryKind.DEVICE);
        assertThatThrownBy(() -> mn.register("dm2", 8, MemoryKind.DEVICE)).isInstanceOf(FabricException.class)
            .hasMessageContaining("device memory exhausted");
        final Throwable unknown = cn.connect("nowhere", cq, new QpOptions()).transform(ar -> io.vertx.core.Future
            .succeededFuture(ar.cause())).await(10, TimeUnit.SECONDS);
        assertThat(unknown).isInstanceOf(FabricException.class).hasMessageContaining("nowhere");
    }

    @Test
    void shouldReadThePeersNicClockBetweenPostAndCompletionAndStampTheCompletion() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(readsNicClocks(), "the provider reads no NIC clocks");
        // Perfect clocks (the default): both NICs read true time, so the peer's reading and the completion's stamp
        // must fall in order between the requester's clock before the post and after the delivery.
        final long[] stamp = new long[1];
        final Recorder reads = new Recorder();
        final CompletionHandler stamping = (from, wrId, opcode, status, byteLength) -> {
            stamp[0] = cq.completionTimestampNs();
            reads.onCompletion(from, wrId, opcode, status, byteLength);
        };
        final RemoteRegion word = NicClockWord.of("mn0");
        final long before = cn.nicClockNs();
        assertThat(qp.post(new WorkRequest().read(word.address(), word.rkey(), local, 0, NicClockWord.LENGTH)
            .wrId(7))).isEqualTo(QueuePair.POST_OK);
        final long deadline = System.nanoTime() + TIMEOUT_NS;
        while (reads.entries.isEmpty()) {
            cq.poll(fabric.clock().nanoTime(), stamping, 16); // the time it passes is the fabric's
            assertThat(System.nanoTime() - deadline).as("completion overdue").isNegative();
        }
        final long after = cn.nicClockNs();
        assertThat(reads.last().status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(reads.last().byteLength()).isEqualTo(NicClockWord.LENGTH);
        final long peerClock = local.getLong(0);
        assertThat(peerClock).isBetween(before, after);
        assertThat(stamp[0]).isBetween(peerClock, after);
    }

    @Test
    void shouldRefuseEveryVerbOnTheNicClockButAnEightByteRead() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(readsNicClocks(), "the provider reads no NIC clocks");
        final RemoteRegion word = NicClockWord.of("mn0");
        qp.post(new WorkRequest().write(word.address(), word.rkey(), local, 0, 8).inline(true).wrId(1));
        poll();
        assertThat(recorder.last().status()).isEqualTo(WcStatus.REMOTE_ACCESS_ERROR);
        assertThat(qp.reset()).isTrue();
        qp.post(new WorkRequest().fetchAndAdd(word.address(), word.rkey(), 1, local, 0).wrId(2));
        poll();
        assertThat(recorder.last().status()).isEqualTo(WcStatus.REMOTE_ACCESS_ERROR);
        assertThat(qp.reset()).isTrue();
        qp.post(new WorkRequest().read(word.address(), word.rkey(), local, 0, 16).wrId(3));
        poll();
        assertThat(recorder.last().status()).isEqualTo(WcStatus.REMOTE_ACCESS_ERROR);
    }
}
