package io.scythe.fabric.emulated;

/** State both ends of an emulated queue pair share: whether it was revoked (fenced) or torn down. */
public interface Connection {
    boolean isRevoked();

    /** True once either end closed it: verbs to the other end then fail as to a vanished peer. */
    boolean isClosed();

    void revoke();

    void close();
}
