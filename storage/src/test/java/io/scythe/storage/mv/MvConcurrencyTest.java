package io.scythe.storage.mv;

import io.scythe.fabric.CostModel;
import io.scythe.fabric.FabricOptions;
import io.scythe.fabric.local.LocalFabric;
import io.scythe.storage.TableSchema;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static io.scythe.storage.mv.VersionHistory.VALUE_BYTES;
import static io.scythe.storage.mv.VersionHistory.valueOf;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Installs, commits, rollbacks, reads and reclamation from several threads on the memory node's CPU, on a few hot
 * objects with few slots (so versions move to the overflow chain and back out all the time), checked by
 * {@link VersionHistory}.
 */
class MvConcurrencyTest {
    private static final int OBJECTS = 4;
    private static final int WRITERS = 3;
    private static final int READERS = 2;
    private static final int WRITES_PER_WRITER = 10_000;
    /** Reads per write, kept up (within {@link #PACE_SLACK}) whatever the scheduler does on two cores. */
    private static final int READS_PER_WRITE = 2;
    private static final long PACE_SLACK = 64;
    private static final long READ_WINDOW = 200;
    private final AtomicLong writesDone = new AtomicLong();
    private final AtomicLong readsDone = new AtomicLong();
    private LocalFabric fabric;
    private MvTable table;
    private final long[] pointers = new long[OBJECTS];

    @BeforeEach
    void setUp() {
        fabric = new LocalFabric(new FabricOptions().costModel(CostModel.zero()));
        table = new MvStore(fabric.attachNow("mn")).create(new MvSchema(TableSchema.fixed(1, "hot", VALUE_BYTES, 16)
            .withVersionCapacity(1 << 14), 3));
        for (int i = 0; i < OBJECTS; i++) {
            pointers[i] = table.load(i, valueOf(i, 0), 0, VALUE_BYTES, 0);
        }
    }

    @AfterEach
    void tearDown() {
        fabric.close();
    }

    @Test
    void shouldReadTheNewestCommittedVersionWhileThreadsInstallRollBackAndReclaim() throws Exception {
        final VersionHistory history = new VersionHistory(OBJECTS);
        final AtomicLong clock = new AtomicLong(1);
        final AtomicLong[] announced = new AtomicLong[READERS];
        final AtomicBoolean writing = new AtomicBoolean(true);
        final AtomicBoolean running = new AtomicBoolean(true);
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final List<Thread> threads = new ArrayList<>();
        for (int w = 0; w < WRITERS; w++) {
            final long owner = w + 1;
            threads.add(new Thread(() -> write(owner, clock, history), "writer-" + w));
        }
        for (int r = 0; r < READERS; r++) {
            final AtomicLong floor = announced[r] = new AtomicLong(1);
            final int seed = r;
            threads.add(new Thread(() -> read(seed, floor, clock, writing, history), "reader-" + r));
        }
        final AtomicLong freed = new AtomicLong();
        final Thread reclaimer = new Thread(() -> {
            while (running.get()) {
                freed.addAndGet(table.reclaim(horizon(announced, clock)));
                Thread.yield();
            }
        }, "reclaimer");
        threads.forEach(t -> t.setUncaughtExceptionHandler((thread, e) -> failure.compareAndSet(null, e)));
        reclaimer.setUncaughtExceptionHandler((thread, e) -> failure.compareAndSet(null, e));
        threads.forEach(Thread::start);
        reclaimer.start();
        for (int w = 0; w < WRITERS; w++) {
            threads.get(w).join();
        }
        writing.set(false);
        for (final Thread t : threads) {
            t.join();
        }
        running.set(false);
        reclaimer.join();

        assertThat(failure.get()).isNull();
        history.assertKeptBy(table, WRITERS * WRITES_PER_WRITER / 4, 1000);
        assertThat(freed.get()).as("versions reclaimed").isPositive();

        final long horizon = horizon(announced, clock);
        table.reclaim(horizon);
        history.assertEveryVersionFrom(table, pointers, horizon, clock.get() + 1);
    }

