package io.scythe.sim;

import io.scythe.txn.Access;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Every version reported committed or in doubt to a run's history (table/key@version). A version is one
 * transaction's, so an in-doubt record naming one already reported repeats that transaction: a recovery (Aurogon's
 * {@code CoordinatorRecovery}) that committed a transaction whose coordinator reported it too (crashed after its
 * report, or alive but cut off by a partition and suspected) reports it in doubt again. Such a record is dropped.
 */
final class ReportedVersions {
    private final Set<String> made = new HashSet<>();

    private static String version(final Access a) {
        return a.table + "/" + a.key + "@" + a.installedVersion;
    }

    /** A commit with {@code accesses} was reported: its written versions. */
    void committed(final List<Access> accesses) {
        for (final Access a : accesses) {
            if (a.dirty && a.installedVersion != 0) {
                made.add(version(a));
            }
        }
    }

    /**
     * Whether a commit with {@code accesses} names a version reported already (then nothing is noted; else its
     * versions are): a recovery committed it and reported it in doubt first, and its coordinator, cut off but alive,
     * then heard its COMMIT answered as done.
     */
    boolean commitRepeats(final List<Access> accesses) {
        for (final Access a : accesses) {
            if (a.dirty && a.installedVersion != 0 && made.contains(version(a))) {
                return true;
            }
        }
        committed(accesses);
        return false;
    }

    /**
     * Whether an in-doubt record with {@code accesses} repeats a reported version (then nothing is noted); else its
     * versions are noted as reported.
     */
    boolean repeats(final List<Access> accesses) {
        for (final Access a : accesses) {
            if ((a.dirty || a.inserted) && a.installedVersion != 0 && made.contains(version(a))) {
                return true;
            }
        }
        for (final Access a : accesses) {
            if ((a.dirty || a.inserted) && a.installedVersion != 0) {
                made.add(version(a));
            }
        }
        return false;
    }
}
