package io.scythe.txn;

import io.vertx.core.Future;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** A loop's transaction ids never carry into its prefix: at the last sequence number the loop gives up (A8). */
class TransactionIdTest {
    private static final long PREFIX = 1L << 40; // OneMemoryNode's idBase
    private OneMemoryNode node;

    @BeforeEach
    void setUp() throws Exception {
        node = new OneMemoryNode("rows", 32);
    }

    @AfterEach
    void tearDown() throws Exception {
        node.close();
    }

    @Test
    void shouldCommitWithTheLastIdThenRefuseAndGiveUpRatherThanWrap() throws Exception {
        final List<String> gaveUp = new ArrayList<>();
        final List<Object> seen = node.on(rt -> {
            rt.onGiveUp(gaveUp::add);
            final Coordinator coordinator = new Coordinator(rt, io.scythe.txn.spi.ProtocolRegistry.protocol("ford-occ"), 3);
            rt.skipSequenceTo(TxnRuntime.LAST_SEQUENCE);
            final long[] lastId = new long[1];
            final List<Object> out = new ArrayList<>();
            return coordinator.run(txn -> {
                lastId[0] = txn.id();
                return txn.readForUpdate("rows", 3).map(v -> {
                    final UnsafeBuffer next = new UnsafeBuffer(new byte[8]);
                    next.putLong(0, v.getLong(0) + 1);
                    txn.write("rows", 3, next, 0, 8);
                    return 0L;
                });
            }).compose(first -> {
                out.add(lastId[0]);
                final int[] bodies = new int[1];
                return coordinator.run(txn -> {
                    bodies[0]++;
                    return Future.succeededFuture(0L);
                }).transform(ar -> {
                    out.add(ar.failed() ? ar.cause() : "committed");
                    out.add(bodies[0]);
                    // Given up, the loop refuses the next one too (it does not count on its hook to stop it).
                    return coordinator.run(txn -> {
                        bodies[0]++;
                        return Future.succeededFuture(0L);
                    }).transform(again -> {
                        out.add(again.failed() ? again.cause() : "committed");
                        out.add(bodies[0]);
                        return Future.succeededFuture(out);
                    });
                });
            });
        });
        assertThat(seen.get(0)).as("the last id is the prefix plus 2^32 - 1").isEqualTo(PREFIX + 0xffff_ffffL);
        assertThat(node.valueOf(3)).as("that commit applied").isEqualTo(101L);
        assertThat(seen.get(1)).as("the next is refused, not wrapped into the prefix's bits")
            .isInstanceOf(NotServingException.class);
        assertThat(((Throwable) seen.get(1)).getMessage()).contains("used up");
        assertThat(seen.get(2)).as("no attempt ran").isEqualTo(0);
        assertThat(seen.get(3)).as("a later one is refused as well").isInstanceOf(NotServingException.class);
        assertThat(((Throwable) seen.get(3)).getMessage()).contains("gave up").contains("used up");
        assertThat(seen.get(4)).as("still no attempt ran").isEqualTo(0);
        assertThat(gaveUp).as("the loop gave up once").hasSize(1);
        assertThat(gaveUp.get(0)).contains("used up");
    }

    @Test
    void shouldRefuseEveryTransactionAfterGivingUpEvenWithoutAHook() throws Exception {
        final List<Object> seen = node.on(rt -> {
            final Coordinator coordinator = new Coordinator(rt, io.scythe.txn.spi.ProtocolRegistry.protocol("ford-occ"), 3);
            final int[] bodies = new int[1];
            final java.util.function.Supplier<Future<Long>> bump = () -> coordinator.run(txn -> {
                bodies[0]++;
                return txn.readForUpdate("rows", 5).map(v -> {
                    final UnsafeBuffer next = new UnsafeBuffer(new byte[8]);
                    next.putLong(0, v.getLong(0) + 1);
                    txn.write("rows", 5, next, 0, 8);
                    return 0L;
                });
            }).map(o -> 0L);
            final List<Object> out = new ArrayList<>();
            return bump.get().compose(first -> {
                rt.giveUp("a test gives up");
                return bump.get().transform(ar -> {
                    out.add(ar.failed() ? ar.cause() : "committed");
                    out.add(bodies[0]);
                    return Future.succeededFuture(out);
                });
            });
        });
        assertThat(node.valueOf(5)).as("only the commit before the give-up applied").isEqualTo(101L);
        assertThat(seen.get(0)).isInstanceOf(NotServingException.class);
        assertThat(((Throwable) seen.get(0)).getMessage()).contains("a test gives up");
        assertThat(seen.get(1)).as("the body ran once, before the give-up").isEqualTo(1);
    }
}
