package io.scythe.txn.scythe;

/** A Takeout Lock request the memory node did not queue: why ({@link TakeoutLock} status) and the heat it saw. */
public final class LockRefusedException extends RuntimeException {
    private final int status;
    private final long queued;

    public LockRefusedException(final int status, final long queued) {
        super("Takeout Lock " + TakeoutLock.statusName(status) + " (" + queued + " queued)", null, false, false);
        this.status = status;
        this.queued = queued;
    }

    public int status() {
        return status;
    }

    /** Transactions queued on the object when the request arrived. */
    public long queued() {
        return queued;
    }
}
