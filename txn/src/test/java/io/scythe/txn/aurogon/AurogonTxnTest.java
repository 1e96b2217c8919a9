package io.scythe.txn.aurogon;

import io.scythe.rrpc.RpcException;
import io.scythe.txn.OneMemoryNode;
import io.scythe.txn.Txn;
import io.vertx.core.Future;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Aurogon's coordinator against one memory node's participant over RRPC. */
class AurogonTxnTest {
    private static final int TABLE = 1;

    private static boolean pending(final Participant participant, final long key) {
        final long[][] rows = participant.versions(TABLE, key);
        if (rows != null) {
            for (final long[] row : rows) {
                if (row[2] == 1) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * A pre-attaching READ whose reply fails after the participant installed its pending version (as a reply too
     * large for one bucket did), in an attempt that had pre-attached another key before: the abort rolls both back,
     * so a later reader of either key is answered instead of parking for ever.
     */
    @Test
    void shouldRollBackAPreattachedVersionWhoseReadFailedSoReadersParkedOnItFinish() throws Exception {
        try (OneMemoryNode node = new OneMemoryNode("items", 32)) {
            final ParticipantService service = node.services.service(ParticipantService.class);
            final Participant participant = service.participant();
            final List<String> outcomes = new ArrayList<>();
            node.on(rt -> {
                final Txn first = AurogonModule.AUROGON_PRE.begin(rt, false);
                return first.readForUpdate("items", 1).compose(v -> {
                    assertThat(v.getLong(0)).isEqualTo(100);
                    assertThat(pending(participant, 1)).isTrue();
                    // From now on the participant runs each READ (its pre-attach included), then the reply fails.
                    node.server.handle(AurogonRpc.READ, (request, responder) -> {
                        final int at = request.payloadOffset();
                        participant.read(request.payload().getInt(at + AurogonRpc.TABLE_OFFSET),
                            request.payload().getLong(at + AurogonRpc.KEY_OFFSET),
                            request.payload().getLong(at + AurogonRpc.TS_OFFSET),
                            request.payload().getInt(at + AurogonRpc.FLAGS_OFFSET),
                            (status, wts, value) -> responder.fail(AurogonRpc.BAD_REQUEST, "injected: reply lost"));
                    });
                    return first.readForUpdate("items", 2);
                }).transform(read -> {
                    outcomes.add(read.succeeded() ? "read" : read.cause() instanceof RpcException ? "rpc error"
                        : "failed " + read.cause());
                    assertThat(pending(participant, 2)).as("installed before the reply failed").isTrue();
                    service.register(node.server); // the real READ again
                    // A reader above both pending versions parks on them until the abort decides them.
                    final Txn reader = AurogonModule.AUROGON_PRE.begin(rt, false);
                    final Future<Long> sum = reader.read("items", 1).compose(a -> reader.read("items", 2)
                        .map(b -> a.getLong(0) + b.getLong(0)));
                    return first.abort().compose(aborted -> {
                        outcomes.add("aborted");
                        return sum;
                    }).compose(s -> {
                        outcomes.add("sum " + s);
                        return reader.commit();
                    });
                });
            });
            assertThat(outcomes).containsExactly("rpc error", "aborted", "sum 200");
            assertThat(pending(participant, 1)).isFalse();
            assertThat(pending(participant, 2)).isFalse();
            assertThat(participant.violation()).isNull();
        }
    }
}
