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

    record Request(String name, long[] args) {
    }

    record Nest(Object[] inner) {
    }

    /** The bytes of a valid encoding, cut before its count field, then a hostile count and a few bytes. */
    private static byte[] withCount(final byte[] prefix, final int count) {
        final com.esotericsoftware.kryo.io.Output out = new com.esotericsoftware.kryo.io.Output(64);
        out.writeBytes(prefix);
        out.writeVarInt(count, true);
        out.writeBytes(new byte[16]);
        return out.toBytes();
    }

    @Test
    void shouldRefuseHostileLengthsAndCountsBeforeAllocatingAnything() {
        final KryoCodec<Request> codec = KryoCodec.of(Request.class);
        // Kryo writes a record's components by name: the class id, args (0: null), name (0: null).
        final byte[] empty = codec.encode(new Request(null, null));
        final byte[] head = java.util.Arrays.copyOf(empty, empty.length - 2);
        // A 2^31-2 element argument array, a 2^28 character name: each would allocate gigabytes if trusted.
        assertThatThrownBy(() -> codec.decode(withCount(head, Integer.MAX_VALUE)))
            .isInstanceOf(MalformedMessageException.class).hasMessageContaining("long[]").hasMessageContaining("exceeds");
        final byte[] argsThenName = java.util.Arrays.copyOf(empty, empty.length - 1);
        assertThatThrownBy(() -> codec.decode(withCount(argsThenName, 1 << 28)))
            .isInstanceOf(MalformedMessageException.class).hasMessageContaining("string").hasMessageContaining("exceeds");
        // The same through a list: ArrayList's count, and List.of's.
        KryoCodec.registerNested(Item.class, Color.class);
        final KryoCodec<Order> orders = KryoCodec.of(Order.class);
        for (final java.util.List<Item> items : List.of(new java.util.ArrayList<Item>(), List.<Item>of())) {
            final byte[] order = orders.encode(new Order(1, items, null));
            // Components by name: blob (null), id, items (its class id, then its count, last).
            final byte[] upToCount = java.util.Arrays.copyOf(order, order.length - 1);
            assertThatThrownBy(() -> orders.decode(withCount(upToCount, Integer.MAX_VALUE - 1)))
                .isInstanceOf(MalformedMessageException.class).hasMessageContaining("exceeds");
        }
        // Nesting deeper than any message has is malformed, not a stack overflow.
        final KryoCodec<Nest> nests = KryoCodec.of(Nest.class);
        final byte[] flat = nests.encode(new Nest(new Object[0])); // H, then 1 (no elements)
        final byte[] one = nests.encode(new Nest(new Object[] {new Object[0]})); // H, 2, Object[]'s id, 1
        final int h = flat.length - 1;
        final java.io.ByteArrayOutputStream deep = new java.io.ByteArrayOutputStream();
        deep.write(flat, 0, h);
        for (int i = 0; i < 10_000; i++) { // encoding refuses this depth too, so the bytes are made by hand
            deep.write(one, h, one.length - 1 - h);
        }
        deep.write(1);
        assertThatThrownBy(() -> nests.decode(deep.toByteArray())).isInstanceOf(MalformedMessageException.class)
            .hasMessageContaining("depth");
        // What is within bounds still round-trips.
        final Request ok = codec.decode(codec.encode(new Request("deposit", new long[] {3, -4})));
        assertThat(ok.name()).isEqualTo("deposit");
        assertThat(ok.args()).containsExactly(3, -4);
        assertThat(codec.decode(codec.encode(new Request(null, new long[0]))).args()).isEmpty();
    }

    /** A class given by name (class id 1) with a name of 2^28 characters: refused before the name is read. */
    @Test
    void shouldRefuseAClassGivenByNameBeforeReadingTheName() {
        final KryoCodec<Request> codec = KryoCodec.of(Request.class);
        final com.esotericsoftware.kryo.io.Output out = new com.esotericsoftware.kryo.io.Output(16);
        out.writeVarInt(1, true); // Kryo's NAME + 2: the class follows by name
        out.writeVarInt(1 << 28, true); // the name's length, as readString reads a non-ASCII string's
        out.writeBytes(new byte[8]);
        assertThatThrownBy(() -> codec.decode(out.toBytes())).isInstanceOf(MalformedMessageException.class)
            .hasMessageContaining("only registered classes");
    }

    @Test
    void shouldSurviveRandomAndMutatedBytesWithOnlyMalformedMessageErrors() {
        KryoCodec.registerNested(Item.class, Color.class);
        final KryoCodec<Order> codec = KryoCodec.of(Order.class);
        final byte[] valid = codec.encode(new Order(9, new java.util.ArrayList<>(List.of(new Item("abc", 5,
            Color.GREEN))), new byte[] {4, 5}));
        final java.util.Random random = new java.util.Random(7);
        int malformed = 0;
        for (int i = 0; i < 20_000; i++) {
            final byte[] bytes;
            if (i % 2 == 0) {
                bytes = valid.clone();
                for (int m = 1 + random.nextInt(4); m > 0; m--) {
                    bytes[random.nextInt(bytes.length)] = (byte) random.nextInt(256);
                }
            } else {
                bytes = new byte[random.nextInt(64)];
                random.nextBytes(bytes);
            }
            try {
                codec.decode(bytes);
            } catch (final MalformedMessageException expected) {
                malformed++;
            }
        }
        assertThat(malformed).isGreaterThan(10_000);
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
