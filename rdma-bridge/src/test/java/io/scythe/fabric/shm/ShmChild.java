package io.scythe.fabric.shm;

import io.scythe.fabric.CompletionHandler;
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
import io.vertx.core.Future;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.BufferedReader;
import java.io.InputStreamReader;

/**
 * A child process for the multi-process shm tests. Modes:
 * <ul>
 *   <li>{@code faa CLUSTER NODE TARGET ADDRESS RKEY OPS}: OPS FAA(+1) on one word; prints "done"</li>
 *   <li>{@code rmw CLUSTER NODE TARGET ADDRESS RKEY OPS}: OPS non-atomic READ then WRITE(+1); prints "done"</li>
 *   <li>{@code loop CLUSTER NODE TARGET ADDRESS RKEY}: FAA until one fails; prints its status, exits 3</li>
 *   <li>{@code serve CLUSTER NODE}: attaches NODE, registers region "data", prints "region ADDRESS RKEY", waits</li>
 *   <li>{@code race CLUSTER PREFIX TARGET ADDRESS RKEY ROUNDS}: for each round r, attaches PREFIX+r, prints "go r",
 *       then connects, does one FAA(+1) and closes, again and again, until a connect is refused as fenced or the FAA
 *       is revoked; prints "stop REFUSED" or "stop REVOKED", detaches, and waits for a line on its input before the
 *       next round. Prints "done" at the end.</li>
 * </ul>
 */
public final class ShmChild {
    private ShmChild() {
    }

    public static void main(final String[] args) throws Exception {
        final String mode = args[0];
        final ShmFabric fabric = new ShmFabric(new FabricOptions().provider(ShmFabric.NAME).cluster(args[1])
            .costModel(CostModel.zero()));
        if ("race".equals(mode)) {
            race(fabric, args[2], args[3], Long.parseLong(args[4]), Integer.parseInt(args[5]),
                Integer.parseInt(args[6]));
            fabric.close();
            return;
        }
        final Nic nic = fabric.attachNow(args[2]);
        if ("serve".equals(mode)) {
            final MemoryRegion region = nic.register("data", 4096, MemoryKind.HOST);
            System.out.println("region " + region.address() + " " + region.rkey());
            System.out.flush();
            new BufferedReader(new InputStreamReader(System.in)).readLine(); // until killed or stdin closes
            fabric.close();
            return;
        }
        final CompletionQueue cq = nic.createCompletionQueue(64);
        final QueuePair qp = nic.connect(args[3], cq, new QpOptions()).toCompletionStage().toCompletableFuture().get();
        final long address = Long.parseLong(args[4]);
        final int rkey = Integer.parseInt(args[5]);
        final UnsafeBuffer local = new UnsafeBuffer(new byte[16]);
        final WcStatus[] last = new WcStatus[1];
        final CompletionHandler handler = (q, id, op, status, bytes) -> last[0] = status;
        final long ops = args.length > 6 ? Long.parseLong(args[6]) : Long.MAX_VALUE;
        System.out.println("ready");
        System.out.flush();
        for (long i = 0; i < ops; i++) {
            if ("rmw".equals(mode)) {
                run(qp, cq, new WorkRequest().read(address, rkey, local, 0, 8), last, handler);
                local.putLong(8, local.getLong(0) + 1);
                run(qp, cq, new WorkRequest().write(address, rkey, local, 8, 8), last, handler);
            } else {
                run(qp, cq, new WorkRequest().fetchAndAdd(address, rkey, 1, local, 0), last, handler);
            }
            if (last[0] != WcStatus.SUCCESS) {
                System.out.println("status " + last[0]);
                System.out.flush();
                fabric.close();
                System.exit(3);
            }
        }
        System.out.println("done");
        fabric.close();
    }

    private static void race(final ShmFabric fabric, final String prefix, final String target, final long address,
                             final int rkey, final int rounds) throws Exception {
        final UnsafeBuffer local = new UnsafeBuffer(new byte[8]);
        final WcStatus[] last = new WcStatus[1];
        final CompletionHandler handler = (q, id, op, status, bytes) -> last[0] = status;
        final BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        for (int round = 0; round < rounds; round++) {
            final Nic nic = fabric.attachNow(prefix + round);
            final CompletionQueue cq = nic.createCompletionQueue(16);
            System.out.println("go " + round);
            System.out.flush();
            String stop = null;
            while (stop == null) {
                final Future<QueuePair> connected = nic.connect(target, cq, new QpOptions());
                if (connected.failed()) {
                    if (!connected.cause().getMessage().contains("fenced")) {
                        Thread.sleep(1); // no free slot: closed ones come free after their grace period
                        continue;
                    }
                    stop = "REFUSED";
                } else {
                    run(connected.result(), cq, new WorkRequest().fetchAndAdd(address, rkey, 1, local, 0), last,
                        handler);
                    connected.result().close();
                    if (last[0] != WcStatus.SUCCESS) {
                        stop = String.valueOf(last[0]);
                    }
                }
            }
            System.out.println("stop " + stop);
            System.out.flush();
            nic.close();
            if (in.readLine() == null) {
                return; // the test is over
            }
        }
        System.out.println("done");
        System.out.flush();
    }

    private static void run(final QueuePair qp, final CompletionQueue cq, final WorkRequest wr,
                            final WcStatus[] last, final CompletionHandler handler) {
        last[0] = null;
        if (qp.post(wr) != QueuePair.POST_OK) {
            last[0] = WcStatus.LOCAL_QP_OPERATION_ERROR;
            return;
        }
        while (last[0] == null) {
            cq.poll(System.nanoTime(), handler, 16);
        }
    }
}
