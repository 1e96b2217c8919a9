package io.scythe.sim;

import java.util.List;

/**
 * One committed attempt as a history checker sees it: the versions it read and the keys it wrote, with the version
 * its commit installed (the value {@code commit()} returned; for a read-only attempt nothing is written). Recorded by
 * {@link RecordingProtocol} in commit order of virtual time.
 *
 * @param finishedNs virtual time the commit completed
 */
public record CommittedTxn(long sequence, String mode, long commitVersion, List<Read> reads, List<Write> writes,
                           long finishedNs) {
    /** A key read at {@code version} (the object's version when the attempt read it). */
    public record Read(String table, long key, long version) {
    }

    /** A key written; its new version is the attempt's {@code commitVersion}. */
    public record Write(String table, long key) {
    }
}
