package io.scythe.cluster;

import com.hazelcast.config.InvalidConfigurationException;
import com.hazelcast.core.HazelcastException;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@link ClusterAccess.joinPatiently}: a join Hazelcast refused while membership changed is tried again. */
class JoinPatientlyTest {
    static Vertx vertx;

    @BeforeAll
    static void start() {
        vertx = Vertx.vertx();
    }

    @AfterAll
    static void stop() {
        vertx.close().await();
    }

    private static HazelcastException unstable() {
        return new HazelcastException("Cluster topology was not stable for 100 retries, invoke on stable cluster failed");
    }

    @Test
    void shouldJoinAgainAfterTheClusterRefusedWhileItsMembershipChanged() throws Exception {
        final AtomicInteger attempts = new AtomicInteger();
        final AtomicInteger cleanups = new AtomicInteger();
        final List<String> log = new ArrayList<>();
        final Vertx joined = ClusterAccess.joinPatiently(
            () -> attempts.incrementAndGet() <= 2 ? Future.failedFuture(unstable()) : Future.succeededFuture(vertx),
            cleanups::incrementAndGet, 10_000, 10, log::add);
        assertThat(joined).isSameAs(vertx);
        assertThat(attempts).hasValue(3);
        assertThat(cleanups).as("each refused attempt's member shut down").hasValue(2);
        assertThat(log).hasSize(2).allMatch(l -> l.contains("not stable") && l.contains("trying again"));
    }

    @Test
    void shouldFailAtOnceOnAConfigurationHazelcastRejects() {
        final AtomicInteger attempts = new AtomicInteger();
        assertThatThrownBy(() -> ClusterAccess.joinPatiently(() -> {
            attempts.incrementAndGet();
            return Future.failedFuture(new InvalidConfigurationException("bad port"));
        }, () -> { }, 10_000, 10, l -> { })).isInstanceOf(InvalidConfigurationException.class);
        assertThat(attempts).hasValue(1);
    }

    @Test
    void shouldGiveUpWhenTheTimeoutPassed() {
        final AtomicInteger attempts = new AtomicInteger();
        final AtomicInteger cleanups = new AtomicInteger();
        final long start = System.nanoTime();
        assertThatThrownBy(() -> ClusterAccess.joinPatiently(() -> {
            attempts.incrementAndGet();
            return Future.failedFuture(unstable());
        }, cleanups::incrementAndGet, 300, 50, l -> { })).isInstanceOf(HazelcastException.class)
            .hasMessageContaining("not stable");
        assertThat(attempts.get()).isBetween(2, 7);
        assertThat(cleanups.get()).as("the last refused attempt's member shut down too").isEqualTo(attempts.get());
        assertThat((System.nanoTime() - start) / 1_000_000).isLessThan(5_000);
    }

    /**
     * A chaos soak's restart: the clustered Vert.x's start failed on a Hazelcast put whose partition owner had left
     * (wrapped by Vert.x), and shutting that attempt's member down timed out; the process exited instead of joining
     * again. Both are transient: the join is tried again.
     */
    @Test
    void shouldJoinAgainAfterAWrappedHazelcastFailureEvenIfItsCleanupFailed() throws Exception {
        final AtomicInteger attempts = new AtomicInteger();
        final List<String> log = new ArrayList<>();
        final Vertx joined = ClusterAccess.joinPatiently(() -> attempts.incrementAndGet() == 1
                ? Future.failedFuture(new io.vertx.core.VertxException("Failed to initialize clustered Vert.x",
                new com.hazelcast.spi.exception.TargetNotMemberException("Not Member! target: [127.0.0.1]:20322")))
                : Future.succeededFuture(vertx),
            () -> {
                throw new HazelcastException(new java.util.concurrent.TimeoutException());
            }, 10_000, 10, log::add);
        assertThat(joined).isSameAs(vertx);
        assertThat(attempts).hasValue(2);
        assertThat(log).anyMatch(l -> l.contains("failed too")).anyMatch(l -> l.contains("Not Member")
            && l.contains("trying again"));
    }

    @Test
    void shouldNotRetryAFailureThatIsNotHazelcasts() {
        final AtomicInteger attempts = new AtomicInteger();
        assertThatThrownBy(() -> ClusterAccess.joinPatiently(() -> {
            attempts.incrementAndGet();
            return Future.failedFuture(new IllegalStateException("bad keystore"));
        }, () -> { }, 10_000, 10, l -> { })).isInstanceOf(IllegalStateException.class);
        assertThat(attempts).hasValue(1);
    }
}
