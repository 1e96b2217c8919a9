package io.scythe.codec;

import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.KryoException;
import com.esotericsoftware.kryo.Serializer;
import com.esotericsoftware.kryo.Registration;
import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import com.esotericsoftware.kryo.serializers.CollectionSerializer;
import com.esotericsoftware.kryo.serializers.MapSerializer;

import java.lang.reflect.Array;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * Serializers that check every length and count read from the wire against the bytes left in the message before
 * they allocate anything. Kryo's own ones allocate first ({@code new char[n]}, {@code new long[n]},
 * {@code new ArrayList(n)}), so a corrupt or hostile 5-byte count made a 16 GB allocation and an
 * {@link OutOfMemoryError} that no handler catches. Every element costs at least one byte on the wire, so a count
 * above the bytes left is malformed whatever the element type.
 */
final class BoundedSerializers {
    /** Deepest nesting a message may have; deeper is malformed (not a stack overflow). */
    static final int MAX_DEPTH = 32;

    private BoundedSerializers() {
    }

    /**
     * A Kryo that reads registered classes only, by id. A class written by name (what Kryo writes for an unregistered
     * class, which a Kryo with registration required never does) is malformed, refused before its name is read: the
     * name's length comes from the bytes, and DefaultClassResolver allocates it first (a CN ran out of heap on one
     * message of {@code scythe fuzz}).
     */
    static Kryo newKryo() {
        return new Kryo(new RegisteredOnly(), null);
    }

    private static final class RegisteredOnly extends com.esotericsoftware.kryo.util.DefaultClassResolver {
        @Override
        protected Registration readName(final Input input) {
            throw new KryoException("a class given by name: only registered classes, by id, are accepted");
        }
    }

    /** Makes {@code kryo} bounded; call before registering the message types. */
    static void install(final Kryo kryo) {
        kryo.setMaxDepth(MAX_DEPTH);
        kryo.register(String.class).setSerializer(new StringSerializer());
    }

    /** Replaces the serializers of {@code types} (registered since {@link #install}) that read unchecked counts. */
    static void replaceUnbounded(final Kryo kryo, final Iterable<Class<?>> types) {
        for (final Class<?> type : types) {
            final Registration r = kryo.getRegistration(type);
            if (type == long[].class) {
                r.setSerializer(new LongArraySerializer());
            } else if (type == int[].class) {
                r.setSerializer(new IntArraySerializer());
            } else if (type == byte[].class) {
                r.setSerializer(new ByteArraySerializer());
            } else if (type.isArray() && !type.getComponentType().isPrimitive()) {
                r.setSerializer(new ObjectArraySerializer());
            } else if (type.getName().startsWith("java.util.ImmutableCollections$")) {
                if (List.class.isAssignableFrom(type)) {
                    r.setSerializer(new ImmutableListSerializer());
                } else if (Map.class.isAssignableFrom(type)) {
                    r.setSerializer(new ImmutableMapSerializer());
                } else {
                    throw new IllegalStateException("no bounded serializer for " + type.getName());
                }
            } else if (r.getSerializer().getClass() == CollectionSerializer.class) {
                r.setSerializer(new BoundedCollectionSerializer());
            } else if (r.getSerializer().getClass() == MapSerializer.class) {
                r.setSerializer(new BoundedMapSerializer());
            } else if (Collection.class.isAssignableFrom(type) || Map.class.isAssignableFrom(type)) {
                throw new IllegalStateException("no bounded serializer for " + type.getName() + " ("
                    + r.getSerializer().getClass().getName() + ")");
            }
        }
    }

    /** @throws KryoException when {@code count} items of at least {@code bytesEach} bytes cannot be in what is left */
    static int checkCount(final Input input, final int count, final int bytesEach, final String what) {
        if (count < 0) {
            throw new KryoException(what + ": negative count " + count);
        }
        if (input.getInputStream() == null && (long) count * bytesEach > input.limit() - input.position()) {
            throw new KryoException(what + ": count " + count + " exceeds the " + (input.limit() - input.position())
                + " bytes left in the message");
        }
        return count;
    }

    /** Null as 0, else length + 1, then the UTF-8 bytes. */
    static final class StringSerializer extends Serializer<String> {
        StringSerializer() {
            super(true, true);
        }

        @Override
        public void write(final Kryo kryo, final Output output, final String value) {
            if (value == null) {
                output.writeVarInt(0, true);
                return;
            }
            final byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
            output.writeVarInt(bytes.length + 1, true);
            output.writeBytes(bytes);
        }

        @Override
        public String read(final Kryo kryo, final Input input, final Class<? extends String> type) {
            final int n = input.readVarInt(true);
            if (n == 0) {
                return null;
            }
            return new String(input.readBytes(checkCount(input, n - 1, 1, "string")), StandardCharsets.UTF_8);
        }
    }

    static final class LongArraySerializer extends Serializer<long[]> {
        LongArraySerializer() {
            super(true, true);
        }

        @Override
        public void write(final Kryo kryo, final Output output, final long[] value) {
            if (value == null) {
                output.writeVarInt(0, true);
                return;
            }
            output.writeVarInt(value.length + 1, true);
            output.writeLongs(value, 0, value.length);
        }

