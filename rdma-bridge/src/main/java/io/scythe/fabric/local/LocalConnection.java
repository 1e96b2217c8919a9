package io.scythe.fabric.local;

import io.scythe.fabric.emulated.Connection;

/** The state both ends of an in-JVM queue pair share. */
final class LocalConnection implements Connection {
    private volatile boolean revoked;
    private volatile boolean closed;

    @Override
    public boolean isRevoked() {
        return revoked;
    }

    @Override
    public boolean isClosed() {
        return closed;
    }

    @Override
    public void revoke() {
        revoked = true;
    }

    @Override
    public void close() {
        closed = true;
    }
}
