package io.scythe.txn;

import io.scythe.storage.remote.RemoteTable;

/**
 * The races of {@link InsertRaceTest} (a read-only attempt against an insert and delete, revivals, reused slots) with
 * lookups that miss the address cache done by READs of the index and its absent bound instead of the LOOKUP RPC.
 */
class InsertRaceOneSidedLookupTest extends InsertRaceTest {
    @Override
    RemoteTable.LookupMode lookupMode() {
        return RemoteTable.LookupMode.ONE_SIDED;
    }
}
