package io.scythe.bridge;

import io.scythe.fabric.Opcode;
import io.scythe.fabric.QpOptions;
import io.scythe.fabric.QpState;
import io.scythe.fabric.QueuePair;
import io.scythe.fabric.WcStatus;
import io.scythe.fabric.WorkRequest;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.json.JsonObject;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A channel's slot of a sequence number is never reused while that request may still complete. A queue pair may free
 * the entries of a doorbell batch's unsignaled requests before the batch's signaled completion reports them (the
 * emulated one does: an entry is freed once its request completes): the channel must still count them. Before, the
 * channel posted past its ring: a single READ took the slot of a batch member not yet reported, the batch's completion
 * then completed that READ's promise before its data landed, and the READ's own completion found its slot empty (a
 * NullPointerException in the completion loop: {@code bench --workload tpcc --protocols ford-occ --clients 64}).
 */
class RdmaChannelSlotsTest {
    private static Vertx vertx;

    @BeforeAll
    static void setUp() throws Exception {
        vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(1));
        BridgeVerticle.deployOnEveryEventLoop(vertx, new JsonObject()).await(10, TimeUnit.SECONDS);
    }

    @AfterAll
    static void tearDown() throws Exception {
        vertx.close().await(10, TimeUnit.SECONDS);
    }

    /** A queue pair that accepts posts up to its depth and frees entries when the test says so. */
    private static final class HandQp implements QueuePair {
        private final QpOptions options;
        final List<Long> posted = new ArrayList<>();
        int occupied;
        private Object attachment;

        HandQp(final int depth) {
            this.options = new QpOptions().sendQueueDepth(depth);
        }

        @Override
        public int qpNumber() {
            return 1;
        }

        @Override
        public String localNode() {
            return "cn";
        }

        @Override
        public String remoteNode() {
            return "mn";
        }

        @Override
        public QpState state() {
            return QpState.READY;
        }

        @Override
        public int post(final WorkRequest first) {
            int count = 0;
            for (WorkRequest w = first; w != null; w = w.next()) {
                count++;
            }
            if (occupied + count > options.sendQueueDepth()) {
                return SEND_QUEUE_FULL;
            }
            occupied += count;
            for (WorkRequest w = first; w != null; w = w.next()) {
                posted.add(w.wrId());
            }
            return POST_OK;
        }

        @Override
        public int postRecv(final MutableDirectBuffer buffer, final int offset, final int length, final long wrId) {
            return POST_OK;
        }

        @Override
        public boolean reset() {
            return true;
        }

        @Override
        public void revoke() {
        }

        @Override
        public int outstanding() {
            return occupied;
        }

        @Override
        public QpOptions options() {
            return options;
        }

        @Override
        public Object attachment() {
            return attachment;
        }

        @Override
        public void attachment(final Object attachment) {
            this.attachment = attachment;
        }

        @Override
        public void close() {
        }
    }

    @Test
    void shouldNotReuseTheSlotOfABatchMemberItsQueuePairFreedBeforeReportingIt() throws Exception {
        final List<String> log = OnLoop.run(vertx, ctx -> {
            final List<String> seen = new ArrayList<>();
            final HandQp qp = new HandQp(3);
            final RdmaChannel channel = RdmaChannel.wrap(Bridge.current(), qp);
            final UnsafeBuffer buf = new UnsafeBuffer(new byte[64]);
            final Doorbell batch = channel.doorbell();
            batch.write(1000, 7, buf, 0, 8);
            batch.write(2000, 7, buf, 8, 8);
            batch.read(3000, 7, buf, 16, 8); // the only signaled one: seq 2
            final Future<Doorbell> batchDone = batch.post();
            qp.occupied -= 2; // the two unsignaled WRITEs completed in the queue pair, not reported yet
            final Future<Void> r1 = channel.read(4000, 7, buf, 24, 8);
            final Future<Void> r2 = channel.read(5000, 7, buf, 32, 8);
            seen.add("posted " + qp.posted);
            qp.occupied--; // the batch's READ completes and is reported: seqs 0-2
            channel.onCompletion(qp, 2, Opcode.READ, WcStatus.SUCCESS, 8);
            seen.add("after the batch: batch " + batchDone.succeeded() + " r1 " + r1.isComplete() + " r2 "
                + r2.isComplete() + ", posted " + qp.posted);
            for (final long seq : new ArrayList<>(qp.posted.subList(3, qp.posted.size()))) {
                qp.occupied--;
                channel.onCompletion(qp, seq, Opcode.READ, WcStatus.SUCCESS, 8);
            }
            seen.add("at the end: r1 " + r1.succeeded() + " r2 " + r2.succeeded() + ", outstanding "
                + channel.outstanding());
            return Future.succeededFuture(seen);
        });
        assertThat(log).containsExactly("posted [0, 1, 2]",
            "after the batch: batch true r1 false r2 false, posted [0, 1, 2, 3, 4]",
            "at the end: r1 true r2 true, outstanding 0");
    }
}
