package io.scythe.fabric.shm;

import io.scythe.fabric.CompletionQueue;
import io.scythe.fabric.CostModel;
import io.scythe.fabric.FabricOptions;
import io.scythe.fabric.MemoryKind;
import io.scythe.fabric.MemoryRegion;
import io.scythe.fabric.Nic;
import io.scythe.fabric.QpOptions;
import io.scythe.fabric.QueuePair;
import io.scythe.fabric.WcStatus;
import io.scythe.fabric.WorkRequest;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The shm fabric across processes: child JVMs doing verbs on this JVM's memory, fencing seen by another process,
 * a memory node whose process is killed. Every child is destroyed and every file removed, even on failure.
 */
class ShmMultiProcessTest {
    private final List<Process> children = new ArrayList<>();
    private String cluster;
    private ShmFabric fabric;

    @BeforeEach
    void setUp() {
        cluster = "mp-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
        fabric = new ShmFabric(new FabricOptions().provider(ShmFabric.NAME).cluster(cluster)
            .costModel(CostModel.zero()));
    }

    @AfterEach
    void tearDown() throws Exception {
        for (final Process child : children) {
            child.destroyForcibly();
            child.waitFor(10, TimeUnit.SECONDS);
        }
        final Path root = fabric.root();
        fabric.close();
        MappedFiles.deleteTree(root);
        assertThat(Files.exists(root)).as("files left in /dev/shm").isFalse();
    }

    private Process child(final String... args) throws Exception {
        final List<String> command = new ArrayList<>(List.of(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED", "-Xmx256m",
            "-cp", System.getProperty("java.class.path"), ShmChild.class.getName()));
        command.addAll(List.of(args));
        final Process process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        children.add(process);
        return process;
    }

    private static String line(final Process process) throws Exception {
        final String line = new BufferedReader(new InputStreamReader(process.getInputStream())).readLine();
        assertThat(line).as("child output").isNotNull();
        return line;
    }

    @Test
    void shouldLoseNoUpdateWhenTwoProcessesFetchAndAddAMillionTimesEach() throws Exception {
        final Nic mn = fabric.attachNow("mn");
        final MemoryRegion region = mn.register("counter", 64, MemoryKind.HOST);
        final Process a = child("faa", cluster, "cn1", "mn", "" + region.address(), "" + region.rkey(), "1000000");
        final Process b = child("faa", cluster, "cn2", "mn", "" + region.address(), "" + region.rkey(), "1000000");
        assertThat(a.waitFor(120, TimeUnit.SECONDS)).isTrue();
        assertThat(b.waitFor(120, TimeUnit.SECONDS)).isTrue();
        assertThat(a.exitValue()).isZero();
        assertThat(b.exitValue()).isZero();
        assertThat(region.buffer().getLongVolatile(0)).isEqualTo(2_000_000);
    }

    @Test
    void shouldLoseUpdatesWithANonAtomicReadThenWriteSoTheTestCanCatchARace() throws Exception {
        final Nic mn = fabric.attachNow("mn");
        final MemoryRegion region = mn.register("counter", 64, MemoryKind.HOST);
        // Two children only race while both run: on a saturated machine one can finish before the other starts
        // (seen once in CI at load 23: exactly 600,000), so the experiment is repeated until they overlapped.
        long lastCount = 0;
        for (int attempt = 0; attempt < 5; attempt++) {
            region.buffer().putLongVolatile(0, 0);
            final Process a = child("rmw", cluster, "cn1", "mn", "" + region.address(), "" + region.rkey(), "300000");
            final Process b = child("rmw", cluster, "cn2", "mn", "" + region.address(), "" + region.rkey(), "300000");
            assertThat(a.waitFor(120, TimeUnit.SECONDS)).isTrue();
            assertThat(b.waitFor(120, TimeUnit.SECONDS)).isTrue();
            lastCount = region.buffer().getLongVolatile(0);
            assertThat(lastCount).isGreaterThan(0).isLessThanOrEqualTo(600_000);
            if (lastCount < 600_000) {
                break;
            }
        }
        assertThat(lastCount).as("a read-then-write race lost updates in one of 5 runs").isLessThan(600_000);
    }

