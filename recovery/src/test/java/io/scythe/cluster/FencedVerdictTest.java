package io.scythe.cluster;

import io.scythe.fabric.CostModel;
import io.scythe.fabric.FabricOptions;
import io.scythe.fabric.Nic;
import io.scythe.fabric.QpOptions;
import io.scythe.fabric.local.LocalFabric;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Set;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/** Who may judge a node dead, and how a CN learns that it was judged so. */
class FencedVerdictTest {
    @Test
    void shouldLetOnlyAViewOfMoreThanHalfTheRegisteredNodesJudge() {
        final UUID a = UUID.randomUUID();
        final UUID b = UUID.randomUUID();
        final UUID c = UUID.randomUUID();
        final UUID d = UUID.randomUUID();
        final UUID outsider = UUID.randomUUID(); // a client: a member, but no registered node
        assertThat(ShardOwnership.isMajority(List.of(a, b, c), Set.of(a, b))).isTrue();
        assertThat(ShardOwnership.isMajority(List.of(a, b, c), Set.of(a, outsider))).isFalse();
        assertThat(ShardOwnership.isMajority(List.of(a, b, c, d), Set.of(a, b, outsider))).as("a tie").isFalse();
        assertThat(ShardOwnership.isMajority(List.of(), Set.of(a))).isFalse();
    }

    @Test
    void shouldTellACnWhichNodeFencedIt() throws Exception {
        final LocalFabric fabric = new LocalFabric(new FabricOptions().costModel(CostModel.zero()));
        try {
            final Nic cn = fabric.attachNow("cn0.e1");
            final Nic mn = fabric.attachNow("mn0");
            final Nic tso = fabric.attachNow("tso");
            cn.connect("mn0", cn.createCompletionQueue(16), new QpOptions()).toCompletionStage().toCompletableFuture()
                .get();
            cn.connect("tso", cn.createCompletionQueue(16), new QpOptions()).toCompletionStage().toCompletableFuture()
                .get();
            assertThat(ScytheNode.fencedBy(cn)).as("nothing revoked yet").isNull();
            assertThat(tso.fence("cn0.e1")).isPositive();
            assertThat(ScytheNode.fencedBy(cn)).isEqualTo("tso");
            assertThat(mn.isFenced("cn0.e1")).isFalse();
        } finally {
            fabric.close();
        }
    }
}
