package io.scythe.txn.rcc.calvin;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The one-sided inbox's ring without a fabric (issue 18, step 3's harness): a receiver's region as plain memory, a
 * sender's WRITE as {@link CalvinInbox#frame} copied into its slot; checks the order, the published count and how a
 * restarted sender's new incarnation continues where its old one's ring stopped.
 */
class CalvinInboxRingTest {
    private static final int NODES = 3;
    private static final int FROM = 1;

    private final long base = CalvinInbox.slotsBase(NODES);
    private final UnsafeBuffer memory =
        new UnsafeBuffer(new byte[(int) (base + (long) NODES * CalvinInbox.SLOTS * CalvinInbox.SLOT_BYTES)]);
    private final long[] consumed = new long[NODES];
    private final List<Long> delivered = new ArrayList<>();

    /** The sender's one WRITE of message {@code seq}, carrying {@code value}. */
    private void write(final long seq, final long value) {
        final UnsafeBuffer payload = new UnsafeBuffer(new byte[8]);
        payload.putLong(0, value);
        final UnsafeBuffer slot = CalvinInbox.frame(seq, 0x77, payload);
        memory.putBytes((int) CalvinInbox.slotOffset(base, FROM, seq), slot, 0, slot.capacity());
    }

    private int poll() {
        return CalvinInbox.consume(memory, base, FROM, consumed, (from, type, in) -> {
            assertThat(from).isEqualTo(FROM);
            assertThat(type).isEqualTo(0x77);
            delivered.add(in.u64());
        });
    }

    @Test
    void shouldContinueADeadSendersRingWhereItsOldIncarnationStopped() {
        for (long seq = 1; seq <= 3; seq++) {
            write(seq, 100 + seq);
        }
        assertThat(poll()).isEqualTo(3);
        write(4, 104); // the old incarnation's late words, landed before it was fenced
        write(5, 105);

        // JOIN at the receiver: the ring polled dry, the late words dropped, the count answered
        assertThat(CalvinInbox.consume(memory, base, FROM, consumed, null)).isEqualTo(2);
        assertThat(consumed[FROM]).isEqualTo(5);
        assertThat(memory.getLong(8 * FROM)).as("the count the sender READs").isEqualTo(5);
        assertThat(delivered).containsExactly(101L, 102L, 103L);

        // the new incarnation numbers on from 5: a whole ring's worth, wrapping over the old one's slots
        for (long seq = 6; seq < 6 + CalvinInbox.SLOTS; seq++) {
            write(seq, 1_000 + seq);
        }
        assertThat(poll()).isEqualTo(CalvinInbox.SLOTS);
        assertThat(delivered).hasSize(3 + CalvinInbox.SLOTS);
        for (int i = 0; i < CalvinInbox.SLOTS; i++) {
            assertThat(delivered.get(3 + i)).isEqualTo(1_006L + i);
        }
        assertThat(memory.getLong(8 * FROM)).isEqualTo(5 + CalvinInbox.SLOTS);
        assertThat(poll()).isZero();
    }

    @Test
    void shouldNotDeliverANewIncarnationThatNumbersItsMessagesFromOneAgain() {
        for (long seq = 1; seq <= 5; seq++) {
            write(seq, seq);
        }
        assertThat(poll()).isEqualTo(5);
        write(1, 42); // a restart that forgot the old ring: slot 0 again, numbered 1
        write(2, 43);
        assertThat(poll()).as("the receiver waits for message 6 in slot 5").isZero();
        assertThat(delivered).containsExactly(1L, 2L, 3L, 4L, 5L);
    }
}
