package io.scythe.txn.aurogon;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Aurogon's backup participant (§4.5): held until decided, durable only in full, fenced by a recovery's question. */
class BackupsTest {
    private static final long TS = AurogonTimestamp.pack(5_000, 1, 2);
    private static final long MASK = 0b110;
    private static final long TXN = 0x1_0000_0007L;

    private final List<String> applied = new ArrayList<>();
    private final List<Runnable> later = new ArrayList<>();
    private boolean silent = true;
    private final Backups backups = new Backups((table, key, wts, value) -> applied.add(table + "/" + key + "@" + wts
        + "=" + (value == null ? "deleted" : value.length + "B")), (delay, task) -> later.add(task), 1_000,
        ts -> silent);

    @Test
    void shouldHoldAWriteInPartsUntilAppliedAndAnswerFullOnlyWhenEveryWriteIsComplete() {
        assertThat(backups.replicate(TS, TS, TXN, MASK, 2, 7, 1, 10, 0, new byte[6])).isEqualTo(Backups.OK);
        assertThat(backups.replicate(TS, TS, TXN, MASK, 2, 7, 1, 10, 6, new byte[4])).isEqualTo(Backups.OK);
        assertThat(backups.replicate(TS, TS, TXN, MASK, 2, 7, 2, AurogonRpc.DELETE, 0, new byte[0]))
            .isEqualTo(Backups.OK);
        assertThat(applied).isEmpty();
        assertThat(backups.holds(TS)).isEqualTo(new Backups.Holding(Backups.FULL, MASK, 2, TXN));
        assertThat(backups.apply(TS)).isEqualTo(Backups.OK);
        assertThat(applied).containsExactly("7/1@" + TS + "=10B", "7/2@" + TS + "=deleted");
        assertThat(backups.apply(TS)).as("applied once").isEqualTo(Backups.OK);
        assertThat(applied).hasSize(2);
        assertThat(backups.holds(TS).state()).isEqualTo(Backups.COMMITTED);
        assertThat(backups.discard(TS)).as("a committed transaction cannot be rolled back").isEqualTo(Backups.FENCED);
        assertThat(backups.entry(TS, 0).value()).hasSize(10); // kept for recoveries still asking
    }

    /**
     * A coordinator's repost of a part of a transaction a recovery committed (issue 20: cut off past the orphan lease,
     * its first reply late) is answered COMMITTED, so it goes on to commit; answered FENCED (rolled back), it aborted
     * a committed transaction and told its client "unknown".
     */
    @Test
    void shouldAnswerARepostOfACommittedTransactionCommitted() {
        assertThat(backups.replicate(TS, TS, TXN, MASK, 1, 7, 1, 10, 0, new byte[10])).isEqualTo(Backups.OK);
        assertThat(backups.holds(TS).state()).isEqualTo(Backups.FULL);
        assertThat(backups.apply(TS)).isEqualTo(Backups.OK); // a recovery's APPLY
        assertThat(backups.replicate(TS, TS, TXN, MASK, 1, 7, 1, 10, 0, new byte[10])).as("the repost")
            .isEqualTo(Backups.COMMITTED);
        assertThat(applied).as("applied once").hasSize(1);
        assertThat(backups.committedReposts()).isEqualTo(1);
    }

    /**
     * Review of aurosplit4 (5): a part at a committed timestamp that is not the committed transaction (another id,
     * mask or count of writes: a reused coordinator id) is FENCED, never told COMMITTED. Failed before: COMMITTED.
     */
    @Test
    void shouldFenceAPartOfAnotherTransactionAtACommittedTimestamp() {
        assertThat(backups.replicate(TS, TS, TXN, MASK, 1, 7, 1, 10, 0, new byte[10])).isEqualTo(Backups.OK);
        assertThat(backups.apply(TS)).isEqualTo(Backups.OK);
        assertThat(backups.replicate(TS, TS, TXN + 1, MASK, 1, 7, 1, 10, 0, new byte[10])).as("another id")
            .isEqualTo(Backups.FENCED);
        assertThat(backups.replicate(TS, TS, TXN, MASK | 1, 1, 7, 1, 10, 0, new byte[10])).as("another mask")
            .isEqualTo(Backups.FENCED);
        assertThat(backups.replicate(TS, TS, TXN, MASK, 2, 7, 1, 10, 0, new byte[10])).as("another count")
            .isEqualTo(Backups.FENCED);
        assertThat(backups.committedReposts()).isZero();
        assertThat(backups.replicate(TS, TS, TXN, MASK, 1, 7, 1, 10, 0, new byte[10])).isEqualTo(Backups.COMMITTED);
        assertThat(applied).hasSize(1);
    }

