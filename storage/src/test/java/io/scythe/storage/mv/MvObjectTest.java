package io.scythe.storage.mv;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;

import static io.scythe.storage.mv.MvSlotDescriptor.ABORTED;
import static io.scythe.storage.mv.MvSlotDescriptor.COMMITTED;
import static io.scythe.storage.mv.MvSlotDescriptor.PENDING;
import static io.scythe.storage.mv.MvSlotDescriptor.head;
import static org.assertj.core.api.Assertions.assertThat;

/** The rules on an image of one object, as a compute node applies them to what a READ brought back. */
class MvObjectTest {
    private static final int SLOTS = 4;
    private static final int VALUE_BYTES = 16;
    private final UnsafeBuffer image = new UnsafeBuffer(new byte[MvObjectDescriptor.objectBytes(SLOTS, VALUE_BYTES)]);
    private final MvObject view = new MvObject(SLOTS, VALUE_BYTES).wrap(image, 0);

    private void slot(final int slot, final int state, final long wts) {
        final UnsafeBuffer value = new UnsafeBuffer(new byte[VALUE_BYTES]);
        value.putLong(0, wts);
        view.fillSlot(slot, 5, value, 0, VALUE_BYTES, state == COMMITTED ? head(COMMITTED, wts) : 0);
        image.putLong(view.headAt(slot), head(state, wts));
    }

    @Test
    void shouldLayOutTheObjectAsDrawn() {
        assertThat(MvObjectDescriptor.LATCH_OFFSET).isEqualTo(8);
        assertThat(MvObjectDescriptor.KEY_OFFSET).isEqualTo(16);
        assertThat(MvObjectDescriptor.SLOTS_OFFSET).isEqualTo(24);
        assertThat(MvSlotDescriptor.OWNER_OFFSET).isEqualTo(8);
        assertThat(MvSlotDescriptor.VALUE_LENGTH_OFFSET).isEqualTo(16);
        assertThat(MvSlotDescriptor.VALUE_OFFSET).isEqualTo(24);
        assertThat(MvSlotDescriptor.slotBytes(13)).isEqualTo(24 + 16 + 8);
        assertThat(MvObjectDescriptor.objectBytes(4, 40)).as("RCC's 4 slots, YCSB values").isEqualTo(24 + 4 * 72 + 16);
        assertThat(view.overflowWtsAt()).isEqualTo(24 + 4 * 48);
        assertThat(MvSlotDescriptor.state(head(ABORTED, 42))).isEqualTo(ABORTED);
        assertThat(MvSlotDescriptor.wts(head(ABORTED, MvSlotDescriptor.MAX_WTS))).isEqualTo(MvSlotDescriptor.MAX_WTS);
    }

    @Test
    void shouldFindTheNewestLiveVersionAtOrBelowTheTimestamp() {
        slot(0, COMMITTED, 10);
        slot(1, ABORTED, 15);
        slot(2, COMMITTED, 20);
        slot(3, PENDING, 30);
        assertThat(view.find(9)).isEqualTo(MvObject.NONE);
        assertThat(view.find(10)).isEqualTo(0);
        assertThat(view.find(17)).as("a rolled-back version is invisible").isEqualTo(0);
        assertThat(view.find(29)).isEqualTo(2);
        assertThat(view.find(30)).isEqualTo(3);
        assertThat(MvSlotDescriptor.state(view.foundHead())).isEqualTo(PENDING);
        assertThat(view.find(30 - 1)).as("Aurogon reads wts < ts: find(ts - 1)").isEqualTo(2);
        assertThat(view.chainToSearch()).as("no chain").isZero();
    }

    @Test
    void shouldPassOverATornCommittedSlotAndLookInTheChain() {
        slot(0, COMMITTED, 10);
        slot(1, COMMITTED, 20);
        image.putLong(view.tailAt(1), 0); // the memory node is recycling it: tail zeroed first
        image.putLong(view.overflowWtsAt(), 20);
        image.putLong(view.overflowAt(), 0x1000_0000_0040L);
        assertThat(view.find(25)).isEqualTo(0);
        assertThat(view.chainToSearch()).as("20 may be in the chain now").isEqualTo(0x1000_0000_0040L);
        image.putLong(view.tailAt(1), head(COMMITTED, 20));
        assertThat(view.find(25)).isEqualTo(1);
        assertThat(view.chainToSearch()).as("20 is no newer than the slot's").isZero();
        assertThat(view.find(5)).isEqualTo(MvObject.NONE);
        assertThat(view.chainToSearch()).as("older than every slot").isEqualTo(0x1000_0000_0040L);
    }

    @Test
    void shouldApplyTimestampOrderingToInstalls() {
        slot(0, COMMITTED, 10);
        slot(1, PENDING, 30);
        slot(2, ABORTED, 40);
        image.putLong(MvObjectDescriptor.RTS_OFFSET, 25);
        assertThat(view.installSlot(25, false)).isEqualTo(MvStatus.TOO_LATE);
        assertThat(view.installSlot(20, false)).isEqualTo(MvStatus.TOO_LATE);
        assertThat(view.installSlot(30, false)).isEqualTo(MvStatus.DUPLICATE);
        assertThat(view.installSlot(26, false)).as("below a pending version, above rts").isEqualTo(2);
        assertThat(view.installSlot(26, true)).isEqualTo(MvStatus.PENDING_EXISTS);
        assertThat(view.installSlot(40, false)).as("a rolled-back slot is free, its wts too").isEqualTo(2);
        slot(2, COMMITTED, 50);
        assertThat(view.installSlot(45, false)).isEqualTo(MvStatus.SUPERSEDED);
        assertThat(view.installSlot(60, false)).isEqualTo(3);
        slot(3, COMMITTED, 60);
        assertThat(view.installSlot(70, false)).isEqualTo(MvStatus.FULL);
    }

    @Test
    void shouldMoveOutOnlyTheOldestVersionWhenItIsCommittedAndNotTheNewest() {
        slot(0, COMMITTED, 10);
        assertThat(view.evictable()).as("the only committed version").isEqualTo(-1);
        slot(1, COMMITTED, 20);
        slot(2, PENDING, 30);
        assertThat(view.evictable()).isEqualTo(0);
        slot(0, PENDING, 15);
        assertThat(view.evictable()).as("the oldest is pending").isEqualTo(-1);
        assertThat(view.pendingCount()).isEqualTo(2);
        assertThat(view.freeSlot()).isEqualTo(3);
        assertThat(view.newestCommittedAtOrBelow(100)).isEqualTo(1);
    }

    @Test
    void shouldFindWithoutAllocating() {
        slot(0, COMMITTED, 10);
        slot(1, COMMITTED, 20);
        slot(2, PENDING, 30);
        final com.sun.management.ThreadMXBean threads =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long sum = 0;
        for (int i = 0; i < 20_000; i++) { // warm-up, so that class loading and compilation are behind us
            sum += view.find(i & 63) + view.chainToSearch();
        }
        final long before = threads.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < 100_000; i++) {
            sum += view.find(i & 63) + view.chainToSearch();
        }
        final long allocated = threads.getCurrentThreadAllocatedBytes() - before;
        assertThat(sum).isNotZero();
        assertThat(allocated).as("bytes allocated by 100k lookups on an image").isLessThan(1024);
    }
}
