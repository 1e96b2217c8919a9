package io.scythe.codec;

import io.vertx.core.buffer.Buffer;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class KryoCodecTest {
    enum Color { RED, GREEN }

    record Item(String name, long value, Color color) {
    }

    record Order(long id, List<Item> items, byte[] blob) {
    }

    record Unregistered(int x) {
    }

    @Test
    void shouldRoundTripRecordsWithNestedListsAndEnumsThroughTheWireForm() {
        KryoCodec.registerNested(Item.class, Color.class);
        final KryoCodec<Order> codec = KryoCodec.of(Order.class);
        final Order order = new Order(7, List.of(new Item("a", 1, Color.RED), new Item("b", -2, Color.GREEN)),
            new byte[] {1, 2, 3});
        final Buffer wire = Buffer.buffer().appendString("prefix");
        codec.encodeToWire(wire, order);
        final Order decoded = codec.decodeFromWire(6, wire);
        assertThat(decoded.id()).isEqualTo(7);
        assertThat(decoded.items()).containsExactlyElementsOf(order.items());
        assertThat(decoded.blob()).containsExactly(1, 2, 3);
        assertThat(codec.transform(order)).isSameAs(order);
    }

    @Test
    void shouldRefuseMalformedBytesWithAClearError() {
        KryoCodec.registerNested(Item.class, Color.class);
        final KryoCodec<Order> codec = KryoCodec.of(Order.class);
        assertThatThrownBy(() -> codec.decode(new byte[] {(byte) 0xff, (byte) 0xff, 1, 2, 3}))
            .isInstanceOf(MalformedMessageException.class).hasMessageContaining(Order.class.getName());
        final Buffer liar = Buffer.buffer().appendInt(1 << 30).appendBytes(new byte[8]);
        assertThatThrownBy(() -> codec.decodeFromWire(0, liar)).isInstanceOf(MalformedMessageException.class)
            .hasMessageContaining("bad length");
        // A valid encoding of another registered type is not an Order.
        final byte[] item = KryoCodec.of(Item.class).encode(new Item("x", 1, Color.RED));
        assertThatThrownBy(() -> codec.decode(item)).isInstanceOf(MalformedMessageException.class)
            .hasMessageContaining("expected");
    }

    @Test
    void shouldRefuseToWriteAnUnregisteredNestedType() {
        final KryoCodec<Object[]> codec = KryoCodec.of(Object[].class);
        assertThatThrownBy(() -> codec.encode(new Object[] {new Unregistered(1)}))
            .hasMessageContaining("Unregistered");
    }

    @Test
    void shouldDeriveStableIdsFromClassNames() {
        assertThat(KryoCodec.idOf(Item.class)).isEqualTo(KryoCodec.idOf(Item.class)).isGreaterThanOrEqualTo(100);
        assertThat(KryoCodec.idOf(Item.class)).isNotEqualTo(KryoCodec.idOf(Order.class));
    }
}
