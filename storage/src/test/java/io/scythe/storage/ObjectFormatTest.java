package io.scythe.storage;

import io.scythe.fabric.CostModel;
import io.scythe.fabric.FabricOptions;
import io.scythe.fabric.local.LocalFabric;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Per-table storage formats: given at creation, and a word written outside one is found. */
class ObjectFormatTest {
    private static final ObjectFormat CAS_ONLY = new ObjectFormat("cas-only",
        List.of(new ObjectFormat.Word("cas_lock", ObjectLayout.CAS_LOCK_OFFSET, 8)));
    private final LocalFabric fabric = new LocalFabric(new FabricOptions().costModel(CostModel.zero()));

    @AfterEach
    void tearDown() {
        fabric.close();
    }

    @Test
    void shouldGiveEachTableTheFormatItsSchemaIsGivenAndFindAWordWrittenOutsideIt() {
        final LogDb db = new LogDb(fabric.attachNow("mn0"));
        final Table before = db.create(TableSchema.fixed(1, "before", 8, 16));
        db.objectFormat(schema -> schema.name().equals("locked") ? ObjectFormat.FULL : CAS_ONLY);
        final Table lean = db.create(TableSchema.fixed(2, "lean", 8, 16));
        final Table locked = db.create(TableSchema.fixed(3, "locked", 8, 16));
        assertThat(before.format()).isSameAs(ObjectFormat.FULL);
        assertThat(lean.format()).isSameAs(CAS_ONLY);
        assertThat(locked.format()).isSameAs(ObjectFormat.FULL);
        final UnsafeBuffer v = new UnsafeBuffer(new byte[8]);
        final int at = lean.offsetOf(lean.insert(7, v, 0, 8, ObjectLayout.LOADED_VERSION));
        final int full = locked.offsetOf(locked.insert(7, v, 0, 8, ObjectLayout.LOADED_VERSION));
        assertThat(ObjectFormat.strayIn(lean)).isNull();
        lean.objectMemory().putLongVolatile(at + ObjectLayout.CAS_LOCK_OFFSET, 5); // its own word
        assertThat(ObjectFormat.strayIn(lean)).isNull();
        lean.objectMemory().putLongVolatile(at + ObjectLayout.UPPER_OFFSET, 1); // a Takeout word it does not carry
        assertThat(ObjectFormat.strayIn(lean)).isEqualTo("lean@" + at + ": word@8 = 1");
        locked.objectMemory().putLongVolatile(full + ObjectLayout.UPPER_OFFSET, 1); // every word is a FULL table's
        assertThat(ObjectFormat.strayIn(locked)).isNull();
        assertThat(ObjectFormat.FULL.carries(CAS_ONLY)).isTrue();
        assertThat(CAS_ONLY.carries(ObjectFormat.FULL)).isFalse();
    }

    @Test
    void shouldRefuseWordsOutsideTheProtocolPartOrOverlapping() {
        assertThatThrownBy(() -> new ObjectFormat.Word("version", ObjectLayout.VERSION_OFFSET, 8))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("outside the protocol part");
        assertThatThrownBy(() -> new ObjectFormat("bad", List.of(new ObjectFormat.Word("a", 16, 8),
            new ObjectFormat.Word("b", 20, 8)))).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("overlap");
    }
}
