package io.scythe.bridge;

import io.scythe.fabric.Opcode;
import io.scythe.fabric.WcStatus;
import io.vertx.core.VertxException;

/** A verb that failed: its completion status, or the code {@code post} returned. No stack trace (expected path). */
public final class VerbException extends VertxException {
    private final Opcode opcode;
    private final WcStatus status;

    public VerbException(final Opcode opcode, final WcStatus status, final String peer) {
        super(opcode + " to " + peer + " failed: " + status + " (" + status.description() + ")", true);
        this.opcode = opcode;
        this.status = status;
    }

    public VerbException(final Opcode opcode, final String message) {
        super(opcode + " not posted: " + message, true);
        this.opcode = opcode;
        this.status = null;
    }

    public Opcode opcode() {
        return opcode;
    }

    /** The completion status, or {@code null} when the request was refused at post time. */
    public WcStatus status() {
        return status;
    }
}