    /** The smallest announcement, or the clock when no reader announced one (HorizonBoard#horizon). */
    private static long horizon(final AtomicLong[] announced, final AtomicLong clock) {
        final long idle = clock.get(); // read first: a reader that announces later does so at or above it
        long min = Long.MAX_VALUE;
        for (final AtomicLong a : announced) {
            min = Math.min(min, a.get());
        }
        return min == Long.MAX_VALUE ? idle : min;
    }

    /** Each writer keeps up to two versions pending at once and decides the older first, or at random. */
    private void write(final long owner, final AtomicLong clock, final VersionHistory history) {
        final SplittableRandom random = new SplittableRandom(owner);
        final ArrayDeque<long[]> pending = new ArrayDeque<>();
        for (int i = 0; i < WRITES_PER_WRITER; i++) {
            while (readsDone.get() < READS_PER_WRITE * (writesDone.get() - PACE_SLACK)) {
                Thread.yield(); // the readers are behind
            }
            writesDone.incrementAndGet();
            final int object = random.nextInt(OBJECTS);
            final long ts = clock.incrementAndGet();
            final boolean preAttached = random.nextInt(4) == 0;
            int slot;
            while ((slot = table.install(pointers[object], ts, owner, valueOf(object, ts), 0,
                preAttached ? -1 : VALUE_BYTES, false)) == MvStatus.LATCHED) {
                history.latched.incrementAndGet();
                Thread.yield(); // the holder may be descheduled: two cores, six threads
            }
            if (slot >= 0) {
                pending.add(new long[] {object, ts, slot, preAttached ? 1 : 0});
            } else {
                history.refusals.incrementAndGet();
            }
            while (pending.size() > (random.nextBoolean() ? 1 : 0)) {
                decide(random.nextBoolean() ? pending.pollFirst() : pending.pollLast(), random, history);
            }
        }
        while (!pending.isEmpty()) {
            decide(pending.poll(), random, history);
        }
    }

    private void decide(final long[] version, final SplittableRandom random, final VersionHistory history) {
        final int object = (int) version[0];
        final long ts = version[1];
        final int slot = (int) version[2];
        if (random.nextInt(10) < 7) {
            final UnsafeBuffer value = version[3] == 1 ? valueOf(object, ts) : null;
            assertThat(table.commit(pointers[object], slot, ts, value, 0, value == null ? -1 : VALUE_BYTES))
                .isEqualTo(MvStatus.OK);
            history.committed(object, ts);
        } else {
            assertThat(table.rollback(pointers[object], slot, ts)).isEqualTo(MvStatus.OK);
            history.rolledBack(object, ts);
        }
    }

    /**
     * Reads at timestamps at or above what it announced; raises its announcement only to a bound of what it reads
     * next, and before it reads there (the HorizonBoard contract).
     */
    private void read(final int seed, final AtomicLong floor, final AtomicLong clock, final AtomicBoolean writing,
                      final VersionHistory history) {
        final SplittableRandom random = new SplittableRandom(100 + seed);
        final UnsafeBuffer value = new UnsafeBuffer(new byte[VALUE_BYTES]);
        final MvRead read = new MvRead();
        for (int i = 0; writing.get(); i++) {
            if (readsDone.get() > READS_PER_WRITE * (writesDone.get() + PACE_SLACK)) {
                Thread.yield(); // the writers are behind
                continue;
            }
            readsDone.incrementAndGet();
            if ((i & 15) == 0) {
                floor.set(Math.max(floor.get(), clock.get() - READ_WINDOW));
            }
            final long low = floor.get();
            final long now = clock.get();
            // Half read now, in the way of installs under way; half in the past, where versions move and go.
            final long ts = random.nextBoolean() ? now : low + random.nextLong(now - low + 1);
            final int object = random.nextInt(OBJECTS);
            table.read(pointers[object], ts, true, value, 0, read);
            history.read(object, ts, read, value, 0);
        }
        floor.set(Long.MAX_VALUE); // no more reads: withdrawn from the horizon
    }
}