    @Test
    void shouldFailAnotherProcessesVerbsOnceTheMemoryNodeFencesIt() throws Exception {
        final Nic mn = fabric.attachNow("mn");
        final MemoryRegion region = mn.register("counter", 64, MemoryKind.HOST);
        // A region may get memory an earlier test's region used: start the count from 0, or the wait below ends at
        // once, before the child's queue pair exists, and the fence finds nothing (seen once in CI).
        region.buffer().putLongVolatile(0, 0);
        final Process cn = child("loop", cluster, "cn1", "mn", "" + region.address(), "" + region.rkey());
        final BufferedReader out = new BufferedReader(new InputStreamReader(cn.getInputStream()));
        assertThat(out.readLine()).isEqualTo("ready");
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (region.buffer().getLongVolatile(0) < 1000 && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        assertThat(mn.fence("cn1")).isPositive();
        final long afterFence = region.buffer().getLongVolatile(0);
        assertThat(out.readLine()).isEqualTo("status " + WcStatus.REVOKED);
        assertThat(cn.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(cn.exitValue()).isEqualTo(3);
        assertThat(region.buffer().getLongVolatile(0)).as("no FAA lands after the fence").isLessThanOrEqualTo(
            afterFence + 1);
    }

    @Test
    void shouldFailVerbsToAMemoryNodeWhoseProcessWasKilledAndLetItsNameBeTakenOver() throws Exception {
        final Process mnProcess = child("serve", cluster, "mnx");
        final String[] region = line(mnProcess).split(" ");
        final Nic cn = fabric.attachNow("cn");
        final CompletionQueue cq = cn.createCompletionQueue(16);
        final QueuePair qp = cn.connect("mnx", cq, new QpOptions()).toCompletionStage().toCompletableFuture().get();
        final UnsafeBuffer local = new UnsafeBuffer(new byte[8]);
        assertThat(run(qp, cq, new WorkRequest().fetchAndAdd(Long.parseLong(region[1]), Integer.parseInt(region[2]),
            5, local, 0))).isEqualTo(WcStatus.SUCCESS);
        mnProcess.destroyForcibly();
        assertThat(mnProcess.waitFor(10, TimeUnit.SECONDS)).isTrue();
        final long killed = System.nanoTime();
        WcStatus status = WcStatus.SUCCESS;
        // Bounds wide enough for a starved 2-core machine (a 1 s bound failed there only by a stall of the poller):
        // a death still noticed only at a transport timeout of tens of seconds fails them.
        while (status == WcStatus.SUCCESS && System.nanoTime() - killed < TimeUnit.SECONDS.toNanos(30)) {
            status = run(qp, cq, new WorkRequest().fetchAndAdd(Long.parseLong(region[1]),
                Integer.parseInt(region[2]), 1, local, 0));
        }
        assertThat(status).isEqualTo(WcStatus.TRANSPORT_RETRY_EXCEEDED);
        assertThat(System.nanoTime() - killed).isLessThan(TimeUnit.SECONDS.toNanos(10));
        // The dead process's files are stale: this process may attach the node itself.
        final Nic takenOver = fabric.attachNow("mnx");
        assertThat(takenOver.node()).isEqualTo("mnx");
        assertThat(new File(fabric.root().toFile(), "mnx").list()).containsExactly("nic");
    }

    static WcStatus run(final QueuePair qp, final CompletionQueue cq, final WorkRequest wr) {
        final WcStatus[] last = new WcStatus[1];
        qp.post(wr);
        while (last[0] == null) {
            cq.poll(System.nanoTime(), (q, id, op, status, bytes) -> last[0] = status, 16);
        }
        return last[0];
    }

    @Test
    void shouldWaitOutAVerbInFlightAndKillAnInitiatorStuckInsideOne() throws Exception {
        final ShmNic mn = (ShmNic) fabric.attachNow("mn");
        // A verb past its revocation check when the fence comes: the barrier waits until it is done.
        final int running = mn.file.claimConnection("cn1", ProcessHandle.current().pid(), 1);
        mn.file.executing(running, 1);
        mn.fence("cn1");
        final var waiting = mn.fenceBarrier("cn1");
        Thread.sleep(ShmNic.STUCK_NS / 1_000_000 * 2);
        assertThat(waiting.isComplete()).as("a verb of this very process is never taken for stuck").isFalse();
        mn.file.executing(running, -1);
        waiting.await(5, TimeUnit.SECONDS);
        // An initiator process stopped inside a verb (SIGSTOP) could write whenever it wakes: it is killed.
        final Process stopped = new ProcessBuilder("sleep", "60").start();
        children.add(stopped);
        new ProcessBuilder("kill", "-STOP", Long.toString(stopped.pid())).start().waitFor(10, TimeUnit.SECONDS);
        final int stuck = mn.file.claimConnection("cn2", stopped.pid(), 2);
        mn.file.executing(stuck, 1);
        assertThat(mn.fenceBarrier("cn2").isComplete()).as("not fenced yet: nothing to wait for").isTrue();
        mn.fence("cn2");
        final long t0 = System.nanoTime();
        mn.fenceBarrier("cn2").await(10, TimeUnit.SECONDS);
        assertThat(System.nanoTime() - t0).as("waited for it first").isGreaterThanOrEqualTo(ShmNic.STUCK_NS);
        assertThat(ShmNic.gone(stopped.pid())).as("killed").isTrue();
        assertThat(stopped.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(stopped.exitValue()).as("SIGKILL").isEqualTo(128 + 9);
    }

    /**
     * Another process connects, adds and closes again and again under a fresh node name each round, while this one
     * fences that name a random time after the round began (review finding A6): once fence() and its barrier
     * returned, no add of that node may land, whether its connect was under way or not. The child starts a round
     * only when told, so the counter is checked while nothing else adds.
     */
    @Test
    void shouldLetNoVerbLandAfterAFenceWhileAnotherProcessKeepsConnecting() throws Exception {
        final long seed = System.nanoTime();
        final Random random = new Random(seed);
        final ShmNic mn = (ShmNic) fabric.attachNow("mn");
        // The child is live, never stopped: the barrier waits its verb out rather than killing it when a loaded
        // machine descheduled it past 50 ms (which ended the rounds: readLine() gave null). What is checked, no add
        // landing after the barrier, is the same either way.
        mn.stuckNs(TimeUnit.SECONDS.toNanos(5));
        final MemoryRegion region = mn.register("counter", 64, MemoryKind.HOST);
        final int rounds = 60;
        final Process connector = child("race", cluster, "rc", "mn", "" + region.address(), "" + region.rkey(),
            "" + rounds);
        final BufferedReader out = new BufferedReader(new InputStreamReader(connector.getInputStream()));
        final PrintStream next = new PrintStream(connector.getOutputStream(), true);
        final Map<String, Integer> stops = new TreeMap<>();
        for (int round = 0; round < rounds; round++) {
            assertThat(out.readLine()).as("seed %d", seed).isEqualTo("go " + round);
            final long fenceAt = System.nanoTime() + random.nextInt(2_000_000);
            while (System.nanoTime() - fenceAt < 0) {
                Thread.onSpinWait();
            }
            mn.fence("rc" + round);
            mn.fenceBarrier("rc" + round).await(10, TimeUnit.SECONDS);
            final long afterFence = region.buffer().getLongVolatile(0);
            final String stop = out.readLine();
            assertThat(stop).as("seed %d round %d", seed, round).isIn("stop REFUSED", "stop " + WcStatus.REVOKED);
            assertThat(region.buffer().getLongVolatile(0)).as("seed %d round %d: an add landed after the fence",
                seed, round).isEqualTo(afterFence);
            stops.merge(stop, 1, Integer::sum);
            next.println("next"); // the next round's adds come only now
        }
        assertThat(out.readLine()).isEqualTo("done");
        assertThat(connector.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(region.buffer().getLongVolatile(0)).as("the connector did add: %s", stops).isPositive();
    }

    @Test
    void shouldReuseFenceEntriesOnlyOfProcessesThatAreGone() throws Exception {
        final ShmNic mn = (ShmNic) fabric.attachNow("mn");
        final Process finished = new ProcessBuilder("true").start();
        assertThat(finished.waitFor(10, TimeUnit.SECONDS)).isTrue();
        final long me = ProcessHandle.current().pid();
        for (int i = 0; i < ShmLayout.FENCED_SLOTS; i++) {
            mn.file.fence("cn" + i + ".e1", i == 7 ? finished.pid() : i == 9 ? 0 : me);
        }
        // Full: the entry of the process that is gone is reused, the others (alive, or unknown) are kept.
        mn.file.fence("cn100.e1", me);
        assertThat(mn.file.isFenced("cn100.e1")).isTrue();
        assertThat(mn.file.isFenced("cn7.e1")).as("its process is gone: it cannot connect anyway").isFalse();
        assertThat(mn.file.isFenced("cn9.e1")).as("process unknown: kept").isTrue();
        assertThat(mn.file.isFenced("cn8.e1")).isTrue();
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> mn.file.fence("cn101.e1", me))
            .isInstanceOf(io.scythe.fabric.FabricException.class).hasMessageContaining("fence table is full");
        assertThat(mn.file.isFenced("cn101.e1")).isFalse();
    }
}
