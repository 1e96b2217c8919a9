package io.scythe.txn.unsafe;

import io.scythe.txn.Protocol;
import io.scythe.txn.spi.ProtocolModule;

import java.util.List;

/**
 * UNSAFE as a module: no locking, no validation. Exists only to show that the history checker catches real anomalies;
 * in no default list ({@link #listed()} false), only asked for by name.
 */
public final class UnsafeModule implements ProtocolModule {
    public static final Protocol UNSAFE = Protocol.of("unsafe", (runtime, hint) -> new UnsafeTxn(runtime));

    @Override
    public String name() {
        return "unsafe";
    }

    @Override
    public List<Protocol> protocols() {
        return List.of(UNSAFE);
    }

    @Override
    public boolean listed() {
        return false;
    }
}
