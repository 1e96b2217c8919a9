/**
 * What the one-sided protocols share, as parts a protocol composes: {@link io.scythe.txn.onesided.ReadSet} (address
 * cache and lookup, whole-object READs, keys found absent, reads in flight), {@link io.scythe.txn.onesided.WriteSet}
 * (buffered values, one write-back doorbell per memory node), {@link io.scythe.txn.onesided.Inserts} (inserts created
 * locked at commit, deletes, absence validation), {@link io.scythe.txn.onesided.RedoStep} (the redo record before the
 * write-back, finishing a decided commit, giving it up to recovery), {@link io.scythe.txn.onesided.Replicas} (with
 * k backups per partition: where each written object is on its backups, and their write-back before the primaries'),
 * {@link io.scythe.txn.onesided.HistoryStep},
 * {@link io.scythe.txn.onesided.StageClock} and {@link io.scythe.txn.onesided.Reposts}.
 * {@link io.scythe.txn.onesided.OneSidedTxn} is the attempt built from them that Scythe, FORD, FaRM, Motor, UNSAFE,
 * RCC's protocols, Lotus and SELCC extend. A commit's stages run through one step object per attempt
 * ({@code OneSidedTxn.Committing}, no Future composed per stage), entered as {@code commitChain} (lock, validate, write
 * back), {@code commitChainAt} (the timestamp first, then the locks), {@code commitChainLockedFirst} (the timestamp
 * once every lock is held: FaRM, Motor) or {@code commitChainLogged} (a log stage before the write-back: RCC's
 * locking protocols, whose point-of-no-return count the chain ends). Nothing here knows a lock word: a protocol's lock comes in as its {@link io.scythe.txn.spi.LockKind}. Replication
 * and one-sided index lookups ({@code TxnRuntime#lookupMode}) are options of the runtime and the catalog, so every
 * protocol built from these parts has them.
 */
package io.scythe.txn.onesided;
