package io.scythe.cluster;

import com.hazelcast.cluster.MembershipEvent;
import com.hazelcast.config.Config;
import com.hazelcast.core.LifecycleEvent;
import org.junit.jupiter.api.Test;

import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Hazelcast's thread that delivers a membership or lifecycle event never waits for Vert.x's handling of it
 * (vertx-hazelcast runs blocking cluster-wide scans there under the cluster manager's monitor): the event is handed to
 * the manager's own thread, in order.
 */
class MemberOnlyClusterManagerTest {

    @Test
    void shouldNotHoldTheDeliveringThreadWhileTheManagersMonitorIsBusy() throws Exception {
        final MemberOnlyClusterManager manager = new MemberOnlyClusterManager(new Config());
        final CountDownLatch held = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        // Stands for vertx-hazelcast's membersRemoved waiting on a partition table in flux, monitor held.
        final Thread busy = new Thread(() -> {
            synchronized (manager) {
                held.countDown();
                try {
                    release.await(30, TimeUnit.SECONDS);
                } catch (final InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        });
        busy.start();
        try {
            assertThat(held.await(10, TimeUnit.SECONDS)).isTrue();
            // As Hazelcast's event thread would deliver them: inline, vertx-hazelcast's synchronized handlers would
            // wait for the monitor here.
            // An event needs a source; nothing here reads it (the manager never joined, so Vert.x's handlers return
            // once they have the monitor).
            final com.hazelcast.cluster.Cluster source = (com.hazelcast.cluster.Cluster) java.lang.reflect.Proxy
                .newProxyInstance(getClass().getClassLoader(), new Class<?>[] {com.hazelcast.cluster.Cluster.class},
                    (proxy, method, args) -> {
                        throw new UnsupportedOperationException(method.getName());
                    });
            final CompletableFuture<Void> delivered = CompletableFuture.runAsync(() -> {
                manager.memberRemoved(new MembershipEvent(source, null, MembershipEvent.MEMBER_REMOVED, Set.of()));
                manager.memberAdded(new MembershipEvent(source, null, MembershipEvent.MEMBER_ADDED, Set.of()));
                manager.stateChanged(new LifecycleEvent(LifecycleEvent.LifecycleState.MERGED));
            });
            delivered.get(5, TimeUnit.SECONDS);
            assertThat(delivered).isCompleted();
        } finally {
            release.countDown();
            busy.join(10_000);
        }
        assertThat(busy.isAlive()).isFalse();
    }
}
