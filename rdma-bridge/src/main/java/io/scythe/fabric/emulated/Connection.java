package io.scythe.fabric.emulated;

/** State both ends of an emulated queue pair share: whether it was revoked (fenced) or torn down. */
public interface Connection {
    boolean isRevoked();

    /** True once either end closed it: verbs to the other end then fail as to a vanished peer. */
    boolean isClosed();

    void revoke();

    /**
     * Brackets one verb's execution against the responder's memory, before its revocation check until its last byte
     * is written: a fence that found the connection unrevoked here waits for it ({@code Nic.fenceBarrier}).
     */
    default void beginExecution() {
    }

    default void endExecution() {
    }

    void close();
}
