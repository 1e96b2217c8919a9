package io.scythe.fabric.shm;

import io.scythe.fabric.emulated.Connection;

import static io.scythe.fabric.shm.ShmLayout.CONN_CLOSED;
import static io.scythe.fabric.shm.ShmLayout.CONN_READY;
import static io.scythe.fabric.shm.ShmLayout.CONN_REVOKED;

/**
 * A queue pair's shared state: its slot in the responder's connection table (both processes read it on every verb),
 * and whether the process at the other end still lives (checked at most every {@link #LIVENESS_PERIOD_NS}).
 */
final class ShmConnection implements Connection {
    static final long LIVENESS_PERIOD_NS = 10_000_000;

    private final ShmNodeFile responder;
    private final int slot;
    private final int generation;
    private final long otherPid;
    private final ShmNodeFile otherFile;
    private long checkedAt = System.nanoTime();
    private volatile boolean otherDead;

    /**
     * @param otherPid  the process at the other end of the connection
     * @param otherFile that process's node file, whose closed state also means gone ({@code null} if not mapped)
     */
    ShmConnection(final ShmNodeFile responder, final int slot, final long otherPid, final ShmNodeFile otherFile) {
        this.responder = responder;
        this.slot = slot;
        this.generation = responder.generation(slot);
        this.otherPid = otherPid;
        this.otherFile = otherFile;
    }

    @Override
    public boolean isRevoked() {
        return responder.connectionState(slot) == CONN_REVOKED;
    }

    @Override
    public boolean isClosed() {
        if (responder.generation(slot) != generation) {
            return true; // the slot was freed and reused: this connection is long gone
        }
        final int state = responder.connectionState(slot);
        if (state != CONN_READY && state != CONN_REVOKED) {
            return true;
        }
        final long now = System.nanoTime();
        if (now - checkedAt > LIVENESS_PERIOD_NS) {
            checkedAt = now;
            otherDead = !ProcessHandle.of(otherPid).map(ProcessHandle::isAlive).orElse(false)
                || (otherFile != null && !otherFile.live());
        }
        return otherDead;
    }

    /**
     * The count sits in the responder's file, which both processes map: the increment (a full fence) comes before the
     * revocation check, and the fencer revokes before it reads the count, so one of them sees the other.
     */
    @Override
    public void beginExecution() {
        responder.executing(slot, 1);
    }

    @Override
    public void endExecution() {
        responder.executing(slot, -1);
    }

    @Override
    public void revoke() {
        responder.transition(slot, CONN_READY, CONN_REVOKED);
    }

    @Override
    public void close() {
        if (responder.generation(slot) == generation) {
            responder.transition(slot, CONN_READY, CONN_CLOSED);
        }
    }
}
