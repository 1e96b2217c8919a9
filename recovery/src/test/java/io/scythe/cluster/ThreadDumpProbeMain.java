package io.scythe.cluster;

/**
 * A "node" for {@link ProcessLogsOnFailureTest}: a small JVM that collects once (so its GC log has a line to show),
 * logs a thread dump of its own ({@link ThreadDump}, as a node's recovery duty does), prints its ready line and then
 * waits in a method of its own name until it is killed. No Hazelcast.
 */
public final class ThreadDumpProbeMain {
    private ThreadDumpProbeMain() {
    }

    public static void main(final String[] args) throws Exception {
        System.gc();
        System.out.println(ThreadDump.now("of the probe"));
        System.out.println("pid " + ProcessHandle.current().pid());
        System.out.flush();
        waitingForTheTest();
    }

    private static void waitingForTheTest() throws InterruptedException {
        Thread.sleep(120_000); // at most: the test's cluster kills it long before
    }
}
