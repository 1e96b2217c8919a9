package io.scythe.cluster;

import io.scythe.txn.api.TxnReply;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** What a reply means to a {@link ScytheClient} caller: decided by its status, never by the text of its reason. */
class ScytheClientClassifyTest {
    @Test
    void shouldClassifyRepliesByTheirStatusAlone() {
        assertThat(ScytheClient.classify(TxnReply.committed(1, 2, 1, 3, "scythe/occ")))
            .isInstanceOf(ScytheClient.Outcome.Committed.class);
        assertThat(ScytheClient.classify(TxnReply.aborted("user", 1, "aborted (user): no funds")))
            .isEqualTo(new ScytheClient.Outcome.Aborted("aborted (user): no funds"));
        // The text no longer decides: an unknown outcome whose reason does not begin with "outcome unknown" is one.
        assertThat(ScytheClient.classify(TxnReply.unknown("redo record may be durable")))
            .isEqualTo(new ScytheClient.Outcome.Unknown("redo record may be durable"));
        assertThat(ScytheClient.classify(TxnReply.failed("outcome unknown? no: nothing committed")))
            .isInstanceOf(ScytheClient.Outcome.Rejected.class);
        assertThat(ScytheClient.classify(TxnReply.rejected(TxnReply.Rejection.UNKNOWN_PROCEDURE, "no such")))
            .isEqualTo(new ScytheClient.Outcome.Rejected("no such"));
        assertThat(ScytheClient.classify(TxnReply.wrongOwner(4, "wrong owner")))
            .isInstanceOf(ScytheClient.Outcome.Rejected.class);
    }
}
