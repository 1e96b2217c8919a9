package io.scythe.txn.farm;

import io.scythe.txn.Protocol;
import io.scythe.txn.ford.CasLockModule;

import java.util.List;

/**
 * FaRMv2-style OCC as a protocol module ({@code farm-occ}): FORD's CAS lock word (lock kind, recovery step and probe,
 * {@link CasLockModule}) with physical-clock timestamps ({@link PhysicalClock}, a per-loop runtime extension).
 */
public final class FarmModule extends CasLockModule {
    /** FaRMv2-style OCC: unlocked reads, locks at commit, physical-clock timestamps with the uncertainty wait. */
    public static final Protocol FARM_OCC = Protocol.of("farm-occ", (runtime, hint) -> new FarmOccTxn(runtime));

    @Override
    public String name() {
        return "farm";
    }

    @Override
    public List<Protocol> protocols() {
        return List.of(FARM_OCC);
    }
}
