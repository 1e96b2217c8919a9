/**
 * FaRMv2-style OCC (Scythe §3.3 (1), §5's baseline) as a protocol module ({@link io.scythe.txn.farm.FarmModule},
 * {@code farm-occ}).
 *
 * <p><b>Metadata</b>: FORD's CAS lock word and the version ({@code io.scythe.txn.ford} documents both; this module
 * shares its lock kind, recovery step and probe through {@link io.scythe.txn.ford.CasLockModule}). The version
 * installed is the commit's physical-clock timestamp (raised above the version under the lock).
 *
 * <p><b>Verbs</b>: every read is one unlocked READ of the whole object (aborting if its CAS word is taken); at commit
 * the written objects are locked (CAS and a header READ in one doorbell, the version still the one read), the
 * timestamp comes from the loop's physical clock after its uncertainty wait ({@link io.scythe.txn.farm.PhysicalClock},
 * a per-loop runtime extension over {@code PhysicalClockOracle}), what was only read is validated by header READs,
 * and the write-back installs the timestamp and WRITEs 0 into the lock words. No memory-node service of its own.
 */
package io.scythe.txn.farm;
