package io.scythe.txn.aurogon;

import io.scythe.txn.AbortReason;

import java.util.List;

/**
 * Aurogon's abort reasons: only writes fail in T/O (§4.2), early (pre-attached) or late. Reported after the shared
 * ones.
 */
public final class AurogonAborts {
    /** A read's pre-attached write was refused by the install rule: aborted before the read ran (§4.3). */
    public static final AbortReason EARLY_ABORT = AbortReason.define("preattach-refused", 910);
    /** A write installed at commit (not pre-attached) was refused by the install rule. */
    public static final AbortReason INSTALL_REFUSED = AbortReason.define("install-refused", 920);
    /** A read needed a version the participant's version GC had reclaimed. */
    public static final AbortReason VERSION_GONE = AbortReason.define("version-gone", 930);

    /** A backup refused the attempt's replication: a recovery suspected its coordinator and rolled it back (§4.5). */
    public static final AbortReason FENCED = AbortReason.define("fenced", 940);

    /**
     * A request went to a memory node the configuration removed (it died: memory-node failover): what the attempt
     * read or installed there is gone; it runs again on the promoted copy.
     */
    public static final AbortReason NODE_GONE = AbortReason.define("node-gone", 950);

    /**
     * A read waited its bound on a version whose transaction a recovery left in doubt (its commit may have reached a
     * primary, every copy of one of its writes died): the attempt runs again, and may meet it again.
     */
    public static final AbortReason IN_DOUBT = AbortReason.define("in-doubt", 960);

    /**
     * A backup refused a REPLICATE below the deletes it forgot (its timestamp lags the newest it saw by more than the
     * pruning lag): the coordinator's clock is floored above them and the attempt runs again (review, stop 39: under
     * the fenced reason, a clock lagging that much was refused for good). Also a primary's refusal of an INSTALL or
     * INSERT at or below its coordinator id's dead mark ({@link Participant#STALE}: a successor incarnation's clock
     * restarted below its predecessor's), floored and run again the same way.
     */
    public static final AbortReason STALE = AbortReason.define("stale-replicate", 970);

    /**
     * A request went to a copy its memory node does not serve as primary yet: the configuration promoted it, and the
     * node's promotion (the read floor, cluster mode waits for every compute node to apply the configuration) has not
     * run. The attempt runs again.
     */
    public static final AbortReason NOT_PROMOTED = AbortReason.define("not-promoted", 980);

    /**
     * The loop's 2LClock could not give a timestamp within its error bound (its mapping extrapolated past
     * {@code PiecewiseMapping.MAX_EXTRAPOLATION_NS}: no probe of the reference answered for that long). The attempt
     * began nothing; it runs again once a probe answered.
     */
    public static final AbortReason UNSYNCHRONISED = AbortReason.define("clock-unsynchronised", 990);

    /**
     * A READ or INSTALL (before the point of no return) got no reply within the call bound (a network split longer
     * than it, issue 20): it may land later, so what it installed is rolled back, and the attempt runs again. Before,
     * such a READ failed its transaction with the RPC's error.
     */
    public static final AbortReason UNANSWERED = AbortReason.define("unanswered", 995);

    /**
     * SPS ({@code aurogon:sps}, §4.4 rule 1): a read met a COMMITTED version newer than the one below its timestamp
     * ({@link Participant#SPS_STALE}); returning it would be a stale read. The attempt runs again with a later
     * timestamp.
     */
    public static final AbortReason SPS_STALE = AbortReason.define("sps-stale-read", 997);

    /**
     * SPS ({@code aurogon:sps}, §4.4 rule 2): a write met a COMMITTED version above its timestamp
     * ({@link Participant#SPS_IMMORTAL}); installing it would make an immortal write. The attempt runs again with its
     * clock floored at that version.
     */
    public static final AbortReason SPS_IMMORTAL = AbortReason.define("sps-immortal-write", 998);

    static final List<AbortReason> ALL = List.of(EARLY_ABORT, INSTALL_REFUSED, VERSION_GONE, FENCED, NODE_GONE,
        IN_DOUBT, STALE, NOT_PROMOTED, UNSYNCHRONISED, UNANSWERED, SPS_STALE,
        SPS_IMMORTAL);

    private AurogonAborts() {
    }
}
