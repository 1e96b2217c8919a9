package io.scythe.txn;

import io.scythe.rrpc.RrpcClient;
import io.scythe.rrpc.RrpcOptions;
import io.scythe.rrpc.Rocket;
import io.scythe.storage.ObjectLayout;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.util.Random;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Random and half-valid RRPC requests to every service a memory node registers (LogDB, Takeout Lock, CAS-lock
 * release, recovery, multi-version): each call is answered (a reply or an error) or times out, the server keeps
 * serving, and no committed value or version changes. {@code -Dscythe.fuzz.calls=N} runs more.
 */
class RpcFuzzTest {
    private static final int CALLS = Integer.getInteger("scythe.fuzz.calls", 6_000);
    private static final int IN_FLIGHT = 16;

    @Test
    void shouldAnswerEveryMalformedCallAndChangeNoCommittedObject() throws Exception {
        try (OneMemoryNode node = new OneMemoryNode("t", 64)) {
            final long[] values = new long[16];
            final long[] versions = new long[16];
            for (int k = 0; k < 16; k++) {
                values[k] = node.valueOf(k);
                versions[k] = node.versionOf(k);
            }
            final int[] ids = node.server.rpcIds();
            assertThat(ids.length).as("services registered").isGreaterThan(8);
            final RrpcClient client = new RrpcClient(node.vertx, node.fabric.attachNow("fuzzer"),
                new RrpcOptions().callTimeoutNs(TimeUnit.SECONDS.toNanos(2)));
            final long[] outcomes = new long[3]; // replies, errors, timeouts
            final Promise<Void> done = Promise.promise();
            node.loop.runOnContext(v -> client.rocket("mn").onSuccess(rocket -> {
                final Random random = new Random(2026);
                final int[] next = {0};
                final int[] finished = {0};
                for (int c = 0; c < IN_FLIGHT; c++) {
                    fire(rocket, random, ids, next, finished, outcomes, done);
                }
            }).onFailure(done::fail));
            done.future().await(10, TimeUnit.MINUTES);
            assertThat(outcomes[0] + outcomes[1] + outcomes[2]).as("every call ended").isEqualTo(CALLS);
            assertThat(outcomes[1]).as("most are refused").isGreaterThan(CALLS / 2);
            for (int k = 0; k < 16; k++) {
                assertThat(node.valueOf(k)).as("value of key %d", k).isEqualTo(values[k]);
                assertThat(node.versionOf(k)).as("version of key %d", k).isEqualTo(versions[k]);
            }
            // Still serving: a well-formed transaction commits.
            final long ts = node.on(runtime -> {
                final Txn txn = io.scythe.txn.spi.ProtocolRegistry.protocol("ford-occ").begin(runtime, false);
                return txn.readForUpdate("t", 3).compose(b -> {
                    final UnsafeBuffer next = new UnsafeBuffer(new byte[8]);
                    next.putLong(0, b.getLong(0) + 1);
                    txn.write("t", 3, next, 0, 8);
                    return txn.commit();
                });
            });
            assertThat(ts).isPositive();
            assertThat(node.valueOf(3)).isEqualTo(values[3] + 1);
            assertThat(node.server.requests()).isGreaterThanOrEqualTo(CALLS);
            System.out.printf("RpcFuzzTest: %d calls over %d RPC ids: %d replies, %d errors, %d timeouts%n", CALLS,
                ids.length, outcomes[0], outcomes[1], outcomes[2]);
        }
    }

    /** One call, then the next when it ends; completes {@code done} when every call ended. */
    private static void fire(final Rocket rocket, final Random random, final int[] ids, final int[] next,
                             final int[] finished, final long[] outcomes, final Promise<Void> done) {
        if (next[0] >= CALLS) {
            return;
        }
        next[0]++;
        final io.scythe.rrpc.RpcFuzz.Call c = io.scythe.rrpc.RpcFuzz.call(random, ids);
        final Future<?> call = rocket.call(c.rpcId(), c.payload(), 0, c.payload().capacity());
        call.onComplete(ar -> {
            outcomes[io.scythe.rrpc.RpcFuzz.outcome(ar.cause()).ordinal()]++; // replies, errors, timeouts
            if (++finished[0] == CALLS) {
                done.tryComplete();
            } else {
                fire(rocket, random, ids, next, finished, outcomes, done);
            }
        });
    }
}