    @Test
    void shouldFenceATransactionHeldInPartSoItsLateReplicationIsRefused() {
        backups.replicate(TS, TS, TXN, MASK, 2, 7, 1, 10, 0, new byte[6]); // one write, half of it
        assertThat(backups.holds(TS).state()).isEqualTo(Backups.ABORTED);
        assertThat(backups.replicate(TS, TS, TXN, MASK, 2, 7, 1, 10, 6, new byte[4])).isEqualTo(Backups.FENCED);
        assertThat(backups.apply(TS)).isEqualTo(Backups.FENCED);
        assertThat(applied).isEmpty();
        // Nothing held at all: the question fences it before it arrives.
        final long other = TS + 1;
        assertThat(backups.holds(other)).isEqualTo(new Backups.Holding(Backups.ABORTED, 0, 0, 0));
        assertThat(backups.replicate(other, other, TXN, MASK, 1, 7, 1, 8, 0, new byte[8])).isEqualTo(Backups.FENCED);
    }

    /**
     * A REPLICATE below the low-water its coordinator reported is refused STALE, the low-water its floor (review, stop
     * 40): a new incarnation reusing the coordinator id with its clock restarted below the old one's would otherwise
     * hold decisions a backup may forget at once (FORGOTTEN for a never-seen timestamp again).
     */
    @Test
    void shouldRefuseAReplicationBelowItsCoordinatorsLowWater() {
        final long later = AurogonTimestamp.pack(1_005_000, 1, 2); // the same coordinator, 1 ms on
        assertThat(backups.replicate(later, later, TXN + 1, MASK, 1, 7, 1, 10, 0, new byte[10])).isEqualTo(Backups.OK);
        assertThat(backups.replicate(TS, TS, TXN, MASK, 1, 7, 2, 10, 0, new byte[10])).isEqualTo(Backups.STALE);
        assertThat(backups.holds(TS).state()).as("nothing held").isNotEqualTo(Backups.FULL);
        assertThat(backups.forgottenUpTo(TS)).as("the refusal's floor").isGreaterThanOrEqualTo(later);
    }

