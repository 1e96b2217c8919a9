package io.scythe.cluster;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A blocking start step with a bound (issue 23 §1: a listener registration held a CN's start over 55 s). */
class BoundedCallTest {
    private final List<String> logged = new CopyOnWriteArrayList<>();

    /** What a registration held by a member that never answers looks like: a call that does not return. */
    private static void heldRegistration(final CountDownLatch entered, final CountDownLatch interrupted) {
        entered.countDown();
        try {
            new CountDownLatch(1).await();
        } catch (final InterruptedException e) {
            interrupted.countDown();
        }
    }

    @Test
    void shouldLogWhereAHeldStepWaitsAndGiveTheStartUpAtTheBound() throws Exception {
        final CountDownLatch entered = new CountDownLatch(1);
        final CountDownLatch interrupted = new CountDownLatch(1);
        final long startNs = System.nanoTime();
        // A bound long beside the report interval: a stall at load still leaves reports before it (review stop59).
        assertThatThrownBy(() -> BoundedCall.call("cn0's start step the watch of rejoin requests", 5_000, 200,
            logged::add, () -> {
                heldRegistration(entered, interrupted);
                return null;
            })).isInstanceOf(IllegalStateException.class)
            .hasMessageStartingWith("cn0's start step the watch of rejoin requests did not finish within 5000 ms")
            .hasMessageEndingWith("giving the start up");
        final long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs);
        assertThat(tookMs).isBetween(4_900L, 60_000L);
        assertThat(entered.getCount()).isZero();
        // Logged while it waited; once the step was in, naming where.
        assertThat(logged).isNotEmpty().allSatisfy(line -> assertThat(line)
            .startsWith("WARN cn0's start step the watch of rejoin requests has not finished after"));
        assertThat(logged).anySatisfy(line -> assertThat(line).contains("it waits in BoundedCallTest.heldRegistration"));
        // The abandoned call was told to stop.
        assertThat(interrupted.await(10, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void shouldReturnWhatAStepWithinItsBoundReturns() throws Exception {
        assertThat(BoundedCall.call("a step", 10_000, 5_000, logged::add, () -> {
            Thread.sleep(50);
            return "registered";
        })).isEqualTo("registered");
        assertThat(logged).isEmpty();
    }

    @Test
    void shouldThrowAStepsOwnFailureAsItIs() {
        final IllegalArgumentException own = new IllegalArgumentException("no such map");
        assertThatThrownBy(() -> BoundedCall.run("a step", 10_000, logged::add, () -> {
            throw own;
        })).isSameAs(own);
        assertThatThrownBy(() -> BoundedCall.call("a step", 10_000, 5_000, logged::add, () -> {
            throw new java.io.IOException("closed");
        })).isInstanceOf(java.io.IOException.class).hasMessage("closed");
    }

    @Test
    void shouldRefuseABoundThatIsNotPositive() {
        assertThatThrownBy(() -> BoundedCall.call("a step", 0, 5_000, logged::add, () -> 1))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("must be positive");
    }
}
