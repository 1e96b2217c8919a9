package io.scythe.txn.lotus;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Which incarnation of a restarted node a recovery is of ({@link LotusCluster#deadIncarnation}), and the refusal of a
 * restarted node replaced again before it rejoined (stop 44's "Open (low)": {@code replaced} would have named the first
 * incarnation, and the simulator skips a crashed node's end checks once). The simulator never gets there: it crashes
 * each compute node once ({@code Faults#validate}, {@code MultiCrashTimelineTest}).
 */
class LotusClusterRestartTest {
    private final LotusCluster cluster = LotusCluster.standalone(2);

    private LotusNode incarnation() {
        return new LotusNode(1, List.of("cn0", "cn1"), null, cluster, new LockTable(64), CriticalFields.defaults());
    }

    @Test
    void shouldNameTheIncarnationEachRecoveryIsOfAndRefuseASecondRestartBeforeTheRejoin() {
        final LotusNode first = incarnation();
        assertThat(cluster.deadIncarnation(1)).as("no restart: the current one").isSameAs(first);
        cluster.declareDead(1, 10);
        final LotusNode second = incarnation();
        assertThat(cluster.deadIncarnation(1)).as("restarted: the recovery is the first's").isSameAs(first);
        assertThatThrownBy(this::incarnation).isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("cn1 restarted again before its restarted incarnation rejoined");
        assertThat(cluster.deadIncarnation(1)).as("the refused restart changed nothing").isSameAs(first);

        cluster.rejoin(1, 20, null);
        assertThat(cluster.deadIncarnation(1)).as("rejoined: a later crash is the second's").isSameAs(second);
        cluster.declareDead(1, 30);
        final LotusNode third = incarnation();
        assertThat(cluster.deadIncarnation(1)).as("restarted after it rejoined: the second's recovery").isSameAs(second);
        assertThat(third).isNotSameAs(second);
    }
}
