package io.scythe.cluster;

import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** Real-time priority for a fabric lease's threads (issue 23 §3), on Linux. */
class RealtimePriorityTest {

    /** The scheduling policy of thread {@code tid} of this process: field 41 of its stat (2 = SCHED_RR). */
    private static int policyOf(final long tid) throws Exception {
        final String stat = Files.readString(Path.of("/proc/self/task/" + tid + "/stat"));
        final String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return Integer.parseInt(fields[41 - 3]);
    }

    @Test
    void shouldFindThisThreadAndTheJvmsPausingThreads() throws Exception {
        assumeTrue(Files.isDirectory(Path.of("/proc/self/task")), "Linux only");
        final long tid = RealtimePriority.currentThreadId();
        assertThat(Path.of("/proc/self/task/" + tid)).isDirectory();
        assertThat(RealtimePriority.pausingThreadIds()).isNotEmpty().allSatisfy(t -> assertThat(Files.readString(
            Path.of("/proc/self/task/" + t + "/comm"))).matches("(VM Thread|GC Thread#\\d+)\\s*"));
        assertThat(RealtimePriority.raise(-1)).isEqualTo("no Linux thread id");
    }

    @Test
    void shouldGiveAThreadRealTimePriorityWhereAllowed() throws Exception {
        assumeTrue(Files.isDirectory(Path.of("/proc/self/task")), "Linux only");
        final AtomicLong tid = new AtomicLong();
        final CountDownLatch started = new CountDownLatch(1);
        final CountDownLatch done = new CountDownLatch(1);
        final CountDownLatch raised = new CountDownLatch(1);
        final CountDownLatch childStarted = new CountDownLatch(1);
        final AtomicLong childTid = new AtomicLong();
        final Thread lease = new Thread(() -> {
            tid.set(RealtimePriority.currentThreadId());
            started.countDown();
            try {
                if (raised.await(30, java.util.concurrent.TimeUnit.SECONDS)) {
                    // As a lease callback's executeBlocking can make Vert.x start a worker thread from here.
                    final Thread child = new Thread(() -> {
                        childTid.set(RealtimePriority.currentThreadId());
                        childStarted.countDown();
                        try {
                            done.await();
                        } catch (final InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    });
                    child.setDaemon(true);
                    child.start();
                }
                done.await();
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        lease.setDaemon(true);
        lease.start();
        started.await();
        try {
            assumeTrue(policyOf(tid.get()) == 0, "this JVM runs real-time already"); // SCHED_OTHER as started
            final String why = RealtimePriority.raise(tid.get());
            assumeTrue(why == null, "real-time scheduling not allowed here: " + why);
            assertThat(policyOf(tid.get())).isEqualTo(2); // SCHED_RR
            raised.countDown();
            assertThat(childStarted.await(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
            assertThat(policyOf(childTid.get())).as("a thread the raised thread started (reset on fork)").isZero();
            assertThat(policyOf(RealtimePriority.currentThreadId())).isZero(); // only that thread
        } finally {
            done.countDown();
            lease.join(10_000); // the real-time thread ends with the test: nothing left at real-time priority
        }
        assertThat(lease.isAlive()).isFalse();
    }
}