        @Override
        public long[] read(final Kryo kryo, final Input input, final Class<? extends long[]> type) {
            final int n = input.readVarInt(true);
            return n == 0 ? null : input.readLongs(checkCount(input, n - 1, Long.BYTES, "long[]"));
        }
    }

    static final class IntArraySerializer extends Serializer<int[]> {
        IntArraySerializer() {
            super(true, true);
        }

        @Override
        public void write(final Kryo kryo, final Output output, final int[] value) {
            if (value == null) {
                output.writeVarInt(0, true);
                return;
            }
            output.writeVarInt(value.length + 1, true);
            output.writeInts(value, 0, value.length);
        }

        @Override
        public int[] read(final Kryo kryo, final Input input, final Class<? extends int[]> type) {
            final int n = input.readVarInt(true);
            return n == 0 ? null : input.readInts(checkCount(input, n - 1, Integer.BYTES, "int[]"));
        }
    }

    static final class ByteArraySerializer extends Serializer<byte[]> {
        ByteArraySerializer() {
            super(true, true);
        }

        @Override
        public void write(final Kryo kryo, final Output output, final byte[] value) {
            if (value == null) {
                output.writeVarInt(0, true);
                return;
            }
            output.writeVarInt(value.length + 1, true);
            output.writeBytes(value);
        }

        @Override
        public byte[] read(final Kryo kryo, final Input input, final Class<? extends byte[]> type) {
            final int n = input.readVarInt(true);
            return n == 0 ? null : input.readBytes(checkCount(input, n - 1, 1, "byte[]"));
        }
    }

    /** Elements with their class, so one serializer serves every reference array registered. */
    static final class ObjectArraySerializer extends Serializer<Object[]> {
        ObjectArraySerializer() {
            super(true, true);
        }

        @Override
        public void write(final Kryo kryo, final Output output, final Object[] value) {
            if (value == null) {
                output.writeVarInt(0, true);
                return;
            }
            output.writeVarInt(value.length + 1, true);
            for (final Object o : value) {
                kryo.writeClassAndObject(output, o);
            }
        }

        @Override
        public Object[] read(final Kryo kryo, final Input input, final Class<? extends Object[]> type) {
            final int n = input.readVarInt(true);
            if (n == 0) {
                return null;
            }
            final Object[] array = (Object[]) Array.newInstance(type.getComponentType(),
                checkCount(input, n - 1, 1, type.getSimpleName()));
            for (int i = 0; i < array.length; i++) {
                final Object element = kryo.readClassAndObject(input);
                if (element != null && !type.getComponentType().isInstance(element)) {
                    throw new KryoException(type.getSimpleName() + ": element " + i + " is a "
                        + element.getClass().getName());
                }
                array[i] = element;
            }
            return array;
        }
    }

    /** {@code List.of(...)}: count, then each element with its class. */
    static final class ImmutableListSerializer extends Serializer<List<?>> {
        ImmutableListSerializer() {
            super(false, true);
        }

        @Override
        public void write(final Kryo kryo, final Output output, final List<?> value) {
            output.writeVarInt(value.size(), true);
            for (final Object o : value) {
                kryo.writeClassAndObject(output, o);
            }
        }

        @Override
        public List<?> read(final Kryo kryo, final Input input, final Class<? extends List<?>> type) {
            final Object[] elements = new Object[checkCount(input, input.readVarInt(true), 1, "List")];
            for (int i = 0; i < elements.length; i++) {
                elements[i] = kryo.readClassAndObject(input);
            }
            return List.of(elements);
        }
    }

    /** {@code Map.of(...)}: count, then each key and value with its class. */
    static final class ImmutableMapSerializer extends Serializer<Map<?, ?>> {
        ImmutableMapSerializer() {
            super(false, true);
        }

        @Override
        public void write(final Kryo kryo, final Output output, final Map<?, ?> value) {
            output.writeVarInt(value.size(), true);
            for (final Map.Entry<?, ?> e : value.entrySet()) {
                kryo.writeClassAndObject(output, e.getKey());
                kryo.writeClassAndObject(output, e.getValue());
            }
        }

        @Override
        @SuppressWarnings("unchecked")
        public Map<?, ?> read(final Kryo kryo, final Input input, final Class<? extends Map<?, ?>> type) {
            final Map.Entry<Object, Object>[] entries =
                new Map.Entry[checkCount(input, input.readVarInt(true), 2, "Map")];
            for (int i = 0; i < entries.length; i++) {
                entries[i] = Map.entry(kryo.readClassAndObject(input), kryo.readClassAndObject(input));
            }
            return Map.ofEntries(entries);
        }
    }

    @SuppressWarnings({"rawtypes", "unchecked"})
    static final class BoundedCollectionSerializer extends CollectionSerializer<Collection> {
        @Override
        protected Collection create(final Kryo kryo, final Input input, final Class<? extends Collection> type,
                                    final int size) {
            return super.create(kryo, input, type, checkCount(input, size, 1, type.getSimpleName()));
        }
    }

    @SuppressWarnings({"rawtypes", "unchecked"})
    static final class BoundedMapSerializer extends MapSerializer<Map> {
        @Override
        protected Map create(final Kryo kryo, final Input input, final Class<? extends Map> type, final int size) {
            return super.create(kryo, input, type, checkCount(input, size, 2, type.getSimpleName()));
        }
    }
}