    @Test
    void shouldRefuseReplicationsThatContradictEachOther() {
        backups.replicate(TS, TS, TXN, MASK, 1, 7, 1, 8, 0, new byte[8]);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> backups.replicate(TS, TS, TXN, MASK, 2, 7, 1, 8, 0,
            new byte[8])).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("earlier parts");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> backups.replicate(TS, TS, TXN + 1, MASK, 1, 7, 1, 8, 0,
            new byte[8])).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("transaction");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> backups.replicate(TS + 1, TS + 1, 0, MASK, 1, 7, 1,
            8, 0, new byte[8])).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("never 0");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> backups.replicate(TS, TS + 1, TXN, MASK, 1, 7, 1, 8,
            0, new byte[8])).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("low-water");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> backups.replicate(TS, TS, TXN, MASK, 1, 7, 2, 8, 0,
            new byte[8])).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("2th write");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> backups.replicate(TS, TS, TXN, MASK, 1, 7, 1, 8, 4,
            new byte[8])).isInstanceOf(IllegalArgumentException.class);
    }

    /**
     * Review, stop 40: coordinator C has ts 100 and 101 open; 101 is decided here (backup B) and C dies after
     * REPLICATE(100) reached only backup A. B forgets 101 past its remembered decisions (shrunk to 1): its mark must
     * not cover 100, which C never finished (every REPLICATE said so: low-water 100), so a resolver's HOLDS(100) here
     * fences it (ABORTED) and A's suspect gets rolled back; 101 stays remembered (COMMITTED, never decided again).
     * Before, B answered FORGOTTEN for 100, every resolver yielded, and A kept 100 undecided for good. Once C's
     * low-water rises past them, the pinned decisions are forgotten (memory stays bounded). Fails before.
     */
    @Test
    void shouldFenceATimestampNeverSeenHereThatItsCoordinatorHadOpenWhenItForgotLaterDecisions() {
        backups.remembered = 1;
        final long t100 = AurogonTimestamp.pack(100, 1, 2);
        final long t101 = AurogonTimestamp.pack(101, 1, 2);
        final long t102 = AurogonTimestamp.pack(102, 1, 2);
        assertThat(backups.replicate(t101, t100, TXN, MASK, 1, 7, 1, 8, 0, new byte[8])).isEqualTo(Backups.OK);
        assertThat(backups.apply(t101)).isEqualTo(Backups.OK);
        assertThat(backups.replicate(t102, t100, TXN + 1, MASK, 1, 7, 2, 8, 0, new byte[8])).isEqualTo(Backups.OK);
        assertThat(backups.apply(t102)).isEqualTo(Backups.OK); // 101 past the remembered one, kept: low-water 100
        assertThat(backups.holds(t100)).as("never seen, open at its coordinator: fenced")
            .isEqualTo(new Backups.Holding(Backups.ABORTED, 0, 0, 0));
        assertThat(backups.holds(t101).state()).as("kept above the low-water").isEqualTo(Backups.COMMITTED);
        assertThat(backups.discard(t101)).as("never decided again").isEqualTo(Backups.FENCED);
        assertThat(backups.pinned()).as("101 and 102, past the one remembered").isEqualTo(2);
        // A later attempt of C says everything below it is finished; other decisions push the pinned ones out.
        final long t200 = AurogonTimestamp.pack(200, 1, 2);
        assertThat(backups.replicate(t200, t200, TXN + 2, MASK, 1, 7, 3, 8, 0, new byte[8])).isEqualTo(Backups.OK);
        for (int i = 0; i < 64; i++) { // another coordinator's, each finished by its next
            final long t = AurogonTimestamp.pack(1_000 + i, 3, 0);
            backups.replicate(t, t, TXN + 3 + i, MASK, 1, 7, 4, 8, 0, new byte[8]);
            backups.discard(t);
        }
        assertThat(backups.pinned()).isZero();
        assertThat(backups.holds(t101).state()).as("forgotten, not fenced anew").isEqualTo(Backups.FORGOTTEN);
        assertThat(backups.apply(t101)).isEqualTo(Backups.FORGOTTEN);
    }

    @Test
    void shouldSuspectATransactionHeldPastTheLeaseOnlyWhileItsCoordinatorIsSilent() {
        backups.replicate(TS, TS, TXN, MASK, 1, 7, 1, 8, 0, new byte[8]);
        assertThat(backups.suspect()).isZero();
        silent = false;
        later.remove(0).run(); // the lease ends while the coordinator still talks: looked at again later
        assertThat(backups.suspect()).isZero();
        silent = true;
        later.remove(0).run();
        assertThat(backups.suspect()).isEqualTo(TS);
        backups.discard(TS);
        assertThat(backups.suspect()).isZero();
        assertThat(backups.undecided()).isZero();
    }

    @Test
    void shouldAnswerParkedReadsOrphanAndReportEachWriteOnceToRecoveries() {
        final List<Runnable> timers = new ArrayList<>();
        final Participant p = new Participant(new Participant.Backing() {
            @Override
            public byte[] load(final int table, final long key, final long[] version) {
                version[0] = 1;
                return new byte[8];
            }

            @Override
            public boolean hasTable(final int table) {
                return true;
            }

            @Override
            public void committed(final int table, final long key, final long wts, final byte[] value) {
            }
        }, (delay, task) -> timers.add(task), Participant.Deferral.OFF);
        p.orphans(1_000, ts -> true);
        final List<String> answers = new ArrayList<>();
        assertThat(p.install(7, 1, TS)).isEqualTo(Participant.OK);
        p.read(7, 1, TS + 10, 0, (status, wts, value) -> answers.add(status + "@" + wts));
        assertThat(answers).as("parked on the pending version").isEmpty();
        timers.remove(0).run(); // the lease ends: a suspect
        assertThat(answers).containsExactly(Participant.ORPHAN + "@" + TS);
        assertThat(p.suspect()).isEqualTo(TS);
        assertThat(p.suspectsAt(TS)).hasSize(1);
        p.read(7, 1, TS + 20, 0, (status, wts, value) -> answers.add(status + "@" + wts));
        assertThat(answers).hasSize(2).last().isEqualTo(Participant.ORPHAN + "@" + TS);
        assertThat(p.commit(7, 1, TS, new byte[8], true)).isEqualTo(Participant.OK);
        assertThat(p.suspect()).isZero();
        assertThat(p.commit(7, 1, TS, new byte[8], true)).isEqualTo(Participant.NOT_PENDING);
        // Committed by its coordinator: the first recovery to find it reports it, later ones do not.
        p.install(7, 2, TS);
        p.commit(7, 2, TS, new byte[8]);
        assertThat(p.seenByRecovery(7, 2, TS)).isEqualTo(Participant.FIRST_SEEN);
        assertThat(p.seenByRecovery(7, 2, TS)).isEqualTo(Participant.NOT_PENDING);
        assertThat(p.violation()).isNull();
    }
}
