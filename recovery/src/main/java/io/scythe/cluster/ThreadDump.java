package io.scythe.cluster;

import java.lang.management.LockInfo;
import java.lang.management.ManagementFactory;
import java.lang.management.MonitorInfo;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;

/**
 * This JVM's threads with their whole stacks, the locks they hold and the one each waits on, as jstack prints them
 * ({@link ThreadInfo#toString()} stops at 8 frames, too few to see who made a blocking Hazelcast call). Issue 23 §1:
 * the wedge of CI 193/195 was read from logs alone; a node logs one of these where it first gives up a Hazelcast call
 * ({@link RecoveryDuty}). Takes a safepoint and some milliseconds: never on an event loop, never in a loop.
 */
final class ThreadDump {
    /** The marker lines around a dump in a node's log: the failure report of the process tests prints what is between. */
    static final String BEGIN = "==== thread dump";
    static final String END = "==== end of thread dump";

    private ThreadDump() {
    }

    /** The dump, between {@link #BEGIN} (followed by {@code title}) and {@link #END} lines. */
    static String now(final String title) {
        final ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        final ThreadInfo[] threads = mx.dumpAllThreads(mx.isObjectMonitorUsageSupported(),
            mx.isSynchronizerUsageSupported());
        final StringBuilder out = new StringBuilder(BEGIN).append(' ').append(title).append(" (")
            .append(threads.length).append(" threads, pid ").append(ProcessHandle.current().pid()).append(")\n");
        for (final ThreadInfo t : threads) {
            if (t != null) {
                append(out, t);
            }
        }
        return out.append(END).toString();
    }

    static void append(final StringBuilder out, final ThreadInfo t) {
        out.append('"').append(t.getThreadName()).append("\" #").append(t.getThreadId())
            .append(t.isDaemon() ? " daemon" : "").append(' ').append(t.getThreadState());
        if (t.getLockName() != null) {
            out.append(" on ").append(t.getLockName());
        }
        if (t.getLockOwnerName() != null) {
            out.append(" owned by \"").append(t.getLockOwnerName()).append("\" #").append(t.getLockOwnerId());
        }
        if (t.isInNative()) {
            out.append(" (in native)");
        }
        out.append('\n');
        final StackTraceElement[] stack = t.getStackTrace();
        final MonitorInfo[] monitors = t.getLockedMonitors();
        for (int depth = 0; depth < stack.length; depth++) {
            out.append("\tat ").append(stack[depth]).append('\n');
            if (depth == 0 && t.getLockInfo() != null) {
                out.append("\t- ").append(switch (t.getThreadState()) {
                    case BLOCKED -> "blocked on ";
                    case WAITING, TIMED_WAITING -> "waiting on ";
                    default -> "on ";
                }).append(t.getLockInfo()).append('\n');
            }
            for (final MonitorInfo m : monitors) {
                if (m.getLockedStackDepth() == depth) {
                    out.append("\t- locked ").append(m).append('\n');
                }
            }
        }
        final LockInfo[] synchronizers = t.getLockedSynchronizers();
        if (synchronizers.length > 0) {
            out.append("\tholds:");
            for (final LockInfo s : synchronizers) {
                out.append(' ').append(s);
            }
            out.append('\n');
        }
        out.append('\n');
    }
}
